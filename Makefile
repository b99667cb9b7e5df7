# pelab: build ./pelab, run the tests, benchmarks and the demo.
CC       ?= gcc
ARCH     := $(shell $(CC) -print-multiarch 2>/dev/null)
# The OpenMP build of OpenBLAS shares one thread pool with pelab's own OpenMP loops;
# Debian's default pthread build fights it for the cores.
BLAS_INC ?= /usr/include/$(ARCH)/openblas-openmp
BLAS_LIB ?= /usr/lib/$(ARCH)/openblas-openmp
OPTFLAGS ?= -O3 -march=native
BUILD    ?= build
BIN      ?= pelab
ALL_CFLAGS := $(OPTFLAGS) $(CFLAGS) -std=gnu11 -Wall -Wextra -fopenmp -I$(BLAS_INC) -MMD -MP
ALL_LDLIBS := $(OPTFLAGS) $(LDFLAGS) -L$(BLAS_LIB) -Wl,-rpath,$(BLAS_LIB) -lopenblas -lm -fopenmp

LIB_SRC  := $(wildcard model/*.c model/pos/*.c train/*.c infer/*.c data/*.c tools/*.c)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(wildcard tests/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)

all: $(BIN)

$(BIN): $(BUILD)/pelab.o $(LIB_OBJ)
	$(CC) -o $@ $^ $(ALL_LDLIBS)

$(BUILD)/tests/run_tests: $(TEST_OBJ) $(LIB_OBJ)
	$(CC) -o $@ $^ $(ALL_LDLIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# Two threads: the machine's cores. The CLI tests run ./$(BIN).
test: $(BUILD)/tests/run_tests $(BIN)
	PELAB_BIN=./$(BIN) OMP_NUM_THREADS=$${OMP_NUM_THREADS:-2} ./$(BUILD)/tests/run_tests

bench: $(BIN)
	./$(BIN) bench

# pelab against the PyTorch reference (tools/bench/); skipped with a message when torch is missing
bench-torch: $(BIN)
	python3 tools/bench/compare.py --pelab ./$(BIN)

demo: $(BIN)
	./$(BIN) demo

# The tests under AddressSanitizer + UBSan, in their own build directory
sanitize:
	$(MAKE) test OPTFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer" BUILD=build-san BIN=build-san/pelab

# coverage-guided fuzzing of every loader and parser (clang + libFuzzer, ASan + UBSan), each
# harness FUZZ_SECONDS seconds; tests/fuzz/README.md
FUZZ_SECONDS ?= 20
fuzz:
	$(MAKE) -f tests/fuzz/fuzz.mk run FUZZ_SECONDS=$(FUZZ_SECONDS)

clean:
	rm -rf build build-san build-fuzz pelab

.PHONY: all test bench bench-torch demo sanitize fuzz clean
-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BUILD)/pelab.d
