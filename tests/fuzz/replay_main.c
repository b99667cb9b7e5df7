/* replay_main.c: a main() for a fuzz harness without libFuzzer, so that `make test` (gcc, and
 * `make sanitize` with ASan + UBSan) runs every committed regression input through the same checks
 * the fuzzer applies. Usage: fuzz_NAME FILE...; each file is one input, run once; exit 0 when all
 * returned (a failed check or a sanitizer report aborts). tests/test_regress.c drives it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static unsigned char *read_input(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        unsigned char *grown = realloc(buf, cap *= 2);
        if (!grown) free(buf);
        buf = grown;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE...\n", argv[0]);
        return 2;
    }
    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        size_t len = 0;
        unsigned char *data = read_input(argv[i], &len);
        if (!data) {
            fprintf(stderr, "%s: cannot read\n", argv[i]);
            return 2;
        }
        /* a copy of exactly len bytes, as libFuzzer gives, so ASan sees a read past the input */
        unsigned char *exact = malloc(len ? len : 1);
        if (!exact) return 2;
        for (size_t k = 0; k < len; k++) exact[k] = data[k];
        free(data);
        LLVMFuzzerTestOneInput(exact, len);
        free(exact);
        printf("ok %s (%zu bytes)\n", argv[i], len);
    }
    return 0;
}
