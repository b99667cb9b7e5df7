/* pelab: a position-encoding laboratory. main() only dispatches subcommands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/kernels.h"
#include "tools/commands.h"

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} Command;

static const Command commands[] = {
    {"train", cmd_train, "train a model on a text file or a built-in synthetic corpus"},
    {"sample", cmd_sample, "generate text from a checkpoint (KV cache)"},
    {"score", cmd_score, "mean NLL / perplexity of a text in windows"},
    {"eval", cmd_eval, "loss by length (both protocols) and by position, with scaling rules"},
    {"passkey", cmd_passkey, "passkey retrieval accuracy by length and depth"},
    {"info", cmd_info, "config, parameters, position scheme and lengths of a checkpoint"},
    {"synth", cmd_synth, "write a built-in synthetic corpus to stdout"},
    {"task", cmd_task, "length-generalization tasks: list them, show examples"},
    {"tokenizer", cmd_tokenizer, "train a byte-level BPE tokenizer; encode and decode with it"},
    {"demo", cmd_demo, "the built-in end-to-end run: train, evaluate past L, sample"},
    {"probe", cmd_probe, "diagnostics: distance, permutation, attention map, cache checklist"},
    {"show", cmd_show, "pictures of the schemes: similarity, decay, wavelength, bias, attention (gnuplot)"},
    {"longrope-search", cmd_longrope_search, "LongRoPE factors for a rotary checkpoint at a longer length"},
    {"compare", cmd_compare, "train every scheme x seed, evaluate past L, write report.md + plots"},
    {"suite", cmd_suite, "the standard suite: every protocol on the schemes, one report, the published claims' verdicts"},
    {"bench", cmd_bench, "training and sampling speed on fixed configurations"},
    {"inspect", cmd_inspect, "a Hugging Face config.json: position encoding, wavelengths, the pelab spec"},
    {"import", cmd_import, "a llama2.c model + tokenizer.bin, or an HF Llama directory -> a pelab checkpoint"},
    {"export", cmd_export, "a pelab RoPE checkpoint -> a llama2.c model + tokenizer.bin, or an HF Llama directory"},
};
enum { N_COMMANDS = sizeof commands / sizeof commands[0] };

static void usage(FILE *f) {
    fprintf(f, "pelab: a position-encoding laboratory (tiny llama-style Transformers in C)\n\n"
               "usage: pelab COMMAND [flags]     (pelab COMMAND --help for its flags)\n\n");
    for (int i = 0; i < N_COMMANDS; i++) fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
}

int main(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 1 : 0;
    }
    /* PELAB_ISA=avx2: the kernel set of an older CPU on this one (core/kernels.h), for measuring it */
    const char *isa = getenv("PELAB_ISA");
    if (isa && *isa && kernels_force(isa) != 0) {
        fprintf(stderr, "pelab: %s\n", pelab_errmsg);
        return 1;
    }
    for (int i = 0; i < N_COMMANDS; i++)
        if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "pelab: unknown command '%s' (see pelab --help)\n", argv[1]);
    return 1;
}
