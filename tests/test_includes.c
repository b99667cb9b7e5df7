/* test_includes.c: the include structure is the architecture, so it is tested. Floors, from the
 * bottom: core/ (errors, memory, files, JSON, RNG) < model/, model/pos/, data/ < io/ (file formats)
 * < train/, infer/ < lab/ (the experiment lab: compare, reports, suite plans, claims, verdicts) <
 * tools/ and pelab.c (the command layer). A file may include its own floor or a lower one, never a
 * higher one (an "upward arrow"); no file may reach itself through its includes (a cycle), and no
 * two modules (x.c with x.h, one node; a header without a .c is a node of its own) may depend on each
 * other, even when no single file includes itself (compare.c calling report.c, which called back
 * into compare.c, was such a cycle). A header without a .c that declares functions hides who
 * calls whom: its functions live in some other .c, so a file that calls one depends on that .c's
 * module (report_verdict.c calling report.c's report_mean through report_agg.h, while report.c
 * included report_verdict.h, was such a hidden cycle). Every quoted include must name a file that
 * exists, and the lab floor is library code: it never exits (pelab_die, exit), it returns -1 with
 * one message and the command layer prints it. The checker runs first on small trees with planted
 * faults, so a checker that finds nothing cannot pass by accident. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/files.h"
#include "test.h"

enum { MAX_FILES = 512, MAX_INCS = 48, PATH_LEN = 160 };

typedef struct {
    char path[PATH_LEN]; /* relative to the root, normalised */
    int floor;
    int module; /* index of its module, path without the extension */
    int n_inc;
    int inc[MAX_INCS]; /* indices of included files */
} SrcFile;

typedef struct {
    SrcFile files[MAX_FILES];
    int n;
    char modules[MAX_FILES][PATH_LEN];
    int n_modules;
    unsigned char module_dep[MAX_FILES][MAX_FILES];  /* [a][b]: module a depends on b (include_dep or call_dep) */
    unsigned char include_dep[MAX_FILES][MAX_FILES]; /* [a][b]: a file of module a includes one of b */
    unsigned char call_dep[MAX_FILES][MAX_FILES]; /* [a][b]: that dependency is a call through a header without a .c */
    char problems[8192];
    int n_problems;
} Tree;

static const struct {
    const char *dir;
    int floor;
} FLOORS[] = {{"core", 0}, {"model", 1}, {"model/pos", 1}, {"data", 1}, {"io", 2},
              {"train", 3}, {"infer", 3}, {"lab", 4}, {"tools", 5}, {".", 5}};
static const char *FLOOR_NAMES[] = {"core", "model/data", "io", "train/infer", "lab", "command layer"};
enum { LAB_FLOOR = 4 };

static void problem(Tree *t, const char *fmt, const char *a, const char *b) {
    size_t used = strlen(t->problems);
    if (t->n_problems++ < 12) snprintf(t->problems + used, sizeof t->problems - used, fmt, a, b);
}

/* "a/b/../c/./d.h" -> "a/c/d.h"; in place */
static void normalise(char *p) {
    char *parts[32], buf[PATH_LEN];
    int n = 0;
    snprintf(buf, sizeof buf, "%s", p);
    for (char *s = strtok(buf, "/"); s && n < 32; s = strtok(NULL, "/")) {
        if (strcmp(s, ".") == 0) continue;
        if (strcmp(s, "..") == 0 && n > 0 && strcmp(parts[n - 1], "..") != 0) n--;
        else parts[n++] = s;
    }
    p[0] = 0;
    for (int i = 0; i < n; i++) {
        strcat(p, parts[i]);
        if (i + 1 < n) strcat(p, "/");
    }
}

static int floor_of_dir(const char *dir) {
    for (size_t i = 0; i < sizeof FLOORS / sizeof FLOORS[0]; i++)
        if (strcmp(FLOORS[i].dir, dir) == 0) return FLOORS[i].floor;
    return -1;
}

