/* synth_cmd.c: `pelab synth NAME`: write a built-in synthetic corpus to stdout. */
#include <stdio.h>
#include <stdlib.h>

#include "../core/error.h"
#include "../data/synth.h"
#include "args.h"
#include "commands.h"

int cmd_synth(int argc, char **argv) {
    unsigned long long seed = 1;
    int bytes = 1 << 20;
    const OptSpec opts[] = {
        {"--seed", OPT_U64, &seed, 0, 1.8e19, "generator seed (the same seed gives the same text)"},
        {"--bytes", OPT_INT, &bytes, 1, 1 << 30, "bytes to write"},
    };
    const char *pos_args[1];
    int n_pos;
    char synopsis[128];
    snprintf(synopsis, sizeof synopsis, "NAME [flags]   (NAME: %s)", synth_names());
    args_parse("synth", synopsis, argc, argv, 1, opts, sizeof opts / sizeof opts[0], pos_args, 1, &n_pos);
    if (n_pos != 1) pelab_die("synth: expected a generator name (%s)", synth_names());
    char *text;
    if (synth_generate(pos_args[0], seed, (size_t)bytes, &text) != 0) pelab_die("%s", pelab_errmsg);
    if (fwrite(text, 1, (size_t)bytes, stdout) != (size_t)bytes) pelab_die("synth: write to stdout failed");
    free(text);
    return 0;
}
