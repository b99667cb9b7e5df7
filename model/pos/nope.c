/* nope.c: no position encoding. The causal mask is the only source of order (Kazemnejad et al. 2023). */
#include "pos.h"

const PosScheme pos_nope = {
    .name = "nope",
    .options_help = "no options",
};