static void add_dir(Tree *t, const char *root, const char *dir) {
    char full[PATH_LEN * 2];
    snprintf(full, sizeof full, "%s/%s", root, dir);
    DIR *d = opendir(full);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) && t->n < MAX_FILES) {
        size_t len = strlen(e->d_name);
        if (len < 3 || e->d_name[0] == '.' || (strcmp(e->d_name + len - 2, ".c") && strcmp(e->d_name + len - 2, ".h")))
            continue;
        SrcFile *f = &t->files[t->n++];
        memset(f, 0, sizeof *f);
        snprintf(f->path, sizeof f->path, "%s/%s", dir, e->d_name);
        normalise(f->path);
        f->floor = floor_of_dir(dir);
        char mod[PATH_LEN];
        snprintf(mod, sizeof mod, "%.*s", (int)strlen(f->path) - 2, f->path);
        f->module = -1;
        for (int m = 0; m < t->n_modules; m++)
            if (strcmp(t->modules[m], mod) == 0) f->module = m;
        if (f->module < 0) {
            f->module = t->n_modules++;
            snprintf(t->modules[f->module], PATH_LEN, "%s", mod);
        }
    }
    closedir(d);
}

static int find_file(const Tree *t, const char *path) {
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->files[i].path, path) == 0) return i;
    return -1;
}

/* reads every file's quoted includes; records missing targets and upward arrows */
static void read_includes(Tree *t, const char *root) {
    for (int i = 0; i < t->n; i++) {
        SrcFile *f = &t->files[i];
        char full[PATH_LEN * 2], dir[PATH_LEN];
        snprintf(full, sizeof full, "%s/%s", root, f->path);
        unsigned char *text;
        size_t len;
        if (read_file(full, &text, &len) != 0) {
            problem(t, "%s: %s\n", f->path, "cannot be read");
            continue;
        }
        char *s = realloc(text, len + 1);
        s[len] = 0;
        snprintf(dir, sizeof dir, "%s", f->path);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = 0;
        else strcpy(dir, ".");
        for (char *line = s; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
            char name[PATH_LEN], target[PATH_LEN * 2 + 2];
            if (sscanf(line, "#include \"%159[^\"]\"", name) != 1) continue;
            snprintf(target, sizeof target, "%s/%s", dir, name);
            normalise(target);
            int j = find_file(t, target);
            if (j < 0) {
                problem(t, "%s includes %s, which is not a source file of the tree\n", f->path, target);
                continue;
            }
            if (f->n_inc < MAX_INCS) f->inc[f->n_inc++] = j;
            if (t->files[j].module != f->module)
                t->module_dep[f->module][t->files[j].module] = t->include_dep[f->module][t->files[j].module] = 1;
            if (t->files[j].floor > f->floor) {
                char what[PATH_LEN * 2 + 64];
                snprintf(what, sizeof what, "%s (%s floor)", t->files[j].path, FLOOR_NAMES[t->files[j].floor]);
                problem(t, "upward arrow: %s includes %s\n", f->path, what);
            }
        }
        free(s);
    }
}

/* a file's text, NUL-terminated (NULL when it cannot be read); the caller frees it */
static char *file_text(const char *root, const char *path) {
    char full[PATH_LEN * 2];
    snprintf(full, sizeof full, "%s/%s", root, path);
    unsigned char *text;
    size_t len;
    if (read_file(full, &text, &len) != 0) return NULL;
    char *s = realloc(text, len + 1);
    s[len] = 0;
    return s;
}

static int ident_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

/* the next place in s, from `from`, where name is called or defined: "name(" not inside a longer
 * identifier; NULL when none */
static const char *find_call(const char *from, const char *name) {
    size_t n = strlen(name);
    for (const char *p = strstr(from, name); p; p = strstr(p + 1, name))
        if (p[n] == '(' && (p == from || !ident_char(p[-1]))) return p;
    return NULL;
}

/* 1 when text defines function name: "name(" on a line that starts in column 0, its parameter list
 * followed by '{' before any ';' */
