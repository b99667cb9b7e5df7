# pelab: build ./pelab, run the tests, benchmarks and the demo.
CC      ?= gcc
ARCH    := $(shell $(CC) -print-multiarch 2>/dev/null)
# The OpenMP build of OpenBLAS shares one thread pool with pelab's own OpenMP loops;
# Debian's default pthread build fights it for the cores.
BLAS_INC ?= /usr/include/$(ARCH)/openblas-openmp
BLAS_LIB ?= /usr/lib/$(ARCH)/openblas-openmp
CFLAGS  ?= -O3 -march=native
CFLAGS  += -std=gnu11 -Wall -Wextra -fopenmp -I$(BLAS_INC) -MMD -MP
LDLIBS  += -L$(BLAS_LIB) -Wl,-rpath,$(BLAS_LIB) -lopenblas -lm -fopenmp

LIB_SRC  := $(wildcard model/*.c model/pos/*.c train/*.c infer/*.c data/*.c tools/*.c)
LIB_OBJ  := $(LIB_SRC:%.c=build/%.o)
TEST_SRC := $(wildcard tests/*.c)
TEST_OBJ := $(TEST_SRC:%.c=build/%.o)

all: pelab

pelab: build/pelab.o $(LIB_OBJ)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

build/tests/run_tests: $(TEST_OBJ) $(LIB_OBJ)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

build/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

# Two threads: the machine's cores. Tests are deterministic at any thread count.
test: build/tests/run_tests pelab
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-2} ./build/tests/run_tests

bench: pelab
	./pelab bench

demo: pelab
	./pelab demo

# AddressSanitizer + UBSan build of the tests (slow; for debugging)
sanitize:
	$(MAKE) clean
	$(MAKE) test CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer" \
	    LDLIBS="-fsanitize=address,undefined"

clean:
	rm -rf build pelab

.PHONY: all test bench demo sanitize clean
-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) build/pelab.o.d build/pelab.d
