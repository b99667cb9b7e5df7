/* registry.c: every position scheme, one line each. */
#include "pos.h"

extern const PosScheme pos_nope, pos_learned, pos_sinusoidal, pos_rope;

const PosScheme *const pos_registry[] = {
    &pos_nope,
    &pos_learned,
    &pos_sinusoidal,
    &pos_rope,
    0,
};
