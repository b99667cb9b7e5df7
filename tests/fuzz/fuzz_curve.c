/* fuzz_curve.c: the loss curve a `train --resume` reads back (train/curve.c, curve_open): a file a
 * user can edit or a kill can cut, whose validation rows decide convergence after the resume.
 *
 * Input: bytes 0-1 give the step resumed at (1..65536); the rest is the curve.csv beside the
 * checkpoint. Kept (rc 0): the validations read back are at steps 1..that step, rising, finite
 * and >= 0, and the curve now holds the header and exactly the rows kept. Refused: one line naming
 * the curve file. Never a crash, a read past the input, a leak or a temporary file left. */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <unistd.h>

#include "../../core/error.h"
#include "../../train/curve.h"
#include "fuzz_common.h"

static char dir[64], ckpt[96], path[128];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_single_thread();
    strcpy(dir, "/tmp/pelab-fuzz-curve-XXXXXX");
    FUZZ_CHECK(mkdtemp(dir), "mkdtemp");
    snprintf(ckpt, sizeof ckpt, "%s/in.safetensors", dir);
    curve_path(ckpt, path, sizeof path);
    return 0;
}

static int files_in_dir(void) {
    int n = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
    if (d) closedir(d);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!dir[0]) LLVMFuzzerInitialize(NULL, NULL);
    if (size < 2) return 0;
    long step = 1 + (long)(data[0] | data[1] << 8);
    FILE *f = fopen(path, "wb");
    FUZZ_CHECK(f && (size == 2 || fwrite(data + 2, 1, size - 2, f) == size - 2) && fclose(f) == 0, "write %s", path);
    LossCurve c;
    int rc = curve_open(&c, ckpt, step, 0);
    if (rc != 0) {
        FUZZ_CHECK(strstr(pelab_errmsg, path) && !strchr(pelab_errmsg, '\n'), "a refusal not one line naming the file: %s",
                   pelab_errmsg);
    } else {
        for (int i = 0; i < c.n_val; i++)
            FUZZ_CHECK(c.val_step[i] >= 1 && c.val_step[i] <= step && (i == 0 || c.val_step[i] > c.val_step[i - 1]) &&
                           isfinite(c.val[i]) && c.val[i] >= 0,
                       "validation %d: step %ld, loss %g (resumed at %ld)", i, c.val_step[i], c.val[i], step);
        FUZZ_CHECK(fflush(c.f) == 0, "flush");
        FILE *kept = fopen(path, "rb");
        FUZZ_CHECK(kept, "the curve is gone");
        char line[600];
        int header = fgets(line, sizeof line, kept) && strncmp(line, CURVE_CSV_COLUMNS, strlen(CURVE_CSV_COLUMNS)) == 0;
        long prev = 0;
        while (fgets(line, sizeof line, kept)) {
            long s = strtol(line, NULL, 10);
            FUZZ_CHECK(s > prev && s <= step, "a kept row at step %ld after %ld (resumed at %ld)", s, prev, step);
            prev = s;
        }
        fclose(kept);
        FUZZ_CHECK(header, "the kept curve has no header");
    }
    curve_close(&c);
    FUZZ_CHECK(files_in_dir() == 1, "%d files beside the curve (a temporary file left)", files_in_dir());
    unlink(path);
    return 0;
}
