/* test_synth.c: the synthetic corpus is deterministic, exact in length, clean ASCII, and its
 * long-range structure (name, lost companion, packed list, key fact) really is there. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/hash.h"
#include "../data/synth.h"
#include "test.h"

#define BIG (200 * 1000)

/* copy of text[a, b) as a NUL-terminated string in buf (cap bytes) */
static void slice(char *buf, size_t cap, const char *a, const char *b) {
    size_t n = (size_t)(b - a) < cap - 1 ? (size_t)(b - a) : cap - 1;
    memcpy(buf, a, n);
    buf[n] = 0;
}

/* last occurrence of needle in hay before limit, or NULL */
static const char *find_last_before(const char *hay, const char *limit, const char *needle) {
    const char *last = NULL;
    for (const char *p = strstr(hay, needle); p && p < limit; p = strstr(p + 1, needle)) last = p;
    return last;
}

static void test_determinism_and_length(void) {
    char *a, *b, *c, *small;
    CHECK(synth_generate("stories", 42, BIG, &a) == 0, "stories seed 42: %s", pelab_errmsg);
    CHECK(synth_generate("stories", 42, BIG, &b) == 0, "stories seed 42 again");
    CHECK(synth_generate("stories", 43, BIG, &c) == 0, "stories seed 43");
    CHECK(memcmp(a, b, BIG) == 0, "same seed gives different bytes");
    CHECK(memcmp(a, c, BIG) != 0, "seeds 42 and 43 give the same bytes");
    CHECK(memcmp(a, c, 200) != 0, "seeds 42 and 43 share their first 200 bytes");
    /* a shorter corpus is a prefix of a longer one: --bytes never changes what comes first */
    CHECK(synth_generate("stories", 42, 1000, &small) == 0, "stories 1000 bytes");
    CHECK(memcmp(small, a, 1000) == 0, "1000-byte corpus is not a prefix of the 200 KB one");
    free(a), free(b), free(c), free(small);

    size_t sizes[] = {0, 1, 17, 999, 4096, 123457};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char *out = NULL;
        int rc = synth_generate("stories", 7, sizes[i], &out);
        CHECK(rc == 0 && out, "stories %zu bytes failed", sizes[i]);
        if (rc == 0)
            CHECK(strlen(out) == sizes[i], "asked %zu bytes, got %zu", sizes[i], strlen(out));
        free(out);
    }
}

static void test_clean_text(void) {
    char *text;
    if (synth_generate("stories", 1, BIG, &text) != 0) {
        CHECK(0, "stories: %s", pelab_errmsg);
        return;
    }
    size_t bad = 0, leaks = 0, double_space = 0, lower_start = 0;
    for (size_t i = 0; i < BIG; i++) {
        unsigned char ch = (unsigned char)text[i];
        bad += !((ch >= 32 && ch < 127) || ch == '\n');
        leaks += ch == '{' || ch == '}'; /* an unexpanded template slot */
        double_space += ch == ' ' && i > 0 && text[i - 1] == ' ';
        /* every sentence starts with a capital: ". x" never happens */
        lower_start += i >= 2 && text[i - 2] == '.' && text[i - 1] == ' ' && ch >= 'a' && ch <= 'z';
    }
    CHECK(bad == 0, "%zu bytes are not printable ASCII or newline", bad);
    CHECK(leaks == 0, "%zu template braces leaked into the text", leaks);
    CHECK(double_space == 0, "%zu double spaces", double_space);
    CHECK(lower_start == 0, "%zu sentences start lower-case", lower_start);
    CHECK(text[0] >= 'A' && text[0] <= 'Z', "corpus starts with '%c'", text[0]);

    /* a few hundred distinct words: varied enough not to be trivially periodic */
    static char seen[1000][16];
    int n_words = 0;
    for (size_t i = 0; i < BIG && n_words < 1000;) {
        while (i < BIG && !((text[i] | 32) >= 'a' && (text[i] | 32) <= 'z')) i++;
        size_t start = i;
        while (i < BIG && (text[i] | 32) >= 'a' && (text[i] | 32) <= 'z') i++;
        if (i == start || i - start >= 16) continue;
        char w[16];
        for (size_t k = start; k < i; k++) w[k - start] = (char)(text[k] | 32);
        w[i - start] = 0;
        int known = 0;
        for (int k = 0; k < n_words && !known; k++) known = strcmp(seen[k], w) == 0;
        if (!known) strcpy(seen[n_words++], w);
    }
    CHECK(n_words >= 300, "only %d distinct words in 200 KB", n_words);
    free(text);
}

