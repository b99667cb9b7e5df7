/* registry.c: every position scheme, one X(name) line each (the scheme's `const PosScheme
 * pos_NAME` in its own file); the order is the order of --help and of the tests. */
#include "pos.h"

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
    /* a new scheme: one X(name) line above this one */

#define DECLARE(name) extern const PosScheme pos_##name;
POS_SCHEMES(DECLARE)

#define ENTRY(name) &pos_##name,
static const PosScheme *const registry[] = {POS_SCHEMES(ENTRY)};

int pos_count(void) { return (int)(sizeof registry / sizeof registry[0]); }

const PosScheme *pos_at(int i) { return i >= 0 && i < pos_count() ? registry[i] : NULL; }
