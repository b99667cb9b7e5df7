/* registry.c: every position scheme, one X(name) line each (the scheme's `const PosScheme
 * pos_NAME` in its own file); the order is the order of --help and of the tests. And the
 * look-ups by name. */
#include <string.h>

#include "options.h"

#define POS_SCHEMES(X) \
    X(nope)            \
    X(learned)         \
    X(sinusoidal)      \
    X(rope)            \
    X(alibi)           \
    X(t5)              \
    X(kerple)          \
    X(xpos)            \
    X(fope)            \
    X(cope)            \
    X(fire)            \
    X(fox)             \
    X(pope)            \
    /* a new scheme: one X(name) line above this one */

#define DECLARE(name) extern const PosScheme pos_##name;
POS_SCHEMES(DECLARE)

#define ENTRY(name) &pos_##name,
static const PosScheme *const registry[] = {POS_SCHEMES(ENTRY)};

int pos_count(void) { return (int)(sizeof registry / sizeof registry[0]); }

const PosScheme *pos_at(int i) { return i >= 0 && i < pos_count() ? registry[i] : NULL; }

const PosScheme *pos_find(const char *name) {
    for (int i = 0; i < pos_count(); i++)
        if (strcmp(pos_at(i)->name, name) == 0) return pos_at(i);
    return NULL;
}

const PosScheme *pos_find_spec(const char *spec) {
    char name[64];
    size_t len = strcspn(spec, ":+");
    if (len >= sizeof name) return NULL;
    memcpy(name, spec, len);
    name[len] = 0;
    return pos_find(name);
}

void pos_list(char *buf, size_t n) {
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < pos_count(); i++) pos_put(buf, n, &used, "%s%s", i ? ", " : "", pos_at(i)->name);
}
