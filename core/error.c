/* error.c: the one-line error every library function leaves before returning -1. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

__thread char pelab_errmsg[512];

/* formatted aside first: a message that wraps the one before it (pelab_fail("x: %s", pelab_errmsg))
 * reads its argument while the new one is written */
int pelab_fail(const char *fmt, ...) {
    char line[sizeof pelab_errmsg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    memcpy(pelab_errmsg, line, sizeof line);
    return -1;
}
