/* test_includes.c: the include structure is the architecture, so it is tested. Floors, from the
 * bottom: core/ (errors, memory, files, JSON, RNG) < model/, model/pos/, data/ < io/ (file formats)
 * < train/, infer/ < tools/ and pelab.c (the command layer). A file may include its own floor or
 * a lower one, never a higher one (an "upward arrow"); no file may reach itself through its
 * includes (a cycle), and no two modules (x.c with x.h) may depend on each other through their
 * headers, even when no single file includes itself (compare.c calling report.c, which called back
 * into compare.c, was such a cycle); every quoted include must name a file that exists. The checker runs first
 * on a small tree with planted faults, so a checker that finds nothing cannot pass by accident. */
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
    unsigned char module_dep[MAX_FILES][MAX_FILES]; /* [a][b]: a file of module a includes one of b */
    char problems[8192];
    int n_problems;
} Tree;

static const struct {
    const char *dir;
    int floor;
} FLOORS[] = {{"core", 0}, {"model", 1}, {"model/pos", 1}, {"data", 1}, {"io", 2},
              {"train", 3}, {"infer", 3}, {"tools", 4}, {".", 4}};
static const char *FLOOR_NAMES[] = {"core", "model/data", "io", "train/infer", "command layer"};

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
            if (t->files[j].module != f->module) t->module_dep[f->module][t->files[j].module] = 1;
            if (t->files[j].floor > f->floor) {
                char what[PATH_LEN * 2 + 64];
                snprintf(what, sizeof what, "%s (%s floor)", t->files[j].path, FLOOR_NAMES[t->files[j].floor]);
                problem(t, "upward arrow: %s includes %s\n", f->path, what);
            }
        }
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
                strncat(cycle, t->modules[stack[d]], sizeof cycle - strlen(cycle) - 5);
                strncat(cycle, " -> ", sizeof cycle - strlen(cycle) - 1);
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
    return t->n_problems;
}

static void write_text(const char *root, const char *rel, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    write_bytes_atomic(path, text, strlen(text));
}

void test_includes(void) {
    static Tree t;
    /* the checker on planted faults: model/ including tools/, and a two-file cycle in data/ */
    char root[256], sub[300];
    snprintf(root, sizeof root, "%s/includes", test_tmpdir());
    const char *dirs[] = {"", "/core", "/model", "/data", "/tools"};
    for (int i = 0; i < 5; i++) {
        snprintf(sub, sizeof sub, "%s%s", root, dirs[i]);
        mkdir(sub, 0755);
    }
    write_text(root, "core/error.h", "/* fine */\n");
    write_text(root, "model/model.c", "#include \"../core/error.h\"\n#include \"../tools/args.h\"\n");
    write_text(root, "tools/args.h", "#include \"../core/error.h\"\n");
    write_text(root, "data/a.h", "#include \"b.h\"\n");
    write_text(root, "data/b.h", "#include \"a.h\"\n");
    write_text(root, "data/c.c", "#include \"missing.h\"\n");
    int n = check_tree(&t, root);
    CHECK(n == 3 && strstr(t.problems, "upward arrow: model/model.c includes tools/args.h") &&
              (strstr(t.problems, "include cycle: data/a.h -> data/b.h -> data/a.h") ||
               strstr(t.problems, "include cycle: data/b.h -> data/a.h -> data/b.h")) && strstr(t.problems, "missing.h"),
          "the include checker finds a planted upward arrow, cycle and missing header (%d found):\n%s", n,
          t.problems);

    /* a module cycle without a file cycle: m.c includes n.h, n.c includes m.h */
    snprintf(root, sizeof root, "%s/modules", test_tmpdir());
    mkdir(root, 0755);
    snprintf(sub, sizeof sub, "%s/data", root);
    mkdir(sub, 0755);
    write_text(root, "data/m.h", "/* m */\n");
    write_text(root, "data/n.h", "/* n */\n");
    write_text(root, "data/m.c", "#include \"m.h\"\n#include \"n.h\"\n");
    write_text(root, "data/n.c", "#include \"n.h\"\n#include \"m.h\"\n");
    n = check_tree(&t, root);
    CHECK(n == 1 && (strstr(t.problems, "module cycle: data/m -> data/n -> data/m") ||
                     strstr(t.problems, "module cycle: data/n -> data/m -> data/n")),
          "the include checker finds a planted module cycle (%d found):\n%s", n, t.problems);

    /* the real tree, from the repository root (where make test runs) */
    n = check_tree(&t, ".");
    CHECK(t.n > 100 && find_file(&t, "model/model.c") >= 0 && find_file(&t, "tools/args.c") >= 0,
          "the include checker reads the source tree (%d files)", t.n);
    CHECK(n == 0, "no upward include, no cycle, no missing header in %d files; %d problems:\n%s", t.n, n, t.problems);
}
