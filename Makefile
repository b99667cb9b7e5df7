# pelab: build ./pelab, run the tests, benchmarks and the demo.
# Platforms (docs/PLATFORMS.md): Debian/Ubuntu x86-64 and arm64 (also cross: make CC=aarch64-linux-gnu-gcc),
# Fedora-style paths, macOS with Homebrew (Apple clang + libomp). BLAS=openblas (default everywhere) or
# BLAS=accelerate (macOS). Libraries come from pkg-config where it is installed, else from -lNAME.
# make's built-in CC is cc: gcc on Debian, Apple clang on macOS
OS       := $(shell uname -s)
# the machine the compiler builds for (a cross compiler's, not this one's), and Debian's multiarch
# triple for it (x86_64-linux-gnu, aarch64-linux-gnu; empty off Debian)
TARGET   := $(firstword $(subst -, ,$(shell $(CC) -dumpmachine 2>/dev/null)))
ARCH     := $(shell $(CC) -print-multiarch 2>/dev/null)
HOST     := $(subst arm64,aarch64,$(shell uname -m))
CROSS    := $(if $(filter $(HOST),$(subst arm64,aarch64,$(TARGET))),,yes)
# the CPU's own instructions where the compiler takes a "native" flag (gcc and clang on x86: -march;
# clang on arm64 takes only -mcpu); none in a cross build, whose CPU is not this one
NATIVE   := $(if $(CROSS),,$(shell for f in -march=native -mcpu=native; do $(CC) $$f -x c -c -o /dev/null /dev/null 2>/dev/null && { echo $$f; break; }; done))
OPTFLAGS ?= -O3 $(NATIVE)
BUILD    ?= build
BIN      ?= pelab
BLAS     ?= openblas
comma    := ,

# Libraries with a pkg-config file, by their pkg-config names: adding one is adding its name here.
# Without pkg-config (or without the .pc), -lNAME ("lib" dropped: libpng -> -lpng) on the default paths.
# jansson parses JSON (core/json.c), libpng writes PNGs (io/png.c), GSL gives the t distribution
# (core/stats.c), PCRE2 and ICU run tokenizer.json regexes and Unicode normalizers (data/hf_tok*.c)
PKGS       := jansson libpng gsl libpcre2-8 icu-uc
PKG_CONFIG ?= pkg-config
# a cross build reads the target's .pc files (Debian: /usr/lib/<triple>/pkgconfig)
ifneq ($(CROSS),)
PKG_ENV    := PKG_CONFIG_LIBDIR=/usr/lib/$(ARCH)/pkgconfig:/usr/share/pkgconfig
endif
HAVE_PKGS  := $(shell $(PKG_ENV) $(PKG_CONFIG) --exists $(PKGS) 2>/dev/null && echo yes)
ifneq ($(HAVE_PKGS),)
PKG_CFLAGS := $(shell $(PKG_ENV) $(PKG_CONFIG) --cflags $(PKGS))
# GSL's own cblas left out: OpenBLAS provides the one cblas in the process
PKG_LIBS   := $(filter-out -lgslcblas,$(shell $(PKG_ENV) $(PKG_CONFIG) --libs $(PKGS)))
else
PKG_LIBS   := $(patsubst %,-l%,$(subst icu-uc,icuuc,$(patsubst lib%,%,$(PKGS)))) # ICU's library is libicuuc
endif

ifeq ($(OS),Darwin)
# Homebrew (/opt/homebrew on Apple Silicon, /usr/local on Intel): its include and lib folders, and
# libomp, which is keg-only: Apple clang compiles OpenMP only as -Xpreprocessor -fopenmp plus -lomp
BREW       ?= $(shell brew --prefix 2>/dev/null)
LIBOMP     ?= $(shell brew --prefix libomp 2>/dev/null)
OMP_CFLAGS ?= -Xpreprocessor -fopenmp -I$(LIBOMP)/include
OMP_LIBS   ?= -L$(LIBOMP)/lib -Wl,-rpath,$(LIBOMP)/lib -lomp
PLATFORM_CFLAGS := $(if $(BREW),-I$(BREW)/include)
PLATFORM_LIBS   := $(if $(BREW),-L$(BREW)/lib)
else
OMP_CFLAGS ?= -fopenmp
OMP_LIBS   ?= -fopenmp
endif

