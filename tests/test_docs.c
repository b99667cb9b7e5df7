/* test_docs.c: the docs stay true to the tree. docs/COMMANDS.md is what tools/commands_doc.sh
 * writes from the program's --help texts (make commands-doc), and no doc or source file refers
 * to the project's tracker by number, which a reader of the repository cannot follow. */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "test.h"

/* a whole file, NUL-terminated, its size in *n; NULL if it does not read */
static char *slurp_all(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0;) {
        len += got;
        if (len + 1 == cap) {
            char *grown = realloc(buf, cap *= 2);
            if (!grown) free(buf);
            buf = grown;
        }
    }
    fclose(f);
    if (buf) buf[len] = 0, *n = len;
    return buf;
}

static void commands_doc_in_sync(void) {
    size_t n_doc = 0;
    char *doc = slurp_all("docs/COMMANDS.md", &n_doc);
    if (!doc) {
        CHECK(0, "docs/COMMANDS.md missing (make commands-doc writes it)");
        return;
    }
    enum { CAP = 1 << 20 };
    char *now = malloc(CAP);
    int rc = now ? run_pelab("sh tools/commands_doc.sh ./pelab ", now, CAP) : -1;
    size_t at = 0;
    if (now) while (doc[at] && doc[at] == now[at]) at++;
    int line = 1;
    for (size_t i = 0; i < at; i++) line += doc[i] == '\n';
    CHECK(rc == 0 && now && !doc[at] && !now[at],
          "docs/COMMANDS.md is what pelab's --help texts say (run make commands-doc): exit %d, first difference "
          "at line %d",
          rc, line);
    free(now);
    free(doc);
}

/* "issue" (any case), then spaces, 's' or '#', then a digit: a tracker number, as in "issues" "13 and 6" */
static const char *tracker_number(const char *s) {
    for (const char *p = s; *p; p++) {
        if (strncasecmp(p, "issue", 5) != 0) continue;
        const char *q = p + 5;
        while (*q == ' ' || *q == 's' || *q == 'S' || *q == '#') q++;
        if (isdigit((unsigned char)*q)) return p;
    }
    return NULL;
}

static int hits;

static void scan_file(const char *path) {
    size_t n = 0;
    char *text = slurp_all(path, &n);
    if (!text || memchr(text, 0, n)) { /* binary data: not prose */
        free(text);
        return;
    }
    int line = 1;
    for (const char *p = text, *at; (at = tracker_number(p)); p = at + 5) {
        for (; p < at; p++) line += *p == '\n';
        if (hits++ < 10) fprintf(stderr, "  %s:%d: %.*s\n", path, line, (int)strcspn(at, "\n"), at);
    }
    free(text);
}

/* every file under path, the fuzz corpus left out (inputs, not prose) */
static void scan_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISREG(st.st_mode)) {
        scan_file(path);
        return;
    }
    if (!S_ISDIR(st.st_mode) || strstr(path, "tests/fuzz/regress") || strstr(path, "tests/fuzz/corpus")) return;
    DIR *d = opendir(path);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char sub[4096];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        scan_tree(sub);
    }
    closedir(d);
}

static void no_tracker_numbers(void) {
    static const char *roots[] = {"README.md", "Makefile", "pelab.c", ".ci", ".github", "docs",  "core",
                                  "model",     "data",     "io",      "train", "infer",  "lab",   "tools", "tests"};
    /* the literals split so this file does not match itself */
    CHECK(tracker_number("see Issue" " 12") && tracker_number("issues" " 13 and 6") && tracker_number("issue" " #4") &&
              !tracker_number("this issue is open") && !tracker_number("tissue"),
          "the pattern finds tracker numbers and only them");
    hits = 0;
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) scan_tree(roots[i]);
    CHECK(hits == 0, "no doc or source file cites an issue number (%d found, the first listed above): say what it "
                     "refers to (a date, a topic, a section) instead",
          hits);
}

void test_docs(void) {
    commands_doc_in_sync();
    no_tracker_numbers();
}