static int defines(const char *text, const char *name) {
    for (const char *p = find_call(text, name); p; p = find_call(p + 1, name)) {
        const char *line = p;
        while (line > text && line[-1] != '\n') line--;
        if (*line == ' ' || *line == '\t' || *line == '#' || *line == '/' || *line == '*' || strncmp(line, "static", 6) == 0)
            continue; /* a call, a comment, or a file's own function of the same name */
        const char *end = p + strcspn(p, ";{");
        if (*end == '{') return 1;
    }
    return 0;
}

/* The functions a header without a .c declares (a line in column 0 with "name(", not a typedef,
 * macro or comment), each defined in some module's .c: every .c file of another module that calls
 * one depends on that module, as if it included that module's own header. */
static void read_hidden_calls(Tree *t, const char *root) {
    char **text = calloc((size_t)t->n, sizeof(char *));
    for (int i = 0; i < t->n; i++) text[i] = file_text(root, t->files[i].path);
    for (int h = 0; h < t->n; h++) {
        const SrcFile *hf = &t->files[h];
        size_t hl = strlen(hf->path);
        if (!text[h] || strcmp(hf->path + hl - 2, ".h") != 0) continue;
        int has_c = 0;
        for (int i = 0; i < t->n; i++)
            has_c |= t->files[i].module == hf->module && strcmp(t->files[i].path + strlen(t->files[i].path) - 2, ".c") == 0;
        if (has_c) continue;
        for (const char *line = text[h]; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
            if (!ident_char(*line) || strncmp(line, "typedef", 7) == 0 || strncmp(line, "static", 6) == 0) continue;
            const char *paren = line + strcspn(line, "(\n");
            if (*paren != '(') continue;
            const char *b = paren;
            while (b > line && ident_char(b[-1])) b--;
            char name[PATH_LEN];
            snprintf(name, sizeof name, "%.*s", (int)(paren - b), b);
            if (!name[0]) continue;
            int def = -1;
            for (int i = 0; i < t->n && def < 0; i++)
                if (text[i] && t->files[i].module != hf->module && strcmp(t->files[i].path + strlen(t->files[i].path) - 2, ".c") == 0 &&
                    defines(text[i], name))
                    def = i;
            if (def < 0) continue;
            int dm = t->files[def].module;
            for (int i = 0; i < t->n; i++) /* the callers: .c files (a header's own prototypes are not calls) */
                if (text[i] && t->files[i].module != dm && i != h &&
                    strcmp(t->files[i].path + strlen(t->files[i].path) - 2, ".c") == 0 && find_call(text[i], name))
                    t->module_dep[t->files[i].module][dm] = 1, t->call_dep[t->files[i].module][dm] = 1;
        }
    }
    for (int i = 0; i < t->n; i++) free(text[i]);
    free(text);
}

/* the lab floor never exits: no pelab_die( or exit( call (a forked child's _exit is another name) */
static void check_lab_exits(Tree *t, const char *root) {
    for (int i = 0; i < t->n; i++) {
        const SrcFile *f = &t->files[i];
        if (f->floor != LAB_FLOOR) continue;
        char *s = file_text(root, f->path);
        if (!s) continue;
        if (find_call(s, "pelab_die")) problem(t, "%s calls %s: the lab returns -1 with pelab_errmsg\n", f->path, "pelab_die");
        else if (find_call(s, "exit")) problem(t, "%s calls %s: the lab returns -1 with pelab_errmsg\n", f->path, "exit");
        free(s);
    }
}

/* depth-first search; state 1 = on the current path, 2 = done */
static void find_cycles(Tree *t, int i, int *state, int *stack, int depth) {
    state[i] = 1;
    stack[depth] = i;
    for (int k = 0; k < t->files[i].n_inc; k++) {
        int j = t->files[i].inc[k];
        if (state[j] == 1) {
            char cycle[1024] = "";
            int from = depth;
            while (from > 0 && stack[from] != j) from--;
            for (int d = from; d <= depth; d++) {
                strncat(cycle, t->files[stack[d]].path, sizeof cycle - strlen(cycle) - 5);
                strncat(cycle, " -> ", sizeof cycle - strlen(cycle) - 1);
            }
            problem(t, "include cycle: %s%s\n", cycle, t->files[j].path);
        } else if (state[j] == 0 && depth + 1 < MAX_FILES) find_cycles(t, j, state, stack, depth + 1);
    }
    state[i] = 2;
}

