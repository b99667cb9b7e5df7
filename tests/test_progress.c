/* test_progress.c: the progress line of long commands (train/progress.h). On a terminal (the flag
 * given, not detected) it redraws in place with \r and clears the line, a milestone stays and a
 * note ends the open line; piped, plain lines only: train's every N steps, counted work's per
 * milestone and per interval, never a \r. Rates and the time left from this process's work (runs
 * done before left out). Then the commands piped, as CI and logs see them: train, compare and eval
 * print their rate and time left in plain lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/sys.h"
#include "../data/corpus.h"
#include "../train/progress.h"
#include "test.h"

/* what was written to f, from its start */
static const char *contents(FILE *f, char *buf, size_t cap) {
    fflush(f);
    rewind(f);
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = 0;
    return buf;
}

static int starts(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

static int count_char(const char *s, char c) {
    int n = 0;
    for (; *s; s++) n += *s == c;
    return n;
}

static int count_str(const char *s, const char *needle) {
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p++) n++;
    return n;
}

static void training_lines(void) {
    static char buf[1 << 16];
    FILE *f = tmpfile();
    Progress p;
    progress_init_to(&p, f, 1, 0, 100, 10);
    for (long s = 1; s <= 100; s++) progress_step(&p, s, 2.5f, 1e-3f, 1000);
    const char *t = contents(f, buf, sizeof buf);
    CHECK(starts(t, "\r\033[Kstep 1/100 | loss 2.5000 | lr 1.00e-03 | 1000 tok/s | ETA ") &&
              strstr(t, "\r\033[Kstep 100/100 |") && count_char(t, '\n') == 0 && p.open_line,
          "terminal: each step redrawn in place, no newline: %.200s", t);
    progress_note(&p, "step %d: validation loss %.4f", 100, 2.25);
    progress_done(&p);
    t = contents(f, buf, sizeof buf);
    CHECK(strstr(t, " | ETA 0m00s\nstep 100: validation loss 2.2500\n") && count_char(t, '\n') == 2 && !p.open_line,
          "a note ends the open line first; done adds nothing after it: %s", strrchr(t, '\r'));
    fclose(f);

    f = tmpfile();
    progress_init_to(&p, f, 0, 0, 100, 10);
    for (long s = 1; s <= 100; s++) progress_step(&p, s, 2.5f, 1e-3f, 1000);
    progress_done(&p);
    t = contents(f, buf, sizeof buf);
    CHECK(!strchr(t, '\r') && !strchr(t, '\033') && count_char(t, '\n') == 11 && starts(t, "step 1/100 | ") &&
              strstr(t, "\nstep 10/100 | ") && strstr(t, "\nstep 100/100 | loss 2.5000 | lr 1.00e-03 | 1000 tok/s | ETA 0m00s\n"),
          "piped: plain lines at step 1, every 10 steps and the last, no \\r: %s", t);
    fclose(f);
}

