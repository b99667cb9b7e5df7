/* test_hf_config.c: Hugging Face config.json -> position mechanism and pelab spec (io/hf_config.h,
 * `pelab inspect`). Hand-made configs for every rope_scaling type and mechanism, against specs
 * checked by hand; malformed fields each one warning, never a crash; wavelengths printed by
 * inspect against 2 pi / theta_j computed here. With ../shared/data: the 15 real configs. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "../io/hf_config.h"
#include "test.h"

/* spec of a config text ("" and the refusal in why when there is none) */
static int spec_of(const char *json, HfConfig *c, char *spec, size_t n, char *why, size_t wn) {
    spec[0] = why[0] = 0;
    if (hf_config_parse(json, strlen(json), "cfg", c) != 0) return snprintf(why, wn, "%s", pelab_errmsg), -1;
    if (hf_config_pelab_spec(c, "cfg.json", spec, n, NULL, 0, NULL, 0) != 0) return snprintf(why, wn, "%s", pelab_errmsg), -1;
    return 0;
}

#define LLAMA_HEAD "{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 4, "

static const struct {
    const char *json, *want; /* want: the spec, or with a leading '!' a needle of the refusal */
    int warnings;
} cases[] = {
    {LLAMA_HEAD "\"max_position_embeddings\": 2048, \"rope_theta\": 500000.0}",
     "rope:base=500000,layout=half,fraction=1,scale=none,orig_len=2048,keep=1,max_period=0", 0},
    {LLAMA_HEAD "\"max_position_embeddings\": 2048, \"rope_scaling\": {\"type\": \"linear\", \"factor\": 4.0}}",
     "rope:base=10000,layout=half,fraction=1,scale=pi:4,orig_len=2048,keep=1,max_period=0", 0},
    {LLAMA_HEAD "\"max_position_embeddings\": 2048, \"rope_scaling\": {\"rope_type\": \"dynamic\", \"factor\": 2}}",
     "rope:base=10000,layout=half,fraction=1,scale=dynamic-ntk:2,orig_len=2048,keep=1,max_period=0", 0},
    /* yarn: with original_max_position_embeddings the scale is max / original */
    {LLAMA_HEAD "\"max_position_embeddings\": 8192, \"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4, "
                "\"original_max_position_embeddings\": 2048}}",
     "rope:base=10000,layout=half,fraction=1,scale=yarn:4,orig_len=2048,keep=1,max_period=0", 0},
    {LLAMA_HEAD "\"max_position_embeddings\": 2048, \"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4, "
                "\"beta_fast\": 16}}", "!beta_fast 16", 0},
    {LLAMA_HEAD "\"max_position_embeddings\": 2048, \"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4, "
                "\"beta_slow\": 2}}", "!beta_slow 2", 0},
    {LLAMA_HEAD "\"max_position_embeddings\": 2048, \"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4, "
                "\"mscale\": 0.707, \"mscale_all_dim\": 1}}", "!mscale_all_dim", 0},
    {LLAMA_HEAD "\"max_position_embeddings\": 2048, \"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4, "
                "\"attention_factor\": 1.5}}", "!attention_factor", 0},
    {LLAMA_HEAD "\"max_position_embeddings\": 65536, \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8, "
                "\"low_freq_factor\": 1, \"high_freq_factor\": 4, \"original_max_position_embeddings\": 8192}}",
     "rope:base=10000,layout=half,fraction=1,scale=llama3:8,orig_len=8192,keep=1,max_period=0", 0},
    {LLAMA_HEAD "\"max_position_embeddings\": 65536, \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8, "
                "\"low_freq_factor\": 2, \"high_freq_factor\": 4, \"original_max_position_embeddings\": 8192}}",
     "!low_freq_factor 2", 0},
    /* the newer key, rope_theta inside it */
    {LLAMA_HEAD "\"max_position_embeddings\": 1024, \"rope_parameters\": {\"rope_type\": \"default\", "
                "\"rope_theta\": 20000}}",
     "rope:base=20000,layout=half,fraction=1,scale=none,orig_len=1024,keep=1,max_period=0", 0},
    /* GPT-J rotates adjacent pairs; GPT-NeoX a leading share (rotary_pct) */
    {"{\"model_type\": \"gptj\", \"n_embd\": 64, \"n_head\": 4, \"n_layer\": 2, \"n_positions\": 2048, "
     "\"rotary_dim\": 8}",
     "rope:base=10000,layout=interleaved,fraction=0.5,scale=none,orig_len=2048,keep=1,max_period=0", 0},
    {"{\"model_type\": \"gpt_neox\", \"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 2, "
     "\"max_position_embeddings\": 2048, \"rotary_pct\": 0.25, \"rotary_emb_base\": 10000}",
     "rope:base=10000,layout=half,fraction=0.25,scale=none,orig_len=2048,keep=1,max_period=0", 0},
    /* Llama 4's interleaved NoPE layers: every 4th */
    {"{\"model_type\": \"llama4_text\", \"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 8, "
     "\"max_position_embeddings\": 4096, \"no_rope_layer_interval\": 4}",
     "rope:base=10000,layout=half,fraction=1,scale=none,orig_len=4096,keep=1,max_period=0+nope@3,7", 0},
    {"{\"model_type\": \"llama4_text\", \"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 4, "
     "\"max_position_embeddings\": 4096, \"no_rope_layers\": [1, 0, 1, 0]}",
     "rope:base=10000,layout=half,fraction=1,scale=none,orig_len=4096,keep=1,max_period=0+nope@1,3", 0},
    /* its temperature tuning, in the NoPE layers only */
    {"{\"model_type\": \"llama4_text\", \"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 4, "
     "\"max_position_embeddings\": 4096, \"no_rope_layer_interval\": 4, \"attn_temperature_tuning\": true, "
     "\"floor_scale\": 8192, \"attn_scale\": 0.1}",
     "rope:base=10000,layout=half,fraction=1,scale=none,orig_len=4096,keep=1,max_period=0+temp:scale=0.1,floor=8192,"
     "layers=nope+nope@3", 0},
    /* 400 NoPE layers: the spec outgrows pelab's limit and is refused in one line (it overflowed a
     * fixed buffer once) */
    {"{\"model_type\": \"llama4_text\", \"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 400, "
     "\"max_position_embeddings\": 4096, \"no_rope_layer_interval\": 1}", "!spec too long", 0},
    /* rotary_dim past the head (64 of 16): the whole head, one warning (the clamp once ran before the
     * conversion and let fraction 4 through) */
    {"{\"model_type\": \"gptj\", \"n_embd\": 64, \"n_head\": 4, \"n_layer\": 2, \"n_positions\": 2048, "
     "\"rotary_dim\": 64}",
     "rope:base=10000,layout=interleaved,fraction=1,scale=none,orig_len=2048,keep=1,max_period=0", 1},
    /* no_rope_layers longer than the model: the NoPE layer past it does not count, so no +temp without
     * +nope@; one warning for the length */
    {"{\"model_type\": \"llama4_text\", \"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 2, "
     "\"max_position_embeddings\": 4096, \"no_rope_layers\": [1, 1, 1, 0], \"attn_temperature_tuning\": true}",
     "rope:base=10000,layout=half,fraction=1,scale=none,orig_len=4096,keep=1,max_period=0", 1},
    {"{\"model_type\": \"gpt2\", \"n_embd\": 64, \"n_head\": 4, \"n_layer\": 2, \"n_positions\": 1024}",
     "learned:max_len=1024", 0},
    {"{\"model_type\": \"t5\", \"d_model\": 64, \"num_heads\": 4, \"relative_attention_num_buckets\": 16, "
     "\"relative_attention_max_distance\": 64}", "t5:buckets=16,max_distance=64", 0},
    {"{\"model_type\": \"mpt\", \"d_model\": 64, \"n_heads\": 4, \"n_layers\": 2, \"max_seq_len\": 2048, "
     "\"attn_config\": {\"alibi\": true}}", "alibi", 0},
    {"{\"model_type\": \"bloom\", \"hidden_size\": 64, \"n_head\": 4, \"n_layer\": 2}", "alibi", 0},
    {"{\"model_type\": \"qwen\", \"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 2, "
     "\"max_position_embeddings\": 8192, \"seq_length\": 2048, \"use_logn_attn\": true}",
     "rope:base=10000,layout=half,fraction=1,scale=none,orig_len=8192,keep=1,max_period=0+logn:len=2048", 0},
    /* malformed: one warning each, the rest still read */
    {LLAMA_HEAD "\"max_position_embeddings\": 2048, \"rope_theta\": \"big\"}",
     "rope:base=10000,layout=half,fraction=1,scale=none,orig_len=2048,keep=1,max_period=0", 1},
    {LLAMA_HEAD "\"max_position_embeddings\": -5, \"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": -2}}",
     "!rope_scaling.factor: missing", 3 /* max_position_embeddings, factor, then factor missing */},
    {LLAMA_HEAD "\"max_position_embeddings\": 2048, \"rope_scaling\": {\"rope_type\": \"su\", \"factor\": 2}}",
     "!unknown to HF and pelab", 1},
    {LLAMA_HEAD "\"max_position_embeddings\": 2048, \"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 2, "
                "\"wibble\": 1}}",
     "rope:base=10000,layout=half,fraction=1,scale=pi:2,orig_len=2048,keep=1,max_period=0", 1},
    {LLAMA_HEAD "\"max_position_embeddings\": 2048, \"rope_scaling\": [2]}",
     "rope:base=10000,layout=half,fraction=1,scale=none,orig_len=2048,keep=1,max_period=0", 1},
    {"{\"model_type\": \"llama\", \"hidden_size\": 64, \"max_position_embeddings\": 2048}",
     "rope:base=10000,layout=half,fraction=1,scale=none,orig_len=2048,keep=1,max_period=0", 1},
    {"{\"model_type\": \"weird\", \"hidden_size\": 64}", "!no position mechanism", 2},
};