/* the same over modules: a module depends on another when one of its files includes one of the
 * other's; reports each cycle once, from the module where the search meets it */
static void find_module_cycles(Tree *t, int a, int *state, int *stack, int depth) {
    state[a] = 1;
    stack[depth] = a;
    for (int b = 0; b < t->n_modules; b++) {
        if (!t->module_dep[a][b]) continue;
        if (state[b] == 1) {
            char cycle[1024] = "";
            int from = depth;
            while (from > 0 && stack[from] != b) from--;
            for (int d = from; d <= depth; d++) {
                int next = d < depth ? stack[d + 1] : b; /* "=>": a call through a header without a .c */
                strncat(cycle, t->modules[stack[d]], sizeof cycle - strlen(cycle) - 5);
                strncat(cycle, t->call_dep[stack[d]][next] && !t->include_dep[stack[d]][next] ? " => " : " -> ",
                        sizeof cycle - strlen(cycle) - 1);
            }
            problem(t, "module cycle: %s%s\n", cycle, t->modules[b]);
        } else if (state[b] == 0) find_module_cycles(t, b, state, stack, depth + 1);
    }
    state[a] = 2;
}

/* every problem of the tree at root, as lines in t->problems; returns their number */
static int check_tree(Tree *t, const char *root) {
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < sizeof FLOORS / sizeof FLOORS[0]; i++) add_dir(t, root, FLOORS[i].dir);
    read_includes(t, root);
    read_hidden_calls(t, root);
    int *state = calloc(MAX_FILES, sizeof(int)), *stack = calloc(MAX_FILES, sizeof(int));
    for (int i = 0; i < t->n; i++)
        if (!state[i]) find_cycles(t, i, state, stack, 0);
    /* module cycles only where no file cycle already explains them */
    if (t->n_problems == 0) {
        memset(state, 0, sizeof(int) * t->n);
        for (int m = 0; m < t->n_modules; m++)
            if (!state[m]) find_module_cycles(t, m, state, stack, 0);
    }
    free(state), free(stack);
    check_lab_exits(t, root);
    return t->n_problems;
}

static void write_text(const char *root, const char *rel, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    write_bytes_atomic(path, text, strlen(text));
}

