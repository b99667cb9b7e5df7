/* nope.c: no position encoding. The causal mask is the only source of order (Kazemnejad et al. 2023). */
#include "pos.h"

const PosScheme pos_nope = {
    .name = "nope",
    .caps = POS_CAP_POSITION_FREE,
    .test_specs = {"nope+sinks:init=0.2"}, /* learned sinks keep it position-free (sinks.h) */
};