# BLAS: the cblas products, plus what only OpenBLAS offers behind core/blas.h
ifeq ($(BLAS),openblas)
ifeq ($(OS),Darwin)
# Homebrew's openblas is keg-only (it would shadow Accelerate)
BLAS_INC ?= $(shell brew --prefix openblas 2>/dev/null)/include
BLAS_LIB ?= $(shell brew --prefix openblas 2>/dev/null)/lib
else ifneq ($(wildcard /usr/include/$(ARCH)/openblas-openmp/cblas.h),)
# Debian/Ubuntu: the OpenMP build explicitly, whatever update-alternatives says: it shares one thread
# pool with pelab's own OpenMP loops, where Debian's default pthread build fights it for the cores
BLAS_INC ?= /usr/include/$(ARCH)/openblas-openmp
BLAS_LIB ?= /usr/lib/$(ARCH)/openblas-openmp
else ifneq ($(wildcard /usr/include/openblas/cblas.h),)
# Fedora (openblas-devel): libopenblaso is its OpenMP build
BLAS_INC ?= /usr/include/openblas
OPENBLAS ?= openblaso
endif
OPENBLAS    ?= openblas
BLAS_CFLAGS := $(if $(BLAS_INC),-I$(BLAS_INC))
BLAS_LIBS   := $(if $(BLAS_LIB),-L$(BLAS_LIB) -Wl$(comma)-rpath$(comma)$(BLAS_LIB)) -l$(OPENBLAS)
else ifeq ($(BLAS),accelerate)
BLAS_CFLAGS := -DPELAB_BLAS_ACCELERATE -DACCELERATE_NEW_LAPACK
BLAS_LIBS   := -framework Accelerate
else
$(error BLAS=$(BLAS): expected openblas or accelerate)
endif

# oneDNN (libdnnl-dev) runs the bf16 products of --precision bf16, which need x86-64 with AVX512_BF16
# or AMX-BF16: looked for on x86-64 only. Without it pelab still builds, and bf16 is refused with the reason
ifeq ($(TARGET),x86_64)
DNNL_H   ?= $(wildcard /usr/include/oneapi/dnnl/dnnl.h $(BREW)/include/oneapi/dnnl/dnnl.h)
endif
ifneq ($(DNNL_H),)
DNNL_LIBS := -ldnnl
else
DNNL_DEF  := -DPELAB_NO_DNNL
endif

# -fno-math-errno: sqrtf and friends need not set errno (nothing reads it after a math call), so the
# compilers vectorize loops that call them (AdamW, the norms). -fno-trapping-math: no code reads the
# floating-point exception flags, so gcc may compute both arms of a select; without it, gcc
# vectorizes fast_expf's clamps (model/fastmath.h: softmax, SwiGLU) only where AVX-512's masks
# can hide a trap, and an AVX2 build ran them one element at a time. No operation is reordered
# (clang's default is the same); newly vectorized code may fuse a*b+c into an FMA where the scalar
# code did not (gcc's default -ffp-contract=fast): FIRE's MLP on AVX2 builds, rounding-level.
ALL_CFLAGS := $(OPTFLAGS) $(CFLAGS) $(DNNL_DEF) -std=gnu11 -fno-math-errno -fno-trapping-math -Wall -Wextra $(OMP_CFLAGS) $(BLAS_CFLAGS) $(PKG_CFLAGS) \
              $(PLATFORM_CFLAGS) -MMD -MP
ALL_LDLIBS := $(OPTFLAGS) $(LDFLAGS) $(PLATFORM_LIBS) $(BLAS_LIBS) $(DNNL_LIBS) $(PKG_LIBS) -lm $(OMP_LIBS)

