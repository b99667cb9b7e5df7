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
# oneDNN (libdnnl-dev) runs the bf16 products of --precision bf16; without it pelab still builds,
# and bf16 is refused with the reason
DNNL_H   ?= $(wildcard /usr/include/oneapi/dnnl/dnnl.h)
ifneq ($(DNNL_H),)
DNNL_LIBS := -ldnnl
else
DNNL_DEF  := -DPELAB_NO_DNNL
endif
ALL_CFLAGS := $(OPTFLAGS) $(CFLAGS) $(DNNL_DEF) -std=gnu11 -Wall -Wextra -fopenmp -I$(BLAS_INC) -MMD -MP
# jansson (libjansson-dev) parses JSON (core/json.c), libpng (libpng-dev) writes PNGs (io/png.c)
ALL_LDLIBS := $(OPTFLAGS) $(LDFLAGS) -L$(BLAS_LIB) -Wl,-rpath,$(BLAS_LIB) -lopenblas $(DNNL_LIBS) -ljansson -lpng -lgsl -lm -fopenmp

LIB_SRC  := $(wildcard core/*.c model/*.c model/pos/*.c data/*.c io/*.c train/*.c infer/*.c tools/*.c)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(wildcard tests/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)
# the fuzz harnesses with a plain main, so the tests replay tests/fuzz/regress/ (test_regress.c)
HARNESSES := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
REPLAY    := $(HARNESSES:%=$(BUILD)/replay/fuzz_%)

all: $(BIN)

$(BIN): $(BUILD)/pelab.o $(LIB_OBJ)
	$(CC) -o $@ $^ $(ALL_LDLIBS)

$(BUILD)/tests/run_tests: $(TEST_OBJ) $(LIB_OBJ)
	$(CC) -o $@ $^ $(ALL_LDLIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/replay/fuzz_%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/tests/fuzz/replay_main.o $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(ALL_LDLIBS)

# Two threads: the machine's cores. The CLI tests run ./$(BIN).
test: $(BUILD)/tests/run_tests $(BIN) $(REPLAY)
	PELAB_BIN=./$(BIN) PELAB_REPLAY=./$(BUILD)/replay OMP_NUM_THREADS=$${OMP_NUM_THREADS:-2} ./$(BUILD)/tests/run_tests

bench: $(BIN)
	./$(BIN) bench

# pelab against the PyTorch reference (tools/bench/); skipped with a message when torch is missing
bench-torch: $(BIN)
	python3 tools/bench/compare.py --pelab ./$(BIN)

demo: $(BIN)
	./$(BIN) demo

# The tests under AddressSanitizer + UBSan, in their own build directory (gcc leaves
# float-cast-overflow out of -fsanitize=undefined: a NaN cast to int is UB all the same)
sanitize:
	$(MAKE) test OPTFLAGS="-O1 -g -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer" BUILD=build-san BIN=build-san/pelab

# coverage-guided fuzzing of every loader and parser (clang + libFuzzer, ASan + UBSan), each
# harness FUZZ_SECONDS seconds; tests/fuzz/README.md
FUZZ_SECONDS ?= 20
fuzz:
	$(MAKE) -f tests/fuzz/fuzz.mk run FUZZ_SECONDS=$(FUZZ_SECONDS)

clean:
	rm -rf build build-san build-fuzz pelab

.PHONY: all test bench bench-torch demo sanitize fuzz clean
# keep the harness objects make builds on the way to $(REPLAY)
.SECONDARY: $(HARNESSES:%=$(BUILD)/tests/fuzz/fuzz_%.o) $(BUILD)/tests/fuzz/replay_main.o
-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BUILD)/pelab.d $(HARNESSES:%=$(BUILD)/tests/fuzz/fuzz_%.d)
