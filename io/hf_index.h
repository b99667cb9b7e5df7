/* hf_index.h: a sharded Hugging Face checkpoint's model.safetensors.index.json:
 * {"metadata": {...}, "weight_map": {"tensor name": "model-00001-of-00002.safetensors", ...}}.
 * The shard names must be plain file names in the same directory (no '/', not "." or "..", at
 * most 255 bytes): an index cannot point outside its directory. metadata is not read; any other
 * top-level field is refused. */
#ifndef PELAB_HF_INDEX_H
#define PELAB_HF_INDEX_H

#include <stddef.h>

#define HF_INDEX_MAX_FILES 4096

typedef struct {
    int n_files;
    char **files;     /* distinct shard names, in order of first appearance */
    int n_tensors;
    char **tensors;   /* [n_tensors] names, sorted (for lookup) */
    int *file_of;     /* [n_tensors] index into files */
} HfIndex;

/* -1 with one line naming name and the problem */
int hf_index_parse(HfIndex *x, const unsigned char *buf, size_t len, const char *name);
void hf_index_free(HfIndex *x);
/* the shard index of tensor, -1 if the index does not name it */
int hf_index_file_of(const HfIndex *x, const char *tensor);

#endif
