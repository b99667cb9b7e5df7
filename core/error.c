/* error.c: the one-line error every library function leaves before returning -1. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

__thread char pelab_errmsg[512];

int pelab_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pelab_errmsg, sizeof pelab_errmsg, fmt, ap);
    va_end(ap);
    return -1;
}