void test_includes(void) {
    static Tree t;
    /* the checker on planted faults: model/ and lab/ including tools/, a two-file cycle in data/, a
     * missing header, and a lab file that exits */
    char root[256], sub[300];
    snprintf(root, sizeof root, "%s/includes", test_tmpdir());
    const char *dirs[] = {"", "/core", "/model", "/data", "/lab", "/tools"};
    for (int i = 0; i < 6; i++) {
        snprintf(sub, sizeof sub, "%s%s", root, dirs[i]);
        mkdir(sub, 0755);
    }
    write_text(root, "core/error.h", "/* fine */\n");
    write_text(root, "model/model.c", "#include \"../core/error.h\"\n#include \"../tools/args.h\"\n");
    write_text(root, "tools/args.h", "#include \"../core/error.h\"\n");
    write_text(root, "data/a.h", "#include \"b.h\"\n");
    write_text(root, "data/b.h", "#include \"a.h\"\n");
    write_text(root, "data/c.c", "#include \"missing.h\"\n");
    write_text(root, "lab/run.c", "#include \"../tools/args.h\"\nint run(void) {\n    pelab_die(\"no\");\n}\n");
    int n = check_tree(&t, root);
    CHECK(n == 5 && strstr(t.problems, "upward arrow: model/model.c includes tools/args.h") &&
              strstr(t.problems, "upward arrow: lab/run.c includes tools/args.h (command layer floor)") &&
              (strstr(t.problems, "include cycle: data/a.h -> data/b.h -> data/a.h") ||
               strstr(t.problems, "include cycle: data/b.h -> data/a.h -> data/b.h")) && strstr(t.problems, "missing.h") &&
              strstr(t.problems, "lab/run.c calls pelab_die"),
          "the include checker finds planted upward arrows, a cycle, a missing header and a lab exit (%d found):\n%s", n,
          t.problems);

    /* module cycles without a file cycle: m.c includes n.h, n.c includes m.h; and through a header
     * without a .c, a node of its own: p.c includes q.h, q.h includes p.h */
    snprintf(root, sizeof root, "%s/modules", test_tmpdir());
    mkdir(root, 0755);
    snprintf(sub, sizeof sub, "%s/data", root);
    mkdir(sub, 0755);
    snprintf(sub, sizeof sub, "%s/io", root);
    mkdir(sub, 0755);
    write_text(root, "data/m.h", "/* m */\n");
    write_text(root, "data/n.h", "/* n */\n");
    write_text(root, "data/m.c", "#include \"m.h\"\n#include \"n.h\"\n");
    write_text(root, "data/n.c", "#include \"n.h\"\n#include \"m.h\"\n");
    write_text(root, "io/p.h", "/* p */\n");
    write_text(root, "io/q.h", "#include \"p.h\"\n");
    write_text(root, "io/p.c", "#include \"p.h\"\n#include \"q.h\"\n");
    n = check_tree(&t, root);
    CHECK(n == 2 && (strstr(t.problems, "module cycle: data/m -> data/n -> data/m") ||
                     strstr(t.problems, "module cycle: data/n -> data/m -> data/n")) &&
              (strstr(t.problems, "module cycle: io/p -> io/q -> io/p") || strstr(t.problems, "module cycle: io/q -> io/p -> io/q")),
          "the include checker finds planted module cycles, one through a header without a .c (%d found):\n%s", n,
          t.problems);

    /* a call cycle hidden behind a header without a .c: rep.c includes verdict.h and defines
     * agg_mean, declared in agg.h (no agg.c); verdict.c includes agg.h and calls agg_mean. No
     * include cycle; the call makes one. The same tree without the call has none. */
    snprintf(root, sizeof root, "%s/hidden", test_tmpdir());
    mkdir(root, 0755);
    snprintf(sub, sizeof sub, "%s/lab", root);
    mkdir(sub, 0755);
    write_text(root, "lab/agg.h", "/* agg.h */\ntypedef struct { int n; } Agg;\ndouble agg_mean(const Agg *a);\n");
    write_text(root, "lab/verdict.h", "#include \"agg.h\"\nint verdict(const Agg *a);\n");
    write_text(root, "lab/rep.c", "#include \"agg.h\"\n#include \"verdict.h\"\n\ndouble agg_mean(const Agg *a) {\n"
                                  "    return a->n;\n}\n\nint report(const Agg *a) { return verdict(a); }\n");
    write_text(root, "lab/verdict.c", "#include \"verdict.h\"\n\nint verdict(const Agg *a) {\n    return agg_mean(a) > 0;\n}\n");
    n = check_tree(&t, root);
    CHECK(n == 1 && (strstr(t.problems, "module cycle: lab/rep -> lab/verdict => lab/rep") ||
                     strstr(t.problems, "module cycle: lab/verdict => lab/rep -> lab/verdict")),
          "the include checker finds a call cycle through a header without a .c (%d found):\n%s", n, t.problems);
    write_text(root, "lab/verdict.c", "#include \"verdict.h\"\n\nint verdict(const Agg *a) {\n    return a->n > 0;\n}\n");
    n = check_tree(&t, root);
    CHECK(n == 0, "without the call, the planted tree has no cycle (%d found):\n%s", n, t.problems);

    /* the real tree, from the repository root (where make test runs) */
    n = check_tree(&t, ".");
    CHECK(t.n > 100 && find_file(&t, "model/model.c") >= 0 && find_file(&t, "tools/args.c") >= 0 &&
              find_file(&t, "lab/report_agg.c") >= 0,
          "the include checker reads the source tree (%d files)", t.n);
    CHECK(n == 0, "no upward include, no cycle, no missing header, no lab exit in %d files; %d problems:\n%s", t.n, n,
          t.problems);
}
