/* longrope_file.h: LongRoPE's factor file, read when the rule longrope:PATH is parsed (the JSON
 * forms rope_scaling.h describes). */
#ifndef PELAB_LONGROPE_FILE_H
#define PELAB_LONGROPE_FILE_H

#include <stddef.h>

/* LongRoPE (Ding et al. 2024, arXiv 2402.13753; HF rope_type "longrope"): per-pair divisors of the
 * frequencies found by a search, read from a JSON file when the rule is parsed. They are held by
 * value so that a RopeRule stays a plain value that option tables and pos_set_scale copy freely:
 * nothing is shared or freed. The canonical spec keeps only the path, so a checkpoint trained or
 * scored with the rule needs the file where the path says. */
enum { ROPE_MAX_PAIRS = 256, ROPE_PATH_MAX = 256 };
typedef struct {
    char path[ROPE_PATH_MAX];
    int n_pairs; /* factors in each set: must equal the model's rotary pairs */
    double short_factor[ROPE_MAX_PAIRS], long_factor[ROPE_MAX_PAIRS];
    long orig_len;      /* original_max_position_embeddings (the switch length); 0: the model's L */
    double factor;      /* max_position_embeddings / orig_len, or the file's "factor"; 1: none */
    double attn_factor; /* the file's attention_factor; 0: sqrt(1 + ln factor / ln L) (1 if factor <= 1) */
} LongRopeFactors;

/* f from the file at path (f zeroed first; its path kept); -1 with one line naming the file and
 * the field otherwise */
int longrope_read(const char *path, LongRopeFactors *f);

#endif