static void check_cases(void) {
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        HfConfig c;
        char spec[512], why[512];
        int rc = spec_of(cases[i].json, &c, spec, sizeof spec, why, sizeof why);
        if (cases[i].want[0] == '!')
            CHECK(rc != 0 && strstr(why, cases[i].want + 1) && !strchr(why, '\n'),
                  "case %zu: refused naming '%s' (got rc %d, spec '%s', why '%s')", i, cases[i].want + 1, rc, spec, why);
        else CHECK(rc == 0 && strcmp(spec, cases[i].want) == 0, "case %zu: spec %s, want %s (%s)", i, spec, cases[i].want, why);
        CHECK(c.n_warn == cases[i].warnings, "case %zu: %d warnings, want %d (first: %s)", i, c.n_warn,
              cases[i].warnings, c.n_warn ? c.warn[0] : "-");
        for (int w = 0; w < c.n_warn; w++) CHECK(!strchr(c.warn[w], '\n'), "case %zu: a warning is one line", i);
    }
    HfConfig c;
    CHECK(hf_config_parse("[1]", 3, "a.json", &c) != 0 && strstr(pelab_errmsg, "a.json: expected a JSON object"),
          "an array is refused: %s", pelab_errmsg);
    CHECK(hf_config_parse("{\"a\":", 5, "b.json", &c) != 0 && strstr(pelab_errmsg, "b.json: not valid JSON"),
          "broken JSON is refused: %s", pelab_errmsg);
    /* yarn's attention factor: 0.1 ln s + 1, or HF's mscale ratio */
    const char *ds = LLAMA_HEAD "\"max_position_embeddings\": 163840, \"rope_scaling\": {\"type\": \"yarn\", \"factor\": 40, "
                                "\"mscale\": 1.0, \"mscale_all_dim\": 0.5, \"original_max_position_embeddings\": 4096}}";
    hf_config_parse(ds, strlen(ds), "ds", &c);
    double s = 40, want = (0.1 * log(s) + 1) / (0.05 * log(s) + 1);
    CHECK(fabs(hf_config_attention_factor(&c) - want) < 1e-12 && hf_config_scale(&c) == 40,
          "yarn mscale ratio %.12g, want %.12g", hf_config_attention_factor(&c), want);
}

