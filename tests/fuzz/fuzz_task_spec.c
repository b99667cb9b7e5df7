/* fuzz_task_spec.c: the task specs of --data task:SPEC and pelab task (data/task.c task_parse and
 * every task's options) and every task's oracle on arbitrary prompts.
 *
 * Input: SPEC, a NUL or newline, then PROMPT (the rest, any bytes). A spec that parses is written
 * back (task_format); that text must parse again and write identically. Its examples, at a length
 * picked from the prompt's first byte (bounded, so one input stays fast), must be well formed: the
 * prompt framed as "NAME: BODY|" (or ending "\nKey:" for passkey), the answer ending in its single
 * '\n', the oracle agreeing with itself, an answer with one byte changed not an exact match; a
 * short training stream has a 0/1 mask. A dense task's examples (mqar_dense): every supervised byte
 * the oracle's, '\n' last and unsupervised. RULER's tasks (listed): exactly len bytes, the prompt's
 * last line ending in ':', the answer " REFS\n"; task_recall of the answer is 1, of nothing 0, of the
 * answer without its first reference one less. The oracle of every task, given PROMPT, answers
 * (ending in '\n', unless dense) or refuses with a message; never crashes or reads past the prompt. */
#include <stdint.h>

#include "../../core/error.h"
#include "../../core/rng.h"
#include "../../data/task.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_single_thread();
    return 0;
}

/* a dense example: "NAME: " first, '\n' last and unsupervised, every supervised byte the oracle's,
 * one changed byte or one missing not an exact match */
static void check_dense(const TaskSpec *t, const TaskExample *ex, const char *spec) {
    size_t nn = strlen(t->def->name), n_ans = task_answers(ex);
    FUZZ_CHECK(ex->n > nn + 2 && memcmp(ex->text, t->def->name, nn) == 0 && ex->text[ex->n - 1] == '\n' &&
                   !ex->mask[ex->n - 1] && memchr(ex->text, '\n', ex->n - 1) == NULL && n_ans >= 1 &&
                   memchr(ex->text, TASK_SLOT, ex->n) == NULL,
               "%s: a dense example not of the form NAME: BODY\\n with answers (%zu bytes)", spec, ex->n);
    char *ans = malloc(n_ans);
    size_t k = 0;
    for (size_t i = 0; i < ex->n; i++)
        if (ex->mask[i]) ans[k++] = ex->text[i];
    int right = -1;
    FUZZ_CHECK(task_check(t, ex, ans, n_ans, &right) == 1 && right == (int)n_ans,
               "%s: the example's own answers are not an exact match", spec);
    ans[n_ans - 1] ^= 1;
    FUZZ_CHECK(task_check(t, ex, ans, n_ans, &right) == 0 && right == (int)n_ans - 1,
               "%s: a changed answer passes the check", spec);
    FUZZ_CHECK(task_check(t, ex, ans, n_ans - 1, &right) == 0, "%s: a short answer passes", spec);
    free(ans);
}

static void check_example(const TaskSpec *t, const TaskExample *ex, const char *spec) {
    const TaskDef *d = t->def;
    if (ex->mask) {
        check_dense(t, ex, spec);
        return;
    }
    FUZZ_CHECK(ex->answer_start + ex->answer_len == ex->n && ex->answer_len >= 1 && ex->text[ex->n - 1] == '\n' &&
                   memchr(ex->text + ex->answer_start, '\n', ex->answer_len - 1) == NULL,
               "%s: the answer must end in its only '\\n' (%zu + %zu of %zu bytes)", spec, ex->answer_start,
               ex->answer_len, ex->n);
    size_t nn = strlen(d->name);
    if (d->listed) /* RULER's: every byte counted, a question line ending in ':', a list of references */
        FUZZ_CHECK(ex->n == (size_t)ex->len && ex->answer_start > 1 && ex->text[ex->answer_start - 1] == ':' &&
                       ex->text[ex->answer_start] == ' ' && ex->answer_len >= 3,
                   "%s: a RULER example not len bytes ending \"...:\" then \" REFS\\n\" (%zu of %d)", spec, ex->n, ex->len);
    if (d->framed)
        FUZZ_CHECK(ex->answer_start > nn + 2 && memcmp(ex->text, d->name, nn) == 0 && ex->text[nn] == ':' &&
                       ex->text[ex->answer_start - 1] == '|' && memchr(ex->text, '\n', ex->answer_start) == NULL,
                   "%s: a prompt not of the form NAME: BODY|: %.*s", spec, (int)ex->answer_start, ex->text);
    StrBuf again = {0};
    FUZZ_CHECK(task_solve(t, ex->text, ex->answer_start, &again) == 0 && again.len == ex->answer_len &&
                   memcmp(again.s, ex->text + ex->answer_start, again.len) == 0,
               "%s: the oracle disagrees with the example's answer", spec);
    sb_free(&again);
    int right = -1;
    FUZZ_CHECK(task_check(t, ex, ex->text + ex->answer_start, ex->answer_len, &right) == 1 &&
                   right == (int)ex->answer_len,
               "%s: the example's own answer is not an exact match", spec);
    if (d->listed) { /* its own answer recalls every reference, nothing recalls none, one missing fewer */
        int found = -1, total = -1;
        double r = task_recall(t, ex, ex->text + ex->answer_start, ex->answer_len, &found, &total);
        FUZZ_CHECK(r == 1 && found == total && total >= 1, "%s: the example's own answer recalls %d of %d", spec, found,
                   total);
        FUZZ_CHECK(task_recall(t, ex, "", 0, &found, &total) == 0 && found == 0, "%s: nothing recalls %d", spec, found);
        const char *space = memchr(ex->text + ex->answer_start + 1, ' ', ex->answer_len - 1);
        size_t first = space ? (size_t)(space - ex->text) - ex->answer_start : ex->answer_len - 1;
        r = task_recall(t, ex, ex->text + ex->answer_start + first, ex->answer_len - first, &found, NULL);
        FUZZ_CHECK(found == total - 1, "%s: without its first reference the answer recalls %d of %d", spec, found, total);
    }
    char *wrong = malloc(ex->answer_len);
    memcpy(wrong, ex->text + ex->answer_start, ex->answer_len);
    wrong[ex->answer_len - 1] ^= 1; /* the end marker, changed */
    FUZZ_CHECK(task_check(t, ex, wrong, ex->answer_len, &right) == 0 && right == (int)ex->answer_len - 1,
               "%s: a changed answer passes the check", spec);
    FUZZ_CHECK(task_check(t, ex, wrong, ex->answer_len - 1, &right) == 0, "%s: a short answer passes", spec);
    free(wrong);
}

