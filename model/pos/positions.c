/* positions.c: what positions a model accepts and computes, checked before any hook sees them. */
#include <stdio.h>

#include "../../core/error.h"
#include "pos.h"

long pos_max_position(const PosCtx *pc) { return pc->scheme->max_position ? pc->scheme->max_position(pc) : -1; }

long pos_computable_position(const PosCtx *pc) {
    return pc->scheme->computable_position ? pc->scheme->computable_position(pc) : -1;
}

void pos_lengths(const PosCtx *pc, char *buf, size_t n) {
    long acc = pos_max_position(pc), comp = pos_computable_position(pc);
    char a[32], c[32];
    if (acc < 0) snprintf(a, sizeof a, "unbounded");
    else snprintf(a, sizeof a, "%ld", acc);
    if (comp < 0) snprintf(c, sizeof c, "unbounded");
    else snprintf(c, sizeof c, "%ld", comp);
    int used = snprintf(buf, n, "training %d; accepted %s; computable %s", pc->seq_len, a, c);
    if (pc->extend.method && used >= 0 && (size_t)used < n) { /* what --scale set at inference */
        char method[64];
        extend_describe(&pc->extend, method, sizeof method);
        snprintf(buf + used, n - used, "; extension method %s", method);
    }
}

int pos_check_positions(PosCtx *pc, const int *pos, size_t n) {
    long limit = pos_max_position(pc), hi = -1;
    for (size_t i = 0; i < n; i++) {
        if (pos[i] < 0) return pelab_fail("position id %d at index %zu: expected >= 0", pos[i], i);
        if (limit >= 0 && pos[i] >= limit)
            return pelab_fail("position %d is past the end of the %s position table (%ld positions, 0..%ld): "
                              "this scheme cannot go beyond its table; use a length <= %ld",
                              pos[i], pc->scheme->name, limit, limit - 1, limit);
        if (pos[i] > hi) hi = pos[i];
    }
    long computable = pos_computable_position(pc);
    if (computable >= 0 && hi >= computable)
        return pelab_fail("position %ld is past the %ld positions the %s scheme can compute in float32",
                          hi, computable, pc->scheme->name);
    if (pc->scheme->reserve && hi >= 0 && pc->scheme->reserve(pc, hi + 1) != 0) return -1;
    if (extend_two_branch(&pc->extend) && pc->scheme->reserve && hi >= 0) {
        /* the far branch's positions: the largest query's (keys' are at most their own) */
        long far_hi = extend_far_qpos(&pc->extend, (int)hi);
        PosCtx *far = pc->extend_far ? pc->extend_far : pc;
        if (pc->scheme->reserve(far, far_hi + 1) != 0) return -1;
    }
    return 0;
}
