/* fuzz_hf_index.c: a sharded checkpoint's model.safetensors.index.json (io/hf_index.c,
 * hf_index_parse).
 *
 * Input: the index file. One that parses keeps hf_index.h's promises: every shard name is a plain
 * file name (no '/', not "." or "..", 1..255 bytes) and the names are distinct; every tensor maps to
 * one of them and is found again by hf_index_file_of, with the same shard; a name it does not hold
 * is not found. A refused file gives one line. */
#include <stdint.h>

#include "../../core/error.h"
#include "../../io/hf_index.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_single_thread();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    HfIndex x;
    if (hf_index_parse(&x, data, size, "fuzz-index") != 0) {
        FUZZ_CHECK(pelab_errmsg[0] && !strchr(pelab_errmsg, '\n'), "an error is one line: %s", pelab_errmsg);
        return 0;
    }
    FUZZ_CHECK(x.n_files >= 1 && x.n_files <= HF_INDEX_MAX_FILES && x.n_tensors >= 1, "%d files, %d tensors", x.n_files,
               x.n_tensors);
    for (int k = 0; k < x.n_files; k++) {
        size_t n = strlen(x.files[k]);
        FUZZ_CHECK(n >= 1 && n <= 255 && !strchr(x.files[k], '/') && strcmp(x.files[k], ".") && strcmp(x.files[k], ".."),
                   "shard name '%s'", x.files[k]);
        for (int j = 0; j < k; j++) FUZZ_CHECK(strcmp(x.files[j], x.files[k]) != 0, "shard %d repeats %d", k, j);
    }
    for (int i = 0; i < x.n_tensors; i++) {
        FUZZ_CHECK(x.file_of[i] >= 0 && x.file_of[i] < x.n_files, "tensor %d in shard %d", i, x.file_of[i]);
        FUZZ_CHECK(hf_index_file_of(&x, x.tensors[i]) == x.file_of[i], "lookup of '%s'", x.tensors[i]);
        if (i) FUZZ_CHECK(strcmp(x.tensors[i - 1], x.tensors[i]) < 0, "names sorted and distinct");
    }
    int held = 0; /* a name the index does not hold is not found */
    for (int i = 0; i < x.n_tensors; i++) held |= !strcmp(x.tensors[i], "pelab.absent");
    FUZZ_CHECK(held || hf_index_file_of(&x, "pelab.absent") == -1, "an absent name is found");
    hf_index_free(&x);
    return 0;
}
