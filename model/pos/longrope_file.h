/* longrope_file.h: LongRoPE's factor file, read when the rule longrope:PATH is parsed (the JSON
 * forms rope_scaling.h describes). */
#ifndef PELAB_LONGROPE_FILE_H
#define PELAB_LONGROPE_FILE_H

#include "rope_scaling.h"

/* f from the file at path (f zeroed first; its path kept); -1 with one line naming the file and
 * the field otherwise */
int longrope_read(const char *path, LongRopeFactors *f);

#endif
