/* fp16.h: IEEE binary16 <-> float32, for the half-precision tensors of other formats
 * (Hugging Face's F16 safetensors, ggml's F16 and the scales of its quantized blocks). */
#ifndef PELAB_FP16_H
#define PELAB_FP16_H

#include <stdint.h>

/* every half exactly (subnormals, inf, NaN) */
float fp16_to_float(uint16_t h);
/* rounded to nearest even; past 65504 (after rounding) to inf; NaN stays a quiet NaN */
uint16_t fp16_from_float(float x);

#endif