/* The long-range structure, story by story, over 200 KB. */
static void test_long_range(void) {
    char *text;
    if (synth_generate("stories", 5, BIG, &text) != 0) {
        CHECK(0, "stories: %s", pelab_errmsg);
        return;
    }
    static const char *ords[] = {"first", "second", "third", "fourth", "fifth", "sixth"};
    int n_stories = 0, short_or_long = 0, name_late = 0, list_ok = 0, fact_ok = 0, found_ok = 0;
    int days_ok = 0, duplicates = 0;
    uint64_t hashes[512];
    static char story[8192];
    const char *p = text, *end;
    /* every "\n\n" closes a complete story; the truncated tail has none and is skipped */
    while ((end = strstr(p, "\n\n")) != NULL && n_stories < 512) {
        slice(story, sizeof story, p, end);
        size_t len = strlen(story);
        p = end + 2;
        hashes[n_stories] = fnv1a64(story, len, 0);
        for (int k = 0; k < n_stories; k++) duplicates += hashes[k] == hashes[n_stories];
        n_stories++;
        short_or_long += len < 300 || len > 2500;

        /* the hero is introduced with "named X" and named again in the last third */
        char name[32] = "";
        const char *named = strstr(story, " named ");
        if (named) {
            const char *a = named + 7, *b = a;
            while ((*b | 32) >= 'a' && (*b | 32) <= 'z') b++;
            slice(name, sizeof name, a, b);
        }
        name_late += name[0] && strstr(story + 2 * len / 3, name) != NULL;

        /* "X packed LIST." early, "had packed LIST." late: same items, same order */
        const char *packed = strstr(story, "packed "), *recalled = strstr(story, "had packed ");
        if (packed && recalled && packed < recalled) {
            char early[256], late[256];
            slice(early, sizeof early, packed + 7, strchr(packed, '.'));
            slice(late, sizeof late, recalled + 11, strchr(recalled, '.'));
            list_ok += strcmp(early, late) == 0 && strchr(early, ',') != NULL;
        }

        /* the last sentence (before an optional "The end.") was already said in the first half */
        size_t tail_end = len;
        if (len > 9 && strcmp(story + len - 9, " The end.") == 0) tail_end -= 9;
        size_t tail_start = tail_end - 1;
        while (tail_start > 1 && !(story[tail_start - 2] == '.' && story[tail_start - 1] == ' '))
            tail_start--;
        char tail[256];
        slice(tail, sizeof tail, story + tail_start, story + tail_end);
        const char *first = strstr(story, tail);
        fact_ok += tail_end - tail_start > 10 && first && (size_t)(first - story) < len / 2;

        /* "found OBJ again." late, where OBJ ("the red kite" -> "red kite", or "Rex") was
         * introduced in the first third */
        const char *again = strstr(story, " again.");
        const char *found = again ? find_last_before(story, again, "found ") : NULL;
        if (found) {
            char obj[64], head[8192];
            slice(obj, sizeof obj, found + 6, again);
            const char *key = strncmp(obj, "the ", 4) == 0 ? obj + 4 : obj;
            slice(head, sizeof head, story, story + len / 3);
            found_ok += key[0] && strstr(head, key) != NULL && (size_t)(found - story) > len / 2;
        }

        /* days are counted in order: "On the second day" only after "On the first day" */
        int ordered = strstr(story, "On the first day") != NULL;
        for (int d = 1; d < 6 && ordered; d++) {
            char want[32], prev[32];
            snprintf(want, sizeof want, "On the %s day", ords[d]);
            snprintf(prev, sizeof prev, "On the %s day", ords[d - 1]);
            const char *w = strstr(story, want);
            if (!w) break;
            const char *pr = strstr(story, prev);
            ordered = pr && pr < w;
        }
        days_ok += ordered;
    }
    CHECK(n_stories >= 100, "only %d complete stories in 200 KB", n_stories);
    CHECK(short_or_long == 0, "%d stories outside 300..2500 bytes", short_or_long);
    CHECK(duplicates == 0, "%d duplicate stories", duplicates);
    /* by construction all of these hold for every story; allow no exceptions */
    CHECK(name_late == n_stories, "hero named in last third: %d of %d stories", name_late,
          n_stories);
    CHECK(list_ok == n_stories, "packed list recalled verbatim: %d of %d", list_ok, n_stories);
    CHECK(fact_ok == n_stories, "key fact repeated as the tail: %d of %d", fact_ok, n_stories);
    CHECK(found_ok == n_stories, "companion found again late: %d of %d", found_ok, n_stories);
    CHECK(days_ok == n_stories, "days counted in order: %d of %d", days_ok, n_stories);
    free(text);
}

static void test_names_and_errors(void) {
    const char *names = synth_names();
    CHECK(strstr(names, "stories") != NULL, "synth_names() lacks stories: %s", names);
    /* every listed generator works */
    char list[256];
    snprintf(list, sizeof list, "%s", names);
    for (char *save = NULL, *name = strtok_r(list, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
        char *out = NULL;
        CHECK(synth_generate(name, 1, 100, &out) == 0 && out && strlen(out) == 100,
              "listed generator '%s' failed: %s", name, pelab_errmsg);
        free(out);
    }
    char *out = (char *)1;
    pelab_errmsg[0] = 0;
    CHECK(synth_generate("no-such-corpus", 1, 100, &out) == -1, "unknown name accepted");
    CHECK(out == NULL, "unknown name left *out set");
    CHECK(strstr(pelab_errmsg, "no-such-corpus") != NULL, "error does not name the generator: '%s'",
          pelab_errmsg);
}

void test_synth(void) {
    test_determinism_and_length();
    test_clean_text();
    test_long_range();
    test_names_and_errors();
}