/* inspect prints pair j's wavelength 2 pi / theta_j after the rule: llama3 on three pairs */
static void check_wavelengths(void) {
    static char out[65536], cmd[1024];
    const char *dir = test_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/l3.json", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        CHECK(0, "cannot write %s", path);
        return;
    }
    fprintf(f, LLAMA_HEAD "\"max_position_embeddings\": 65536, \"rope_theta\": 500000, \"rope_scaling\": "
               "{\"rope_type\": \"llama3\", \"factor\": 8, \"low_freq_factor\": 1, \"high_freq_factor\": 4, "
               "\"original_max_position_embeddings\": 256}}");
    fclose(f);
    snprintf(cmd, sizeof cmd, "./pelab inspect %s", path);
    int rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "pelab: --pos rope:base=500000,layout=half,fraction=1,scale=llama3:8,orig_len=256"),
          "inspect llama3: %s", out);
    /* head 16: pairs j = 0..7 at 500000^(-2j/16); L 256: high-frequency pairs (wavelength < 64) keep
     * theirs, low (> 256) are divided by 8, the middle ones smoothed */
    for (int j = 0; j < 8; j += 3) {
        double w = 2 * M_PI * pow(500000.0, 2.0 * j / 16), L = 256;
        if (w > L) w *= 8;
        else if (w >= L / 4) {
            double sm = (L / w - 1) / 3, th = 2 * M_PI / w;
            w = 2 * M_PI / ((1 - sm) * th / 8 + sm * th);
        }
        char line[128];
        snprintf(line, sizeof line, "pair %3d: %14.6g positions", j, w);
        CHECK(strstr(out, line) != NULL, "inspect prints '%s'", line);
    }
    expect_pelab_error("./pelab inspect /nonexistent/config.json", "/nonexistent/config.json");
    expect_pelab_error("./pelab inspect /nonexistent/m.safetensors", "a checkpoint, not a Hugging Face config.json (`pelab info");
}

