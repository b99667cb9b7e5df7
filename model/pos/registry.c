/* registry.c: every position scheme, one line each. */
#include "pos.h"

extern const PosScheme pos_nope, pos_learned, pos_sinusoidal, pos_rope;
extern const PosScheme pos_xpos, pos_fope;
extern const PosScheme pos_alibi, pos_t5, pos_kerple;

const PosScheme *const pos_registry[] = {
    &pos_nope,
    &pos_learned,
    &pos_sinusoidal,
    &pos_rope,
    &pos_alibi,
    &pos_t5,
    &pos_kerple,
    &pos_xpos,
    &pos_fope,
    0,
};