LIB_SRC  := $(wildcard core/*.c model/*.c model/pos/*.c data/*.c io/*.c train/*.c infer/*.c lab/*.c tools/*.c)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(wildcard tests/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)
# the fuzz harnesses with a plain main, so the tests replay tests/fuzz/regress/ (test_regress.c)
HARNESSES := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
REPLAY    := $(HARNESSES:%=$(BUILD)/replay/fuzz_%)

# the compiler and flags of the objects in $(BUILD): a change (make CC=clang test after a gcc build)
# rebuilds them rather than linking one compiler's objects into the other's tests
FLAGS_STAMP := $(BUILD)/.flags
FLAGS_NOW   := $(strip $(CC) $(ALL_CFLAGS) $(ALL_LDLIBS))
ifneq ($(FLAGS_NOW),$(strip $(shell cat $(FLAGS_STAMP) 2>/dev/null)))
$(shell mkdir -p $(BUILD) && echo '$(FLAGS_NOW)' > $(FLAGS_STAMP))
endif

all: $(BIN)

$(BIN): $(BUILD)/pelab.o $(LIB_OBJ)
	$(CC) -o $@ $^ $(ALL_LDLIBS)

$(BUILD)/tests/run_tests: $(TEST_OBJ) $(LIB_OBJ)
	$(CC) -o $@ $^ $(ALL_LDLIBS)

# Each kernel set (core/kernels.h) is compiled for its own instruction set, after the build's flags
# (so they win): one binary, built with -march=native or none, chooses at run time and never runs an
# instruction the CPU lacks. -mno-avx also drops AVX2, FMA and AVX-512; -mno-avx512f every AVX-512 part.
ifeq ($(TARGET),x86_64)
$(BUILD)/core/kern_sse2.o:   KERN_FLAGS := -mno-avx
$(BUILD)/core/kern_avx2.o:   KERN_FLAGS := -mavx2 -mfma -mno-avx512f
$(BUILD)/core/kern_avx512.o: KERN_FLAGS := -mavx2 -mfma -mavx512f
endif

$(BUILD)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(KERN_FLAGS) -c -o $@ $<

$(BUILD)/replay/fuzz_%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/tests/fuzz/replay_main.o $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(ALL_LDLIBS)

# Two threads: the machine's cores. The CLI tests run ./$(BIN).
test: $(BUILD)/tests/run_tests $(BIN) $(REPLAY)
	PELAB_BIN=./$(BIN) PELAB_REPLAY=./$(BUILD)/replay OMP_NUM_THREADS=$${OMP_NUM_THREADS:-2} ./$(BUILD)/tests/run_tests

# then single-stream decoding beside llama2.c (LLAMA2C_DIR) and llama.cpp (PELAB_LLAMACPP_DIR), when given
bench: $(BIN)
	./$(BIN) bench
	PELAB=./$(BIN) tools/bench/decode_sidebyside.sh 3

# what a decoding call of 2-8 tokens costs against one (sample --lookup's drafts; docs/PERFORMANCE.md)
$(BUILD)/bench/decode_block: tools/bench/decode_block.c $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(ALL_LDLIBS)

bench-block: $(BIN) $(BUILD)/bench/decode_block
	./$(BIN) train --dim 288 --layers 6 --heads 6 --hidden 768 --seq-len 256 --batch 1 --steps 5 \
	    --eval-every 0 --out $(BUILD)/bench/m.safetensors --quiet > /dev/null
	for t in 1 2; do OMP_NUM_THREADS=$$t $(BUILD)/bench/decode_block $(BUILD)/bench/m.safetensors 300; done

# pelab against the PyTorch reference (tools/bench/); skipped with a message when torch is missing
bench-torch: $(BIN)
	python3 tools/bench/compare.py --pelab ./$(BIN)

demo: $(BIN)
	./$(BIN) demo

# README's generated blocks, rewritten from the program's own tables (a test fails when one is
# stale): between "<!-- pelab info --rules -->" and "<!-- end -->", what --scale takes
readme-lists: $(BIN)
	./$(BIN) info --rules >$(BUILD)/rules.md
	awk -v list=$(BUILD)/rules.md '/^<!-- pelab info --rules -->$$/ { print; while ((getline l < list) > 0) print l; \
	    skip = 1; next } /^<!-- end -->$$/ { skip = 0 } !skip' README.md >$(BUILD)/README.md
	mv $(BUILD)/README.md README.md

# docs/COMMANDS.md, every command's --help (tools/commands_doc.sh; tests/test_docs.c fails when it is stale)
commands-doc: $(BIN)
	sh tools/commands_doc.sh ./$(BIN) >$(BUILD)/COMMANDS.md
	mv $(BUILD)/COMMANDS.md docs/COMMANDS.md

# Sweeps on real engines (README: Running a sweep on a cluster): a compare's and a suite's --jobs
# files through GNU parallel, and as Slurm job arrays on a one-node cluster the script starts as
# root; each collected equal to the in-process sweep, a killed job resumed. Each skips with a
# message when its tools are missing (Debian: parallel; slurm-wlm munge).
check-parallel: $(BIN)
	bash tests/sweep_parallel.sh ./$(BIN)

check-slurm: $(BIN)
	bash tests/sweep_slurm.sh ./$(BIN)

# Linux arm64 without an arm64 machine (CI): the cross build, a smoke run against this machine's
# ./pelab, then the fast test groups, under qemu-user (docs/PLATFORMS.md; Debian packages:
# gcc-aarch64-linux-gnu qemu-user and the :arm64 libraries). The groups that start ./pelab many
# times or train for long stay out: under emulation they take minutes each.
ARM64_CC     ?= aarch64-linux-gnu-gcc
QEMU_ARM64   ?= qemu-aarch64
ARM64_GROUPS ?= test_pos_reference test_model test_attention test_attn_scale test_sinks test_cope test_fire test_fox test_pope \
                test_nope_layers \
                test_batch test_lookup test_bf16 test_rotary_variants test_bias_schemes test_rope_scaling test_longrope \
                test_stream test_kv_layout test_hf_config test_hf_llama test_permutation test_probe test_show test_synth \
                test_bpe test_sampler test_checkpoint test_genmetrics test_cpu test_gemm test_kernels test_stats test_includes
# Debian's libgsl-dev cannot be installed for amd64 and arm64 at once (it is not multi-arch): the
# host's headers serve, and the arm64 library (libgsl27:arm64) is linked through build-arm64/lib
ARM64_LIBDIR := /usr/lib/aarch64-linux-gnu
check-arm64: $(BIN)
	@mkdir -p build-arm64/lib
	[ -e $(ARM64_LIBDIR)/libgsl.so ] || ln -sf $(ARM64_LIBDIR)/libgsl.so.27 build-arm64/lib/libgsl.so
	$(MAKE) CC=$(ARM64_CC) BUILD=build-arm64 BIN=build-arm64/pelab LDFLAGS=-Lbuild-arm64/lib \
	    build-arm64/pelab build-arm64/tests/run_tests
	sh tests/cross_smoke.sh "$(QEMU_ARM64) build-arm64/pelab" ./$(BIN)
	PELAB_BIN="$(QEMU_ARM64) build-arm64/pelab" OMP_NUM_THREADS=2 $(QEMU_ARM64) build-arm64/tests/run_tests $(ARM64_GROUPS)

# The tests built by clang (CI; gcc builds the default ones), in their own build directory
check-clang:
	$(MAKE) test CC=clang BUILD=build-clang BIN=build-clang/pelab

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
	rm -rf build build-san build-fuzz build-arm64 build-clang pelab

.PHONY: all test bench bench-block bench-torch demo readme-lists commands-doc sanitize fuzz clean check-arm64 check-clang check-parallel check-slurm
# keep the harness objects make builds on the way to $(REPLAY)
.SECONDARY: $(HARNESSES:%=$(BUILD)/tests/fuzz/fuzz_%.o) $(BUILD)/tests/fuzz/replay_main.o
-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BUILD)/pelab.d $(HARNESSES:%=$(BUILD)/tests/fuzz/fuzz_%.d)