/* the real configs: mechanism and spec, or the field that has none */
static void check_shared(void) {
    const char *data = shared_data_dir();
    if (!data) {
        fprintf(stderr, "  test_hf_config: no ../shared/data: the 15 real configs are skipped\n");
        return;
    }
    static const struct {
        const char *file, *want; /* the spec's start, or '!' and a needle of the refusal */
    } real[] = {
        {"llama2-7b-hf.json", "rope:base=10000,layout=half,fraction=1,scale=none,orig_len=4096"},
        {"llama3.2-1b.json", "rope:base=500000,layout=half,fraction=1,scale=llama3:32,orig_len=8192"},
        {"llama3.2-1b-instruct.json", "rope:base=500000,layout=half,fraction=1,scale=llama3:32,orig_len=8192"},
        {"llama3.1-8b-instruct.json", "rope:base=500000,layout=half,fraction=1,scale=llama3:8,orig_len=8192"},
        {"deepseek-v3.json", "!qk_rope_head_dim 64"},
        {"gpt-oss-120b.json", "!truncate false"},
        {"phi-3-mini-128k-instruct-ollama.json", "rope:base=10000,layout=half,fraction=1,scale=longrope:"},
        {"phi-1.json", "rope:base=10000,layout=half,fraction=0.5,scale=none,orig_len=2048"},
        {"phi-2.json", "rope:base=10000,layout=half,fraction=0.4"},
        {"gpt2-large.json", "learned:max_len=1024"},
        {"t5-small-resaved.json", "t5:buckets=32,max_distance=128"},
        {"pythia-410m-finetune.json", "rope:base=10000,layout=half,fraction=0.25,scale=none,orig_len=2048"},
        {"gemma2-2b-it-finetune.json", "rope:base=10000,layout=half,fraction=1,scale=none,orig_len=8192"},
        {"mpt-alibi-custom.json", "alibi"},
        {"qwen-vl-chat-int4.json", "!use_dynamic_ntk"},
    };
    for (size_t i = 0; i < sizeof real / sizeof real[0]; i++) {
        char path[512], spec[512], why[512] = "";
        snprintf(path, sizeof path, "%s/hf-configs/%s", data, real[i].file);
        HfConfig c;
        int rc = hf_config_read(path, &c);
        if (rc == 0) rc = hf_config_pelab_spec(&c, path, spec, sizeof spec, NULL, 0, NULL, 0);
        if (rc != 0) snprintf(why, sizeof why, "%s", pelab_errmsg);
        if (real[i].want[0] == '!')
            CHECK(rc != 0 && strstr(why, real[i].want + 1), "%s: refused naming %s (got %s)", real[i].file,
                  real[i].want + 1, rc ? why : spec);
        else CHECK(rc == 0 && strncmp(spec, real[i].want, strlen(real[i].want)) == 0, "%s: spec %s, want %s... (%s)",
                   real[i].file, rc ? "-" : spec, real[i].want, why);
        CHECK(c.n_warn == 0, "%s: %d warnings (first: %s)", real[i].file, c.n_warn, c.n_warn ? c.warn[0] : "");
    }
    /* Phi-3: L 4096 at the top level, s = 131072 / 4096, attention factor sqrt(1 + ln 32 / ln 4096) */
    char path[512];
    snprintf(path, sizeof path, "%s/hf-configs/phi-3-mini-128k-instruct-ollama.json", data);
    HfConfig c;
    hf_config_read(path, &c);
    double want = sqrt(1 + log(32.0) / log(4096.0));
    CHECK(hf_config_original_length(&c) == 4096 && hf_config_scale(&c) == 32 &&
          fabs(hf_config_attention_factor(&c) - want) < 1e-12, "phi-3 longrope L %ld s %g factor %.12g",
          hf_config_original_length(&c), hf_config_scale(&c), hf_config_attention_factor(&c));
}

