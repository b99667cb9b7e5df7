/* synth.h: built-in deterministic synthetic corpora ("pelab synth NAME", "--data synth:NAME").
 * Output depends only on (name, seed, nbytes) and a shorter output is a prefix of a longer one,
 * so every machine trains and evaluates on the same bytes. */
#ifndef PELAB_SYNTH_H
#define PELAB_SYNTH_H

#include <stddef.h>
#include <stdint.h>

/* Generate exactly nbytes of corpus NAME from seed into a malloc'd buffer (*out, NUL-terminated,
 * length nbytes). Returns 0, or -1 with pelab_fail("...") naming the generator if NAME is unknown
 * (and *out = NULL). */
int synth_generate(const char *name, uint64_t seed, size_t nbytes, char **out);

/* comma-separated list of generator names, e.g. "stories" */
const char *synth_names(void);

#endif
