/* fields.h: one field of a CSV or JSON report file, escaped. */
#ifndef PELAB_FIELDS_H
#define PELAB_FIELDS_H

#include <stdio.h>

/* one CSV field followed by end (',' or '\n'), quoted when it holds a comma, quote or newline */
void csv_field(FILE *f, const char *s, char end);
/* sep, then "key": "s" with s escaped as a JSON string */
void json_field(FILE *f, const char *sep, const char *key, const char *s);

#endif