/* inspect on configs that once crashed it: exit 0 (or a one-line refusal), the warnings printed */
static void check_inspect_survives(void) {
    static const struct {
        const char *name, *json, *needle;
    } cfgs[] = {
        /* a stack overflow: the spec built by snprintf past its buffer */
        {"nope400", "{\"model_type\": \"llama4_text\", \"hidden_size\": 64, \"num_attention_heads\": 4, "
                    "\"num_hidden_layers\": 400, \"max_position_embeddings\": 4096, \"no_rope_layer_interval\": 1}",
         "pelab: no equivalent spec: the pelab spec would be"},
        /* SIGFPE: inspect built the model with 0 heads for its lengths line */
        {"noheads", "{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
                    "\"max_position_embeddings\": 2048}",
         "warning: "},
    };
    static char out[65536];
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
        char path[512], cmd[1024];
        snprintf(path, sizeof path, "%s/inspect-%s.json", test_tmpdir(), cfgs[i].name);
        FILE *f = fopen(path, "w");
        if (!f) {
            CHECK(0, "cannot write %s", path);
            continue;
        }
        fputs(cfgs[i].json, f);
        fclose(f);
        snprintf(cmd, sizeof cmd, "./pelab inspect %s", path);
        int rc = run_pelab(cmd, out, sizeof out);
        CHECK((rc == 0 || rc == 1) && strstr(out, cfgs[i].needle), "inspect %s: exit %d (0 or 1, never a crash), "
              "'%s' in: %s", cfgs[i].name, rc, cfgs[i].needle, out);
    }
    CHECK(strstr(out, "num_attention_heads: missing") && strstr(out, "lengths: training 2048"),
          "inspect without num_attention_heads: one warning and the lengths: %s", out);
}

void test_hf_config(void) {
    check_cases();
    check_inspect_survives();
    check_wavelengths();
    check_shared();
}
