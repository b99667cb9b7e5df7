/* fields.c: CSV and JSON fields for report files. */
#include "fields.h"
#include <string.h>

void csv_field(FILE *f, const char *s, char end) {
    if (strpbrk(s, ",\"\n")) {
        fputc('"', f);
        for (; *s; s++) {
            if (*s == '"') fputc('"', f);
            fputc(*s, f);
        }
        fputc('"', f);
    } else fputs(s, f);
    fputc(end, f);
}

void json_field(FILE *f, const char *sep, const char *key, const char *s) {
    fprintf(f, "%s\"%s\": \"", sep, key);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}