static void counted_lines(void) {
    static char buf[1 << 16];
    char eta[32];
    progress_format_eta(eta, sizeof eta, 125);
    CHECK(strcmp(eta, "2m05s") == 0, "ETA 125 s: %s", eta);
    progress_format_eta(eta, sizeof eta, 3725);
    CHECK(strcmp(eta, "1h02m") == 0, "ETA 3725 s: %s", eta);

    /* piped, milestones only: a line per finished run; the rate and time left over a minute */
    FILE *f = tmpfile();
    Progress p;
    progress_count_init(&p, f, 0, "compare", "runs", 1, 8, 0, 0);
    p.t_start = now_seconds() - 60; /* as if the first two runs took a minute */
    progress_count(&p, 1, -1, 0, NULL); /* not a milestone, no interval: nothing */
    progress_count(&p, 2, -1, 1, "rope seed 2 done");
    const char *t = contents(f, buf, sizeof buf);
    CHECK(strcmp(t, "compare: 2/8 runs | 2.0 runs/min | 25% | ETA 3m00s | rope seed 2 done\n") == 0,
          "piped milestone: runs, runs/min, share and time left in one plain line: %s", t);
    fclose(f);

    /* runs found finished (done0) took no time here: neither in the rate nor in the time left */
    f = tmpfile();
    progress_count_init(&p, f, 0, "compare", "runs", 1, 8, 1, 0);
    p.t_start = now_seconds() - 60;
    progress_count(&p, 2, -1, 1, NULL);
    t = contents(f, buf, sizeof buf);
    CHECK(strcmp(t, "compare: 2/8 runs | 1.0 runs/min | 25% | ETA 6m00s\n") == 0, "a resumed compare: %s", t);
    fclose(f);

    /* piped with an interval: between milestones a plain line once the interval has passed */
    f = tmpfile();
    progress_count_init(&p, f, 0, "eval", "tok", 0, 1000, 0, 0.05);
    progress_count(&p, 100, 0.1, 0, NULL);
    usleep(60000);
    progress_count(&p, 200, 0.2, 0, NULL);
    progress_count(&p, 300, 0.3, 0, NULL); /* within the interval again: nothing */
    progress_count(&p, 1000, 1, 1, "rule none length 64: ...");
    t = contents(f, buf, sizeof buf);
    CHECK(!strchr(t, '\r') && count_char(t, '\n') == 2 && starts(t, "eval: 200/1000 tok | ") &&
              strstr(t, " tok/s | 20% | ETA ") && strstr(t, "\neval: 1000/1000 tok | ") &&
              strstr(t, " | 100% | ETA done | rule none length 64: ...\n"),
          "piped with an interval: one line per interval and the milestone, tok/s: %s", t);
    fclose(f);

    /* a terminal: redrawn in place between milestones, a milestone kept, a note after an open line */
    f = tmpfile();
    progress_count_init(&p, f, 1, "eval", "tok", 0, 1000, 0, 0);
    progress_count(&p, 500, 0.5, 1, "rule none length 32: ...");
    usleep(120000); /* a terminal redraws at most 10 times a second */
    progress_count(&p, 600, 0.6, 0, NULL);
    progress_count(&p, 650, 0.65, 0, NULL); /* too soon: not redrawn */
    t = contents(f, buf, sizeof buf);
    CHECK(starts(t, "\r\033[Keval: 500/1000 tok | ") && strstr(t, " | rule none length 32: ...\n\r\033[Keval: 600/1000 tok | ") &&
              count_char(t, '\n') == 1 && count_str(t, "\r\033[K") == 2 && p.open_line,
          "terminal: the milestone kept, later progress redrawn in place: %s", t);
    progress_note(&p, "eval: done");
    t = contents(f, buf, sizeof buf);
    CHECK(strstr(t, "\neval: done\n") && !p.open_line, "a note after the open line: %s", t);
    fclose(f);
}

/* the commands through a pipe (run_pelab), as a log or CI sees them */
static void piped_commands(void) {
    const char *dir = test_tmpdir();
    static char out[1 << 16];
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "./pelab train --steps 30 --log-every 10 --dim 16 --layers 1 --heads 2 --seq-len 16 --batch 4 "
                              "--synth-bytes 20000 --threads 1 --out %s/progress.safetensors", dir);
    int rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && !strchr(out, '\r') && !strchr(out, '\033') && strstr(out, "\nstep 10/30 | loss ") &&
              strstr(out, "\nstep 30/30 | ") && strstr(out, " tok/s | ETA "),
          "train piped: plain step lines with tok/s and the time left (exit %d): %s", rc, out);
    snprintf(cmd, sizeof cmd, "./pelab eval %s/progress.safetensors --data " CORPUS_DIR "/tinyshakespeare.txt --lengths 16,32 --max-tokens 2000 --threads 1", dir);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && !strchr(out, '\r') && strstr(out, "\neval: ") && strstr(out, " tok/s | ") &&
              strstr(out, " | 100% | ETA done | rule none length 32: nonoverlap ") && strstr(out, "eval: done in "),
          "eval piped: a plain line per length with tok/s and the time left (exit %d): %s", rc, out);
    snprintf(cmd, sizeof cmd, "./pelab compare --schemes rope,alibi --seeds 1 --dim 16 --layers 1 --heads 2 --seq-len 16 "
                              "--steps 5 --mult 1 --synth-bytes 20000 --eval-tokens 100 --rules none --finetune-steps 0 "
                              "--gen-tokens 0 --keyppl-tokens 0 --threads 1 --out %s/progress-cmp", dir);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && !strchr(out, '\r') && strstr(out, "\ncompare: 1/2 runs | ") && strstr(out, " runs/min | 50% | ETA ") &&
              strstr(out, "\ncompare: 2/2 runs | ") && strstr(out, " | 100% | ETA done | alibi seed 1 done\n"),
          "compare piped: a plain line per finished run with runs/min and the time left (exit %d): %s", rc, out);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && !strstr(out, "runs | "), "a compare with every run finished has nothing to count: %s", out);
}

void test_progress(void) {
    training_lines();
    counted_lines();
    piped_commands();
}