/* a few examples at a length in the option's range, at most ~300 */
static void check_examples(const TaskSpec *t, unsigned char pick, const char *spec) {
    const TaskOpt *o = &t->def->opts[t->def->len_opt];
    double hi = o->hi < o->lo + 300 ? o->hi : o->lo + 300;
    int len = (int)(o->lo + (double)pick / 255.0 * (hi - o->lo));
    Rng rng;
    rng_seed(&rng, pick);
    for (int i = 0; i < 3; i++) {
        TaskExample ex;
        int rc = task_example(t, &rng, len, &ex);
        if (rc != 0) { /* only a length the other options cannot serve (mqar: queries > pairs) */
            FUZZ_CHECK(pelab_errmsg[0] != 0, "%s: an example refused without a message", spec);
            return;
        }
        FUZZ_CHECK(ex.len == len, "%s: asked for length %d, got %d", spec, len, ex.len);
        check_example(t, &ex, spec);
        task_example_free(&ex);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *in = malloc(size + 1);
    memcpy(in, data, size);
    in[size] = 0;
    size_t spec_len = 0;
    while (spec_len < size && in[spec_len] && in[spec_len] != '\n') spec_len++;
    char *spec = in, *prompt = spec_len < size ? in + spec_len + 1 : in + size;
    size_t prompt_len = (size_t)(in + size - prompt);
    spec[spec_len] = 0;

    TaskSpec t;
    if (task_parse(&t, spec) == 0) {
        char text[512], again[512];
        task_format(&t, text, sizeof text);
        TaskSpec t2;
        FUZZ_CHECK(task_parse(&t2, text) == 0, "'%s' writes as '%s', which does not parse: %s", spec, text, pelab_errmsg);
        task_format(&t2, again, sizeof again);
        FUZZ_CHECK(strcmp(text, again) == 0, "'%s' writes as '%s', then as '%s'", spec, text, again);
        check_examples(&t, prompt_len ? (unsigned char)prompt[0] : 0, text);
        /* a short stream with lengths drawn from the spec, when its lengths are small */
        const TaskOpt *o = &t.def->opts[t.def->len_opt];
        if (t.hi[t.def->len_opt] <= o->lo + 300) {
            Rng rng;
            rng_seed(&rng, 3);
            char *stream;
            unsigned char *mask;
            if (task_stream(&t, &rng, 700, &stream, &mask, NULL) == 0) {
                for (int i = 0; i < 700; i++) FUZZ_CHECK(mask[i] <= 1, "%s: mask[%d] = %d", text, i, mask[i]);
                free(stream), free(mask);
            }
        }
    } else {
        FUZZ_CHECK(pelab_errmsg[0] != 0, "spec '%s' refused without a message", spec);
    }

    /* every oracle on the prompt bytes as they are: an answer ending in '\n', or a refusal */
    for (int i = 0; i < task_count(); i++) {
        TaskSpec any;
        FUZZ_CHECK(task_parse(&any, task_def(i)->name) == 0, "%s: %s", task_def(i)->name, pelab_errmsg);
        char *exact = malloc(prompt_len ? prompt_len : 1); /* exactly its bytes: ASan sees a read past them */
        memcpy(exact, prompt, prompt_len);
        StrBuf answer = {0};
        pelab_errmsg[0] = 0;
        if (task_solve(&any, exact, prompt_len, &answer) == 0) /* a dense task's answers have no end marker */
            FUZZ_CHECK(answer.len >= 1 && (task_def(i)->dense || answer.s[answer.len - 1] == '\n'),
                       "%s: an answer without its end marker", task_def(i)->name);
        else FUZZ_CHECK(pelab_errmsg[0] != 0, "%s: a prompt refused without a message", task_def(i)->name);
        sb_free(&answer);
        free(exact);
    }
    free(in);
    return 0;
}
