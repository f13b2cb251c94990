/* attnlab's miniature language model (the Cog paper's Table 4 in miniature, Lv et al. 2024, arXiv:2411.07176): byte-level
   Cogformers (RMSNorm pre-norm blocks, RoPE, SwiGLU, no biases, an untied head, document masking
   at BOS tokens) trained with AdamW (betas 0.9 / 0.95, weight decay 0.1 on the matrices, clipping
   at 1.0, warmup then cosine to 4%) on a text corpus, one model per (variant, seed), the runs in
   parallel over the cores; validation loss curves, a final table, CSV and SVG.

     attnlab lm [--corpus PATH] --variants softmax,cog,cog-first,cog-all,ea,diff,centered
                --layers 4 --dmodel 128 --heads 4 --ctx 128 --batch 16 --steps 2000 --seeds 2

   Variants: softmax everywhere; cog (Lv et al. 2024, Sec. 4.1: softmax in the first and last layers, Cog in the
   others); cog-first (softmax in layer 0 only); cog-all; ea, diff, centered in every layer. The
   corpus is a file or a folder (its regular files, by name), split into documents at blank lines;
   tokens are bytes, with 256 the BOS token that opens every document; the last 10% of the tokens
   are the validation set. The default corpus is examples/data/sample.txt (the GPL-3 text, as
   /usr/share/common-licenses ships it). */
#include "../attn.h"
#include "attnlab.h"
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LM_BOS 256
#define LM_VOCAB 257
#define LM_MAX_VARIANTS 8
#define LM_MAX_CORPUS (256L << 20) /* bytes of text: an endless stream (a pipe, /dev/zero) stops here */
#define LM_PROBE_NS 5
static const char *lm_prompt[2] = {"Is there a zero in the following sequences?", "How many ones are in the following sequences?"};

typedef struct {
    const char *corpus, *csv, *svg, *probe_svg, *probe_csv, *heatmap, *save;
    int layers, dmodel, heads, ctx, batch, seeds, eval_every, eval_windows, threads, nvar, warmup, prompts;
    sparse_opts sparse;           /* sparse attention patterns in every layer (0: none) */
    long steps;
    double lr;
    char variant[LM_MAX_VARIANTS][16];
} lm_opts;

typedef struct {
    int var, seed, nevals, failed;
    long *step;
    double *train, *valid, final_valid;
    double probe[2][2][LM_PROBE_NS]; /* [task][paper, code][n]: the collapse probes after training, the
                                        mean over the prompts */
    run_progress prog;               /* steps done and the latest validation loss */
} lm_run;

typedef struct {
    int *tok;
    long n, ntrain; /* tokens; the first ntrain are for training */
} lm_data;


static void lm_usage(FILE *f)
{
    fprintf(f,
            "usage: attnlab lm [options]   (a miniature of the Cog paper's language models, Lv et al. 2024)\n"
            "  --corpus PATH      a text file, or a folder of them (256 MB at most) [examples/data/sample.txt]\n"
            "  --variants V,..    softmax, cog (softmax in the first and last layers), cog-first,\n"
            "                     cog-all, ea, diff, centered                 [softmax,cog,cog-first,cog-all]\n"
            "  --layers L         blocks (cog has Cog layers only from 3 on)  [4]\n"
            "  --dmodel D         width                                       [128]\n"
            "  --heads H          heads (D / H each; even for diff)           [4]\n"
            "  --ctx T            tokens per training window                  [128]\n"
            "  --batch B          windows per step                            [16]\n"
            "  --steps S          optimizer steps                             [2000]\n"
            "  --lr X             AdamW peak rate                             [3e-3]\n"
            "  --warmup W         linear warmup steps, then cosine to 4%%      [100]\n"
            "  --seeds S          seeds per variant                           [2]\n"
            "  --eval-every E     validate every E steps                      [200]\n"
            "  --eval-windows N   validation windows of ctx tokens            [64]\n"
            "  --threads T        parallel runs (0: all cores)                [0]\n"
            SPARSE_HELP
            "  --csv F, --svg F   the curves\n"
            "  --save F           each run's trained model (F-VARIANT-sSEED.ckpt when there are several;\n"
            "                     attnlab sample --load F generates text with it)\n"
            "  --heatmap PREFIX   seed 0's attention weights (head 0 of layer 1) on the first 48\n"
            "                     validation bytes, PREFIX-VARIANT.svg, a signed colour scale (Cog's\n"
            "                     negative weights in blue)\n"
            "  --probe-svg F      the collapse probes (Lv et al. 2024, Sec. 3.2) after training, per variant and n,\n"
            "                     mean and 95%% interval over seeds (the table is always printed when the\n"
            "                     context holds the prompts)\n"
            "  --probe-prompts K  the probes' inputs: the task's question, then K - 1 windows of validation\n"
            "                     text as long as it (the same for every run); a model's value is the mean\n"
            "                     over them                                   [1]\n"
            "  --probe-csv F      every model's probe values (variant, seed, task, n, paper, code)\n"
            "Losses are in nats per byte (cross-entropy over every position).\n");
}

static int lm_parse(int argc, char **argv, lm_opts *o)
{
    int i;
    memset(o, 0, sizeof *o);
    o->corpus = "examples/data/sample.txt"; o->layers = 4; o->dmodel = 128; o->heads = 4; o->ctx = 128; o->batch = 16; o->steps = 2000;
    o->lr = 3e-3; o->warmup = 100; o->seeds = 2; o->eval_every = 200; o->eval_windows = 64; o->nvar = 4;
    o->prompts = 1;
    strcpy(o->variant[0], "softmax"); strcpy(o->variant[1], "cog"); strcpy(o->variant[2], "cog-first"); strcpy(o->variant[3], "cog-all");
    for (i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1, e;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { lm_usage(stdout); help_shown = 1; return 0; }
        if (!v) { fprintf(stderr, "attnlab lm: %s needs a value (or is unknown; see --help)\n", a); return 0; }
        if (!strcmp(a, "--corpus")) o->corpus = v;
        else if (!strcmp(a, "--layers")) ok = parse_int(v, 1, &o->layers) && o->layers <= ATTN_MAX_LAYERS;
        else if (!strcmp(a, "--dmodel")) ok = parse_int(v, 2, &o->dmodel) && o->dmodel <= MAX_WIDTH;
        else if (!strcmp(a, "--heads")) ok = parse_int(v, 1, &o->heads);
        else if (!strcmp(a, "--ctx")) ok = parse_int(v, 2, &o->ctx) && o->ctx <= MAX_WIDTH;
        else if (!strcmp(a, "--batch")) ok = parse_int(v, 1, &o->batch) && o->batch <= MAX_WIDTH;
        else if (!strcmp(a, "--steps")) ok = parse_int(v, 1, &e) && (o->steps = e, 1);
        else if (!strcmp(a, "--lr")) ok = parse_double(v, &o->lr) && o->lr > 0;
        else if (!strcmp(a, "--warmup")) ok = parse_int(v, 0, &o->warmup);
        else if (!strcmp(a, "--seeds")) ok = parse_int(v, 1, &o->seeds) && o->seeds <= MAX_SEEDS;
        else if (!strcmp(a, "--eval-every")) ok = parse_int(v, 1, &o->eval_every);
        else if (!strcmp(a, "--eval-windows")) ok = parse_int(v, 1, &o->eval_windows) && o->eval_windows <= MAX_WIDTH;
        else if (!strcmp(a, "--threads")) ok = parse_int(v, 0, &o->threads) && o->threads <= MAX_THREADS;
        else if (sparse_option(&o->sparse, a, v, &ok)) { /* ok says whether v is valid */ }
        else if (!strcmp(a, "--csv")) o->csv = v;
        else if (!strcmp(a, "--svg")) o->svg = v;
        else if (!strcmp(a, "--probe-svg")) o->probe_svg = v;
        else if (!strcmp(a, "--probe-csv")) o->probe_csv = v;
        else if (!strcmp(a, "--probe-prompts")) ok = parse_int(v, 1, &o->prompts) && o->prompts <= MAX_WIDTH;
        else if (!strcmp(a, "--heatmap")) o->heatmap = v;
        else if (!strcmp(a, "--save")) o->save = v;
        else if (!strcmp(a, "--variants")) {
            char buf[256], *tok, *save = NULL;
            static const char *known[7] = {"softmax", "cog", "cog-first", "cog-all", "ea", "diff", "centered"};
            snprintf(buf, sizeof buf, "%s", v);
            o->nvar = 0;
            for (tok = strtok_r(buf, ",", &save); tok && ok; tok = strtok_r(NULL, ",", &save)) {
                int k;
                for (k = 0; k < 7 && strcmp(known[k], tok); k++) {}
                ok = k < 7 && o->nvar < LM_MAX_VARIANTS;
                if (ok) snprintf(o->variant[o->nvar++], sizeof o->variant[0], "%s", tok);
            }
            ok = ok && o->nvar > 0;
        } else { fprintf(stderr, "attnlab lm: unknown option %s (see attnlab lm --help)\n", a); return 0; }
        if (!ok) { fprintf(stderr, "attnlab lm: bad value '%s' for %s (see attnlab lm --help)\n", v, a); return 0; }
        i++;
    }
    if (o->dmodel % o->heads) { fprintf(stderr, "attnlab lm: --dmodel %d is not a multiple of --heads %d\n", o->dmodel, o->heads); return 0; }
    for (i = 0; i < o->nvar; i++) /* a Cog placement with no Cog layer would train softmax under its name */
        if ((!strcmp(o->variant[i], "cog") && o->layers <= 2) || (!strcmp(o->variant[i], "cog-first") && o->layers < 2)) {
            fprintf(stderr, "attnlab lm: --variants %s has no Cog layer with --layers %d (cog: softmax in the first and "
                    "last layers; cog-first: in the first); use more layers or cog-all\n", o->variant[i], o->layers);
            return 0;
        }
    if (o->warmup >= o->steps) o->warmup = (int)(o->steps / 10);
    return 1;
}

/* Appends the bytes of one file to the token stream: BOS before every paragraph (blank lines
   separate them). Returns 0 if it cannot be read. */
static int lm_add_file(lm_data *d, const char *path, long *cap)
{
    FILE *f = fopen(path, "rb");
    int c, prev = '\n', blank = 1;
    if (!f) return 0;
    while ((c = fgetc(f)) != EOF) {
        if (d->n >= LM_MAX_CORPUS) {
            fprintf(stderr, "attnlab lm: the corpus passes %ld MB at %s, the most attnlab lm reads\n", LM_MAX_CORPUS >> 20,
                    path);
            fclose(f);
            errno = EFBIG;
            return 0;
        }
        if (d->n + 2 > *cap) {
            int *t = (int *)realloc(d->tok, sizeof(int) * (size_t)(*cap = 2 * *cap + 4096));
            if (!t) { fclose(f); return 0; }
            d->tok = t;
        }
        if (blank && c != '\n' && c != ' ') { d->tok[d->n++] = LM_BOS; blank = 0; } /* a paragraph starts */
        d->tok[d->n++] = c;
        if (c == '\n' && prev == '\n') blank = 1;
        prev = c;
    }
    fclose(f);
    return 1;
}

static int lm_cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The corpus: one file, or the regular files of a folder in name order; one line and 0 when it
   cannot be read or holds too little text. */
static int lm_load(lm_data *d, const lm_opts *o)
{
    struct stat st;
    long cap = 0;
    memset(d, 0, sizeof *d);
    if (stat(o->corpus, &st) != 0) { fprintf(stderr, "attnlab lm: cannot read the corpus %s: %s\n", o->corpus, strerror(errno)); return 0; }
    if (S_ISDIR(st.st_mode)) {
        DIR *dir = opendir(o->corpus);
        struct dirent *e;
        char **names = NULL, path[4096];
        int n = 0, k;
        while (dir && (e = readdir(dir)) != NULL) {
            char **t;
            if (e->d_name[0] == '.') continue;
            if (!(t = (char **)realloc(names, sizeof(char *) * (size_t)(n + 1)))) break;
            names = t;
            names[n++] = strdup(e->d_name);
        }
        if (dir) closedir(dir);
        if (n > 0) qsort(names, (size_t)n, sizeof(char *), lm_cmp_str); /* an empty folder: names is NULL */
        for (k = 0; k < n; k++) {
            snprintf(path, sizeof path, "%s/%s", o->corpus, names[k]);
            if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && !lm_add_file(d, path, &cap)) {
                fprintf(stderr, "attnlab lm: cannot read %s: %s\n", path, strerror(errno));
                while (k < n) free(names[k++]);
                free(names);
                free(d->tok);
                return 0;
            }
            free(names[k]);
        }
        free(names);
    } else if (!lm_add_file(d, o->corpus, &cap)) {
        fprintf(stderr, "attnlab lm: cannot read the corpus %s: %s\n", o->corpus, strerror(errno));
        return 0;
    }
    d->ntrain = d->n - d->n / 10;
    if (d->n / 10 < o->ctx + 1 || d->ntrain < o->ctx + 1) {
        fprintf(stderr, "attnlab lm: the corpus %s holds %ld tokens; --ctx %d needs at least %d\n", o->corpus, d->n, o->ctx, 10 * (o->ctx + 1));
        free(d->tok);
        return 0;
    }
    return 1;
}

/* The model of a variant: the Cogformer block, the kind of each layer by the variant's rule. */
static attn_transformer_config lm_config(const lm_opts *o, const char *v)
{
    attn_transformer_config c;
    int l;
    memset(&c, 0, sizeof c);
    c.vocab = c.out = LM_VOCAB; c.d = o->dmodel; c.layers = o->layers; c.heads = o->heads; c.dk = c.dv = o->dmodel / o->heads;
    c.mlp = (8 * o->dmodel / 3 + 7) / 8 * 8; c.max_T = o->ctx; c.causal = 1; c.pos = ATTN_POS_ROPE; c.norm = ATTN_NORM_RMS;
    c.eps = (attn_float)1e-6; c.act = ATTN_ACT_SILU; c.glu = 1; c.doc_mask = 1; c.bos = LM_BOS; c.init = ATTN_INIT_NORMAL;
    sparse_apply(&o->sparse, &c);
    for (l = 0; l < c.layers; l++) {
        attn_kind k = ATTN_SOFTMAX;
        if (!strcmp(v, "cog-all")) k = ATTN_COG;
        else if (!strcmp(v, "cog")) k = l == 0 || l == c.layers - 1 ? ATTN_SOFTMAX : ATTN_COG;
        else if (!strcmp(v, "cog-first")) k = l == 0 ? ATTN_SOFTMAX : ATTN_COG;
        else if (!strcmp(v, "ea")) k = ATTN_EXPRESSIVE;
        else if (!strcmp(v, "diff")) k = ATTN_DIFFERENTIAL;
        else if (!strcmp(v, "centered")) k = ATTN_CENTERED;
        c.kinds[l] = k;
    }
    return c;
}

typedef struct {
    int *tok, *targets;
    attn_float *logits, *dlogits, *loss, *probs, *cache;
    void *work;
    size_t cf, wb; /* the cache's floats, the workspace's bytes */
} lm_buf;

/* Mean cross-entropy of windows starting at starts [B] (tokens t .. t + ctx - 1 predict t + 1 .. t +
   ctx); with grad, the gradient of the mean into b->dlogits. */
static double lm_loss(const lm_opts *o, attn_transformer *m, const lm_data *d, const long *starts, int B, lm_buf *b, int grad)
{
    int i, t, n = B * o->ctx, *tg = b->targets;
    double l = 0;
    for (i = 0; i < B; i++)
        for (t = 0; t < o->ctx; t++) {
            b->tok[i * o->ctx + t] = d->tok[starts[i] + t];
            tg[i * o->ctx + t] = d->tok[starts[i] + t + 1];
        }
    if (attn_transformer_forward(m, b->logits, b->cache, b->cf, b->tok, NULL, B, o->ctx, b->work, b->wb) != ATTN_OK) return NAN;
    attn_cross_entropy_forward(b->loss, b->probs, b->logits, tg, n, LM_VOCAB);
    for (i = 0; i < n; i++) l += b->loss[i] / n;
    if (grad) {
        memset(b->dlogits, 0, sizeof(attn_float) * (size_t)n * LM_VOCAB);
        attn_cross_entropy_backward(b->dlogits, NULL, (attn_float)(1.0 / n), b->probs, tg, n, LM_VOCAB);
    }
    return l;
}

static progress_set lm_prog;

/* The probe lengths: LM_PROBE_NS values up to what the context holds after the longer prompt; 0
   if it holds too little. */
static int lm_probe_ns(const lm_opts *o, int *ns)
{
    int room = o->ctx - (int)strlen(lm_prompt[1]) - 2, k;
    if (room < LM_PROBE_NS) return 0;
    for (k = 0; k < LM_PROBE_NS; k++) ns[k] = room * (k + 1) / LM_PROBE_NS;
    return 1;
}

static csv_stream lm_csv; /* the CSV, a line per evaluation as it happens */

#define LM_CSV_HEADER "variant,seed,step,train_loss,valid_loss"
/* Evaluation k of a run as a CSV line (the training loss is empty before the first step). */
static void lm_row(char *line, size_t n, const lm_opts *o, const lm_run *r, int k)
{
    char train[32] = "";
    if (r->train[k] == r->train[k]) snprintf(train, sizeof train, "%.6f", r->train[k]);
    snprintf(line, n, "%s,%d,%ld,%s,%.6f", o->variant[r->var], r->seed, r->step[k], train, r->valid[k]);
}

/* Where run (variant, seed) saves its model: F itself for one run, else F-VARIANT-sSEED + F's
   extension. */
static void lm_save_path(const lm_opts *o, int var, int seed, char *path, size_t size)
{
    char tag[64];
    snprintf(tag, sizeof tag, "%s-s%d", o->variant[var], seed);
    run_save_path(o->save, o->nvar * o->seeds, tag, path, size);
}

/* A run in progress as bytes (a snapshot, attnlab.h): the step it goes on from, what carries over
   from step to step, its curve so far (room for nev evaluations). */
typedef struct {
    long step;
    attn_rng data;
    double tsum;
    int tcount;
} lm_state;
/* A run's result (its curve so far, with room for nev evaluations, and its final numbers) through
   jb_io; whether it succeeded. */
static int lm_run_io(jobbuf *b, lm_run *r, int nev)
{
    jb_count(b, &r->nevals, nev);
    jb_io(b, r->step, sizeof(long) * (size_t)r->nevals);
    jb_io(b, r->train, sizeof(double) * (size_t)r->nevals);
    jb_io(b, r->valid, sizeof(double) * (size_t)r->nevals);
    jb_io(b, &r->final_valid, sizeof r->final_valid);
    jb_io(b, r->probe, sizeof r->probe);
    jb_io(b, &r->failed, sizeof r->failed);
    return !r->failed;
}

static void lm_state_io(jobbuf *b, lm_state *t, lm_run *res, attn_params *p, attn_float *mom, attn_float *vel, int nev)
{
    jb_io(b, t, sizeof *t);
    lm_run_io(b, res, nev);
    jb_io(b, p->data, sizeof(attn_float) * p->total);
    jb_io(b, mom, sizeof(attn_float) * p->total);
    jb_io(b, vel, sizeof(attn_float) * p->total);
}

/* Run j (res) of the grid; nev: the evaluations res has room for. */
static void lm_train_one(const lm_opts *o, const lm_data *d, lm_run *res, int j, int nev)
{
    attn_transformer_config cf = lm_config(o, o->variant[res->var]);
    attn_transformer m;
    attn_schedule sched;
    attn_rng init;
    lm_buf b;
    long *starts = (long *)malloc(sizeof(long) * (size_t)(o->batch > o->eval_windows ? o->batch : o->eval_windows)), step;
    attn_float *mom = NULL, *vel = NULL;
    lm_state t = {0, {0, 0}, 0, 0};
    jobbuf snap;
    char line[256];
    int i, c, nb = o->batch > o->eval_windows ? o->batch : o->eval_windows;
    int C = !data_parallel ? 1 : dp_chunks < o->batch ? dp_chunks : o->batch;
    int evaluate = !data_parallel || mpi_rank() == 0; /* data-parallel: rank 0 evaluates */
    dp_sum dp = {0};
    attn_rng_seed(&init, (uint64_t)res->seed, 1);
    attn_rng_seed(&t.data, (uint64_t)res->seed, 2);
    if (attn_transformer_init(&m, &cf, &init) != ATTN_OK) { fprintf(stderr, "\nattnlab lm: %s\n", attn_last_error()); res->failed = 1; free(starts); return; }
    b.tok = (int *)malloc(sizeof(int) * (size_t)nb * o->ctx);
    b.targets = (int *)malloc(sizeof(int) * (size_t)nb * o->ctx);
    b.logits = (attn_float *)malloc(sizeof(attn_float) * (size_t)nb * o->ctx * LM_VOCAB);
    b.dlogits = (attn_float *)malloc(sizeof(attn_float) * (size_t)nb * o->ctx * LM_VOCAB);
    b.probs = (attn_float *)malloc(sizeof(attn_float) * (size_t)nb * o->ctx * LM_VOCAB);
    b.loss = (attn_float *)malloc(sizeof(attn_float) * (size_t)nb * o->ctx);
    b.cache = (attn_float *)malloc(sizeof(attn_float) * (b.cf = attn_transformer_cache_floats(&m, nb, o->ctx)));
    b.wb = attn_transformer_work_bytes(&m, nb, o->ctx);
    b.work = malloc(b.wb);
    mom = (attn_float *)calloc(m.p.total, sizeof(attn_float));
    vel = (attn_float *)calloc(m.p.total, sizeof(attn_float));
    if (!starts || !b.tok || !b.targets || !b.logits || !b.dlogits || !b.probs || !b.loss || !b.cache || !b.work || !mom || !vel ||
        (data_parallel && !dp_begin(&dp, m.p.total, C))) {
        fprintf(stderr, "\nattnlab lm: out of memory\n");
        res->failed = 1;
    }
    attn_schedule_warmup_cosine(&sched, 0, o->lr, o->warmup, o->steps, 0.04 * o->lr);
    if (!res->failed && snap_resume(j, &snap)) { /* --resume: on from the snapshot */
        lm_state_io(&snap, &t, res, &m.p, mom, vel, nev);
        res->failed = !snap_resumed(j, &snap, t.step);
    }
    for (step = t.step; step <= o->steps && !res->failed && !stop_requested; step++) {
        if (step % o->eval_every == 0 || step == o->steps) { /* the same validation windows every time */
            int k = res->nevals++;
            long span = d->n - d->ntrain - o->ctx - 1;
            for (i = 0; i < o->eval_windows; i++) starts[i] = d->ntrain + (span > 0 ? span * i / o->eval_windows : 0);
            res->step[k] = step;
            res->valid[k] = evaluate ? lm_loss(o, &m, d, starts, o->eval_windows, &b, 0) : 0;
            res->prog.latest = res->valid[k];
            res->prog.evaluated = 1;
            res->train[k] = t.tcount ? t.tsum / t.tcount : NAN;
            t.tsum = 0; t.tcount = 0;
            lm_row(line, sizeof line, o, res, k);
            csv_row(&lm_csv, line);
        }
        if (step == o->steps) break;
        for (i = 0; i < o->batch; i++) starts[i] = (long)attn_rng_int(&t.data, (uint32_t)(d->ntrain - o->ctx - 1));
        for (c = 0; c < C && !res->failed; c++) { /* data-parallel: this rank's chunks; else the batch at once */
            int a = (int)((long)c * o->batch / C), nw = (int)((long)(c + 1) * o->batch / C) - a;
            double l;
            if (data_parallel && !dp_mine(c)) continue;
            l = lm_loss(o, &m, d, starts + a, nw, &b, 1);
            attn_params_zero_grad(&m.p);
            if (attn_transformer_backward(&m, b.dlogits, b.cache, b.cf, b.tok, NULL, nw, o->ctx, b.work, b.wb) != ATTN_OK) {
                fprintf(stderr, "\nattnlab lm: %s\n", attn_last_error());
                res->failed = 1;
            }
            if (data_parallel) dp_add(&dp, c, m.p.gdata, (double)nw / o->batch, l);
            else t.tsum += l;
        }
        if (res->failed) break;
        if (data_parallel) t.tsum += dp_end(&dp, m.p.gdata);
        t.tcount++;
        attn_clip_grad_norm(&m.p, 1.0);
        attn_adamw_step(&m.p, mom, vel, step + 1, (attn_float)attn_schedule_lr(&sched, step), (attn_float)0.9, (attn_float)0.95, (attn_float)1e-8,
                        (attn_float)0.1);
        res->prog.done = step + 1;
        if (step % 4 == 0) progress_report(&lm_prog, 0);
        if (snap_due(step + 1) && step + 1 < o->steps) { /* the state before step + 1 */
            lm_state next = t;
            next.step = step + 1;
            memset(&snap, 0, sizeof snap);
            lm_state_io(&snap, &next, res, &m.p, mom, vel, nev);
            snap_save(j, &snap);
            free(snap.p);
        }
    }
    res->final_valid = res->nevals ? res->valid[res->nevals - 1] : NAN;
    if (o->heatmap && res->seed == 0 && !res->failed && evaluate) { /* one attention map of the trained model */
        int T = o->ctx < 48 ? o->ctx : 48, layer = o->layers > 1 ? 1 : 0, i, j;
        size_t wwb = attn_transformer_weights_work_bytes(&m, 1, T);
        void *ww = malloc(wwb);
        attn_float *w = (attn_float *)malloc(sizeof(attn_float) * (size_t)o->heads * T * T);
        static char lab[48][8];
        const char *labels[48];
        char path[1024], title[128];
        for (i = 0; i < T; i++) b.tok[i] = d->tok[d->ntrain + i];
        if (ww && w && attn_transformer_forward(&m, b.logits, b.cache, b.cf, b.tok, NULL, 1, T, b.work, b.wb) == ATTN_OK &&
            attn_transformer_weights(&m, w, b.cache, b.cf, 1, T, layer, ww, wwb) == ATTN_OK) {
#ifdef _OPENMP
#pragma omp critical(lm_labels)
#endif
            {
                for (i = 0; i < T; i++) { /* the byte, printable or its code */
                    j = b.tok[i];
                    if (j > 32 && j < 127 && j != '<' && j != '&') snprintf(lab[i], sizeof lab[i], "%c", j);
                    else snprintf(lab[i], sizeof lab[i], "%s", j == LM_BOS ? "BOS" : j == ' ' ? "_" : j == '\n' ? "\\n" : "?");
                    labels[i] = lab[i];
                }
                snprintf(path, sizeof path, "%s-%s.svg", o->heatmap, o->variant[res->var]);
                snprintf(title, sizeof title, "%s: layer %d, head 0 (red positive, blue negative)", o->variant[res->var], layer);
                if (attn_heatmap_svg(path, title, w, T, T, labels, labels, ATTN_HEAT_SIGNED) != ATTN_OK) {
                    fprintf(stderr, "\nattnlab lm: %s\n", attn_last_error());
                    res->failed = 1;
                }
            }
        }
        free(ww); free(w);
    }
    if (o->save && !res->failed && evaluate) { /* data-parallel: rank 0 saves */
        char path[1024];
        lm_save_path(o, res->var, res->seed, path, sizeof path);
        if (attn_transformer_save(&m, path) != ATTN_OK) {
            fprintf(stderr, "\nattnlab lm: %s\n", attn_last_error());
            res->failed = 1;
        }
    }
    { /* the collapse probes on the trained model: prompts after a BOS, then '0' and '1' */
        int ns[LM_PROBE_NS], task, prompt[128], plen, k, e;
        double paper[LM_PROBE_NS], code[LM_PROBE_NS];
        for (task = 0; task < 2 && !res->failed && evaluate && lm_probe_ns(o, ns); task++) {
            attn_rng pick; /* the validation windows, the same for every run */
            attn_rng_seed(&pick, 0, 3);
            memset(res->probe[task], 0, sizeof res->probe[task]);
            for (k = 0; k < o->prompts; k++) {
                long at = d->ntrain + (long)attn_rng_int(&pick, (uint32_t)(d->n - d->ntrain - 48));
                prompt[0] = LM_BOS;
                for (plen = 1; lm_prompt[task][plen - 1]; plen++)
                    prompt[plen] = k ? d->tok[at + plen] : (unsigned char)lm_prompt[task][plen - 1];
                if (attn_collapse_probe(&m, (attn_probe_task)task, prompt, plen, '0', '1', ns, LM_PROBE_NS,
                                        o->dmodel / o->heads, paper, code) != ATTN_OK) {
                    fprintf(stderr, "\nattnlab lm: %s\n", attn_last_error());
                    break;
                }
                for (e = 0; e < LM_PROBE_NS; e++) {
                    res->probe[task][0][e] += paper[e] / o->prompts;
                    res->probe[task][1][e] += code[e] / o->prompts;
                }
            }
        }
    }
    free(starts); free(b.tok); free(b.targets); free(b.logits); free(b.dlogits); free(b.probs); free(b.loss); free(b.cache); free(b.work); free(mom); free(vel);
    dp_free(&dp);
    attn_transformer_free(&m);
}

/* Run j of the (variant, seed) grid, for run_jobs. */
struct lm_jobs {
    const lm_opts *o; const lm_data *d; lm_run *res;
    int nev;              /* the evaluations a run has room for */
    int ns[LM_PROBE_NS];  /* the probe lengths (the probe CSV) */
};
static void lm_job(void *ctx, int j)
{
    struct lm_jobs *t = (struct lm_jobs *)ctx;
    lm_train_one(t->o, t->d, &t->res[j], j, t->nev);
}
static int lm_xfer(void *ctx, int j, jobbuf *b)
{
    struct lm_jobs *t = (struct lm_jobs *)ctx;
    return lm_run_io(b, &t->res[j], t->nev);
}
static int lm_line(const void *ctx, int j, int k, char *line, size_t n)
{
    const struct lm_jobs *t = (const struct lm_jobs *)ctx;
    if (k >= t->res[j].nevals) return 0;
    lm_row(line, n, t->o, &t->res[j], k);
    return 1;
}

/* Line k of run j's probe values, two tasks x LM_PROBE_NS lengths, for csv_write. */
static int lm_probe_line(const void *ctx, int j, int k, char *line, size_t n)
{
    const struct lm_jobs *t = (const struct lm_jobs *)ctx;
    const lm_run *r = &t->res[j];
    int task = k / LM_PROBE_NS, e = k % LM_PROBE_NS;
    if (task > 1 || r->failed) return 0;
    snprintf(line, n, "%s,%d,%s,%d,%.6f,%.6f", t->o->variant[r->var], r->seed, task ? "ones" : "zero", t->ns[e],
             r->probe[task][0][e], r->probe[task][1][e]);
    return 1;
}

/* The Pearson correlation of a [n] and b [n] (0 without spread). */
static double pearson(const double *a, const double *b, int n)
{
    double sa, sb, ma = mean_sd(a, n, &sa), mb = mean_sd(b, n, &sb), c = 0;
    int i;
    for (i = 0; i < n; i++) c += (a[i] - ma) * (b[i] - mb) / (n - 1);
    return sa > 0 && sb > 0 ? c / (sa * sb) : 0;
}

/* The probes' figure: the paper's metric against n per variant (colour) and task (solid: finding a
   zero, dashed: counting ones), mean and 95% t interval over seeds; 0 if it cannot be written. */
static int lm_probe_svg(const lm_opts *o, const lm_run *res, const int *ns)
{
    attn_plot p;
    attn_plot_series sr[2 * LM_MAX_VARIANTS];
    double x[LM_PROBE_NS], buf[2 * LM_MAX_VARIANTS][3][LM_PROBE_NS];
    double *zero = (double *)calloc(2 * (size_t)o->seeds, sizeof(double)), *col = zero + o->seeds;
    char title[160];
    int v, task, k, s, ok;
    if (!zero) return 0;
    for (k = 0; k < LM_PROBE_NS; k++) x[k] = ns[k];
    for (v = 0; v < o->nvar; v++)
        for (task = 0; task < 2; task++) {
            attn_plot_series *e = &sr[2 * v + task];
            double (*y)[LM_PROBE_NS] = buf[2 * v + task];
            for (k = 0; k < LM_PROBE_NS; k++) {
                welch_result w; /* the mean's interval: the paired test against 0 */
                double sd;
                for (s = 0; s < o->seeds; s++) col[s] = res[v * o->seeds + s].probe[task][0][k];
                y[0][k] = y[1][k] = y[2][k] = mean_sd(col, o->seeds, &sd);
                if (paired_t(zero, col, o->seeds, &w)) { y[1][k] = w.lo; y[2][k] = w.hi; }
            }
            memset(e, 0, sizeof *e);
            e->label = task ? NULL : o->variant[v]; e->x = x; e->y = y[0]; e->lo = y[1]; e->hi = y[2];
            e->n = LM_PROBE_NS; e->colour = v; e->style = task ? ATTN_LINE_DASHED : ATTN_LINE_SOLID;
        }
    snprintf(title, sizeof title, "collapse probes: mean and 95%% interval, %d seeds x %d prompt(s)", o->seeds, o->prompts);
    memset(&p, 0, sizeof p);
    p.title = title; p.xlabel = "n (solid: finding a zero; dashed: counting ones)";
    p.ylabel = "|y2 - y1|_inf relative to the first n";
    ok = attn_plot_svg(o->probe_svg, &p, sr, 2 * o->nvar) == ATTN_OK;
    if (ok) printf("wrote %s\n", o->probe_svg);
    else fprintf(stderr, "attnlab lm: %s\n", attn_last_error());
    free(zero);
    return ok;
}

/* The table, the probes and the files; 0 if a file could not be written. */
static int lm_report(const lm_opts *o, const lm_run *res, int njobs)
{
    int v, s, j, k, ok = 1;
    double *col = (double *)malloc(sizeof(double) * (size_t)o->seeds);
    struct lm_jobs t;
    printf("\n%-10s %-26s %-26s %s\n", "variant", "final validation loss", "best validation loss", "train loss (last interval)");
    for (v = 0; v < o->nvar; v++) {
        double m, sd, b, bsd, t, tsd;
        for (s = 0; s < o->seeds; s++) col[s] = res[v * o->seeds + s].final_valid;
        m = mean_sd(col, o->seeds, &sd);
        for (s = 0; s < o->seeds; s++) { /* the least validation loss over the evaluations: past it, the model memorises */
            const lm_run *r = &res[v * o->seeds + s];
            for (col[s] = INFINITY, k = 0; k < r->nevals; k++) col[s] = r->valid[k] < col[s] ? r->valid[k] : col[s];
        }
        b = mean_sd(col, o->seeds, &bsd);
        for (s = 0; s < o->seeds; s++) col[s] = res[v * o->seeds + s].train[res[v * o->seeds + s].nevals - 1];
        t = mean_sd(col, o->seeds, &tsd);
        printf("%-10s %.4f +- %.4f (%.3f)   %.4f +- %.4f (%.3f)   %.4f +- %.4f\n", o->variant[v], m, sd, m / log(2.0), b, bsd, b / log(2.0), t, tsd);
    }
    printf("(nats per byte, mean +- sd over seeds; bits per byte in brackets. A best loss well below the final one, or a\n"
           " train loss far below it, means the model memorised the corpus: shorten --steps or grow the corpus)\n");
    {   /* the collapse probes: mean +- sd over seeds, per n, and each variant against the first at the last n */
        int ns[LM_PROBE_NS], task, metric;
        if (lm_probe_ns(o, ns)) {
            printf("\ncollapse probes (Lv et al. 2024, Sec. 3.2): |y2 - y1|_inf relative to the first n, mean +- sd over %d "
                   "seed(s)\n", o->seeds);
            for (metric = 0; metric < 2; metric++)
                for (task = 0; task < 2; task++) {
                    printf("%-10s", task ? "ones" : "zero");
                    for (k = 0; k < LM_PROBE_NS; k++) printf("  n %-13d", ns[k]);
                    printf("%s\n", metric ? "(code's chunked metric)" : "(paper's metric)");
                    for (v = 0; v < o->nvar; v++) {
                        printf("%-10s", o->variant[v]);
                        for (k = 0; k < LM_PROBE_NS; k++) {
                            double m, sd;
                            for (s = 0; s < o->seeds; s++) col[s] = res[v * o->seeds + s].probe[task][metric][k];
                            m = mean_sd(col, o->seeds, &sd);
                            printf("  %6.3f +- %5.3f", m, sd);
                        }
                        printf("\n");
                    }
                }
            for (task = 0; task < 2 && o->seeds > 1; task++) /* variant - the first, paired by seed, paper's metric */
                for (v = 1; v < o->nvar; v++) {
                    double *a = (double *)malloc(sizeof(double) * 2 * (size_t)o->seeds), *b = a + o->seeds;
                    welch_result wr;
                    if (!a) break;
                    for (s = 0; s < o->seeds; s++) {
                        a[s] = res[s].probe[task][0][LM_PROBE_NS - 1];
                        b[s] = res[v * o->seeds + s].probe[task][0][LM_PROBE_NS - 1];
                    }
                    if (paired_t(a, b, o->seeds, &wr))
                        printf("%s n %d, %s - %s: %+.3f [%.3f, %.3f], p = %.2g (paired t over %d seeds: the same\n"
                               "  initialisation, batches and %d prompt(s); Pearson r between the pairs %.2f)\n",
                               task ? "ones" : "zero", ns[LM_PROBE_NS - 1], o->variant[v], o->variant[0], wr.diff, wr.lo,
                               wr.hi, wr.p, o->seeds, o->prompts, pearson(a, b, o->seeds));
                    free(a);
                }
            if (o->probe_svg) ok = lm_probe_svg(o, res, ns) && ok;
        }
    }
    if (o->csv) {
        t.o = o; t.d = NULL; t.res = (lm_run *)res;
        ok = csv_write(o->csv, LM_CSV_HEADER, njobs, lm_line, &t) && ok;
    }
    if (o->probe_csv && lm_probe_ns(o, t.ns)) {
        t.o = o; t.res = (lm_run *)res;
        ok = csv_write(o->probe_csv, "variant,seed,task,n,paper,code", njobs, lm_probe_line, &t) && ok;
    }
    if (o->svg) { /* mean validation loss per variant, +-1 sd band */
        attn_plot p;
        attn_plot_series sr[LM_MAX_VARIANTS];
        char title[160];
        int n = res[0].nevals;
        double *buf;
        for (j = 0; j < njobs; j++) n = res[j].nevals < n ? res[j].nevals : n;
        buf = (double *)malloc(sizeof(double) * (size_t)n * (1 + 3 * o->nvar));
        for (k = 0; k < n; k++) buf[k] = (double)res[0].step[k];
        for (v = 0; v < o->nvar; v++) {
            double *mv = buf + (size_t)n * (1 + 3 * v), *lo = mv + n, *hi = lo + n;
            for (k = 0; k < n; k++) {
                double m, sd;
                for (s = 0; s < o->seeds; s++) col[s] = res[v * o->seeds + s].valid[k];
                m = mean_sd(col, o->seeds, &sd);
                mv[k] = m; lo[k] = m - sd; hi[k] = m + sd;
            }
            memset(&sr[v], 0, sizeof sr[v]);
            sr[v].label = o->variant[v]; sr[v].x = buf; sr[v].y = mv; sr[v].lo = lo; sr[v].hi = hi; sr[v].n = n; sr[v].colour = v;
        }
        snprintf(title, sizeof title, "byte-level LM, %d layers, d %d, ctx %d, %d seed%s", o->layers, o->dmodel, o->ctx, o->seeds,
                 seeds_note(o->seeds));
        memset(&p, 0, sizeof p);
        p.title = title; p.xlabel = "step"; p.ylabel = "validation loss (nats per byte)";
        if (attn_plot_svg(o->svg, &p, sr, o->nvar) == ATTN_OK) printf("wrote %s\n", o->svg);
        else fprintf(stderr, "attnlab lm: %s\n", attn_last_error()), ok = 0;
        free(buf);
    }
    free(col);
    return ok;
}

/* attnlab preset cog-lm|cog-probes [--quick] [options]: the miniature of Table 4 (and of Table 1's
   baselines), or the collapse probes of softmax and Cog models, on Vim's manual (9.8 MB, Debian's
   vim-runtime: 800 steps read 0.14 of its training part, so nothing is memorised) when it is there, else
   /usr/share/common-licenses (300 kB), else the sample; the user's options come last. */
static int lm_preset(int argc, char **argv, lm_opts *o)
{
    static const struct {
        const char *claim, *full, *quick;
    } presets[2] = {
        {"the Cog paper's Table 4 ordering (and its baselines) in miniature",
         "--variants softmax,cog,cog-first,cog-all,ea,diff,centered --layers 4 --dmodel 96 --heads 4 --ctx 96 --batch 16 --steps 800 --eval-every 100 --seeds 3 "
         "--csv results/cog-lm.csv --svg results/cog-lm.svg --probe-svg results/cog-lm-probes.svg",
         "--variants softmax,cog,cog-first,cog-all --layers 4 --dmodel 64 --heads 4 --ctx 96 --batch 8 --steps 300 --eval-every 50 --seeds 2 "
         "--csv results/cog-lm.csv --svg results/cog-lm.svg --probe-svg results/cog-lm-probes.svg"},
        {"the collapse probes (Lv et al. 2024, Sec. 3.2) of softmax and Cog language models, paper's and code's metric",
         "--variants softmax,cog,cog-first --layers 4 --dmodel 96 --heads 4 --ctx 96 --batch 16 --steps 800 --eval-every 100 "
         "--seeds 16 --lr 0.01 --probe-prompts 32 --csv results/cog-probes.csv --svg results/cog-probes.svg "
         "--probe-csv results/cog-probes-values.csv --probe-svg results/cog_probes.svg",
         "--variants softmax,cog-all --layers 4 --dmodel 64 --heads 4 --ctx 96 --batch 8 --steps 300 --eval-every 100 --seeds 2 "
         "--probe-prompts 4 --csv results/cog-probes.csv --svg results/cog-probes.svg "
         "--probe-csv results/cog-probes-values.csv --probe-svg results/cog_probes.svg"},
    };
    static char buf[512]; /* the options point into it after return */
    char full[512], quick[512], *args[256];
    static const char *corpora[] = {"/usr/share/vim/vim90/doc", "/usr/share/vim/vim91/doc", "/usr/share/common-licenses"};
    char corpus[64] = "";
    struct stat st;
    int p = !strcmp(argv[2], "cog-probes"), n, q, c;
    for (c = 0; c < 3 && !corpus[0]; c++)
        if (stat(corpora[c], &st) == 0 && S_ISDIR(st.st_mode)) snprintf(corpus, sizeof corpus, "--corpus %s ", corpora[c]);
    snprintf(full, sizeof full, "%s%s", corpus, presets[p].full);
    snprintf(quick, sizeof quick, "%s%s", corpus, presets[p].quick);
    n = preset_argv(argc, argv, "lm", full, quick, buf, sizeof buf, args, 256, &q);
    printf("preset %s%s: %s\n", argv[2], q ? " (quick)" : "", presets[p].claim);
    return lm_parse(n, args, o);
}

int lm_main(int argc, char **argv)
{
    lm_opts o;
    lm_data d;
    lm_run *res;
    int njobs, j, nev, failed = 0, lost, rc;
    attn_transformer_config cf;
    char heat[1024], save[1024];
    double bytes = 0, secs = 0; /* the largest variant's, for the estimate */
    if (!strcmp(argv[1], "preset") ? !lm_preset(argc, argv, &o) : !lm_parse(argc, argv, &o)) return !help_shown;
    for (j = 0; j < o.nvar; j++) { /* each variant built, and (not a dry run) its size and speed measured */
        double b1, s1;
        int nb = o.batch > o.eval_windows ? o.batch : o.eval_windows;
        cf = lm_config(&o, o.variant[j]);
        if (dry_run ? !attn_transformer_param_count(&cf) : !transformer_probe(&cf, nb, o.ctx, &b1, &s1)) { fprintf(stderr, "attnlab lm: the model cannot be built: %s\n", attn_last_error()); return 1; }
        if (!dry_run) bytes = b1 > bytes ? b1 : bytes, secs = s1 > secs ? s1 : secs;
    }
    if (!dry_run && !limits_ok("attnlab lm", bytes, o.nvar * o.seeds, o.threads, secs, (double)o.steps * o.batch,
                               ((double)o.steps / o.eval_every + 2) * o.eval_windows * 2 + 2.0 * LM_PROBE_NS * 64))
        return 1;
    if (o.heatmap) snprintf(heat, sizeof heat, "%s-%s.svg", o.heatmap, o.variant[0]);
    if (o.save) lm_save_path(&o, 0, 0, save, sizeof save);
    if (!output_ok(o.csv) || !output_ok(o.svg) || !output_ok(o.probe_svg) || !output_ok(o.probe_csv) ||
        !output_ok(o.heatmap ? heat : NULL) ||
        !output_ok(o.save ? save : NULL))
        return 1;
    if (!lm_load(&d, &o)) return 1;
    if (dry_run) {
        printf("dry run: %d run(s) would start; the options, the models, the corpus and the outputs are fine\n", o.nvar * o.seeds);
        free(d.tok);
        return 0;
    }
    cf = lm_config(&o, o.variant[0]);
    njobs = o.nvar * o.seeds;
    nev = (int)(o.steps / o.eval_every) + 2;
    if (!(res = (lm_run *)calloc((size_t)njobs, sizeof(lm_run)))) { fprintf(stderr, "attnlab lm: out of memory\n"); return 1; }
    for (j = 0; j < njobs; j++) {
        res[j].var = j / o.seeds; res[j].seed = j % o.seeds;
        res[j].step = (long *)calloc((size_t)nev, sizeof(long));
        res[j].train = (double *)calloc((size_t)nev, sizeof(double));
        res[j].valid = (double *)calloc((size_t)nev, sizeof(double));
        if (!res[j].step || !res[j].train || !res[j].valid) { fprintf(stderr, "attnlab lm: out of memory\n"); return 1; }
    }
    printf("attnlab lm: %s, %ld tokens (%ld for training), %d layers, d %d, %d heads, %lu parameters, %d variant(s) x %d seeds, %ld steps of %d x %d\n",
           o.corpus, d.n, d.ntrain, o.layers, o.dmodel, o.heads, (unsigned long)attn_transformer_param_count(&cf), o.nvar, o.seeds, o.steps, o.batch,
           o.ctx);
    progress_begin(&lm_prog, res, sizeof *res, offsetof(lm_run, prog), njobs, (long)njobs * o.steps, "steps", "mean latest validation loss");
    catch_stop();
    {
        struct lm_jobs jobs = {&o, &d, res, nev, {0}};
        job_set js = {lm_job, lm_xfer, lm_line, &lm_csv, o.csv, LM_CSV_HEADER, &jobs};
        lost = run_jobs(njobs, o.threads, &js, &lm_prog);
    }
    csv_end(&lm_csv);
    for (j = 0; j < njobs; j++) failed += res[j].failed;
    if (runs_end(lost, failed, njobs, "attnlab lm", &rc) == 2 && !lm_report(&o, res, njobs)) rc = 1;
    for (j = 0; j < njobs; j++) { free(res[j].step); free(res[j].train); free(res[j].valid); }
    free(res);
    free(d.tok);
    return rc;
}

/* A transformer from path: a Hugging Face directory (config.json and model.safetensors, GPT-2's or
   Llama's layout) or an attn.h checkpoint file. */
static attn_status lm_load_any(attn_transformer *m, const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return attn_transformer_load_hf(m, path);
    return attn_transformer_load(m, path);
}

/* attnlab convert [--no-doc-mask] IN OUT: an attn.h checkpoint into a Hugging Face directory, or back. */
int lm_convert(int argc, char **argv)
{
    attn_transformer m;
    struct stat st;
    const char *in, *out;
    int to_hf, made = 0, nodoc = argc == 5 && !strcmp(argv[2], "--no-doc-mask");
    if (argc == 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
        printf("usage: attnlab convert [--no-doc-mask] IN OUT\n"
               "IN an attn.h checkpoint (attnlab lm --save writes one): OUT a Hugging Face directory, made if\n"
               "missing, with config.json and model.safetensors in GPT-2's or Llama's layout (whichever the\n"
               "model's shape is: RoPE, RMSNorm and SwiGLU without biases is Llama's), which PyTorch's\n"
               "transformers load with from_pretrained(OUT). IN such a directory: OUT the attn.h checkpoint.\n"
               "A model of neither shape is refused with what it has that they have not; nothing is written.\n"
               "--no-doc-mask: write a model with document masking (attnlab lm's) without it. Neither layout\n"
               "has it; the model computes the same for an input that is one document (BOS only first), as\n"
               "in attnlab sample, and differently where a BOS inside the input opens a second document.\n");
        return 0;
    }
    if (argc != 4 && !nodoc) {
        fprintf(stderr, "attnlab convert: [--no-doc-mask] IN OUT, nothing else (see attnlab convert --help)\n");
        return 1;
    }
    in = argv[argc - 2];
    out = argv[argc - 1];
    to_hf = !(stat(in, &st) == 0 && S_ISDIR(st.st_mode));
    if (lm_load_any(&m, in) != ATTN_OK) {
        fprintf(stderr, "attnlab convert: %s\n", attn_last_error());
        return 1;
    }
    if (nodoc) m.cfg.doc_mask = 0;
    if (to_hf && !(stat(out, &st) == 0 && S_ISDIR(st.st_mode))) {
        if (mkdir(out, 0777) != 0) {
            fprintf(stderr, "attnlab convert: cannot make the directory %s: %s\n", out, strerror(errno));
            attn_transformer_free(&m);
            return 1;
        }
        made = 1;
    }
    if ((to_hf ? attn_transformer_save_hf(&m, out) : attn_transformer_save(&m, out)) != ATTN_OK) {
        fprintf(stderr, "attnlab convert: %s\n", attn_last_error());
        if (made) rmdir(out); /* nothing written in it */
        attn_transformer_free(&m);
        return 1;
    }
    printf("%s -> %s (%s, %lu parameters)\n", in, out, to_hf ? "Hugging Face layout" : "attn.h checkpoint",
           (unsigned long)attn_transformer_param_count(&m.cfg));
    attn_transformer_free(&m);
    return 0;
}

/* attnlab sample: text from a byte-level model that attnlab lm --save wrote (or its conversion by
   attnlab convert), a token at a time
   through the key-value cache: BOS, the prompt's bytes, then up to --tokens drawn bytes (a BOS
   ends the document; so does a full context). The bytes go to stdout, the rate to stderr. */
int lm_sample(int argc, char **argv)
{
    const char *load = NULL, *prompt = "";
    int tokens = 200, top_k = 0, seed = 0, i, n, t, made = 0, *in = NULL, ended = 0, rc = 0;
    double temperature = 1, top_p = 1, secs;
    attn_transformer m;
    attn_transformer_kv kv;
    attn_rng r;
    attn_float *logits = NULL;
    void *kvmem = NULL, *work = NULL;
    size_t kb, wb;
    struct timespec t0, t1;
    for (i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("usage: attnlab sample --load F [--prompt TEXT] [--tokens N] [--temperature T] [--top-k K]\n"
                   "                      [--top-p P] [--seed S]\n"
                   "Generates bytes from a model saved by attnlab lm --save (F a checkpoint) or converted to\n"
                   "Hugging Face's layout by attnlab convert (F the directory), one token per step with a\n"
                   "key-value cache: temperature 0 is greedy, top-k keeps the K likeliest bytes (0: all),\n"
                   "top-p the likeliest whose mass reaches P. Defaults: 200 tokens, temperature 1, top-k 0,\n"
                   "top-p 1, seed 0. The same seed gives the same text. --tokens is the most it draws: it\n"
                   "stops earlier when the model draws BOS (the document ends) or the context is full\n"
                   "(the model's --ctx, BOS and the prompt included), and says so on stderr.\n");
            help_shown = 1;
            return 0;
        }
        if (!v) { fprintf(stderr, "attnlab sample: %s needs a value (or is unknown; see --help)\n", a); return 1; }
        if (!strcmp(a, "--load")) load = v;
        else if (!strcmp(a, "--prompt")) prompt = v;
        else if (!strcmp(a, "--tokens")) ok = parse_int(v, 1, &tokens) && tokens <= MAX_WIDTH;
        else if (!strcmp(a, "--temperature")) ok = parse_double(v, &temperature) && temperature >= 0;
        else if (!strcmp(a, "--top-k")) ok = parse_int(v, 0, &top_k);
        else if (!strcmp(a, "--top-p")) ok = parse_double(v, &top_p) && top_p > 0 && top_p <= 1;
        else if (!strcmp(a, "--seed")) ok = parse_int(v, 0, &seed);
        else { fprintf(stderr, "attnlab sample: unknown option %s (see attnlab sample --help)\n", a); return 1; }
        if (!ok) { fprintf(stderr, "attnlab sample: bad value '%s' for %s (see --help)\n", v, a); return 1; }
        i++;
    }
    if (!load) { fprintf(stderr, "attnlab sample: --load F names the model (attnlab lm --save F writes one)\n"); return 1; }
    if (lm_load_any(&m, load) != ATTN_OK) { fprintf(stderr, "attnlab sample: %s\n", attn_last_error()); return 1; }
    n = 1 + (int)strlen(prompt);
    if (m.cfg.vocab != LM_VOCAB || m.cfg.out != LM_VOCAB || n > m.cfg.max_T) {
        fprintf(stderr, "attnlab sample: %s is not a byte-level model of attnlab lm, or the prompt (%d bytes) does not fit its "
                "context of %d\n", load, n - 1, m.cfg.max_T);
        attn_transformer_free(&m);
        return 1;
    }
    if (attn_transformer_pack(&m, 1) != ATTN_OK) /* the weights packed once: faster, else read as they are */
        fprintf(stderr, "attnlab sample: note: %s\n", attn_last_error());
    kb = attn_transformer_kv_bytes(&m, m.cfg.max_T);
    wb = attn_transformer_decode_work_bytes(&m, n, m.cfg.max_T);
    if (!kb || !wb || !(kvmem = malloc(kb)) || !(work = malloc(wb)) || !(in = (int *)malloc(sizeof(int) * (size_t)n)) ||
        !(logits = (attn_float *)malloc(sizeof(attn_float) * (size_t)n * LM_VOCAB)) ||
        attn_transformer_kv_init(&kv, &m, m.cfg.max_T, kvmem, kb) != ATTN_OK) {
        fprintf(stderr, "attnlab sample: %s\n", kb && wb ? "out of memory" : attn_last_error());
        free(kvmem); free(work); free(in); free(logits);
        attn_transformer_free(&m);
        return 1;
    }
    if (dry_run) { printf("dry run: %s would generate %d tokens\n", load, tokens); tokens = 0; }
    in[0] = LM_BOS;
    for (i = 1; i < n; i++) in[i] = (unsigned char)prompt[i - 1];
    attn_rng_seed(&r, (uint64_t)seed, 5);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (tokens && attn_transformer_decode(&m, &kv, logits, in, n, work, wb) != ATTN_OK) {
        fprintf(stderr, "attnlab sample: %s\n", attn_last_error());
        tokens = 0;
    }
    if (tokens) fputs(prompt, stdout);
    for (t = n - 1; made < tokens; made++) { /* logits row t predicts the next byte */
        int next = attn_sample(logits + (size_t)t * LM_VOCAB, LM_VOCAB, temperature, top_k, top_p, &r);
        if (next == LM_BOS) { ended = 1; break; }
        if (next < 0 || kv.len == kv.cap) break;
        putchar(next);
        if (attn_transformer_decode(&m, &kv, logits, &next, 1, work, wb) != ATTN_OK) break;
        t = 0;
    }
    if (made < tokens && !ended && kv.len < kv.cap) { /* a call failed */
        fprintf(stderr, "\nattnlab sample: %s\n", attn_last_error());
        rc = 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (tokens) {
        putchar('\n');
        fprintf(stderr, "attnlab sample: %d tokens after a %d-token prompt in %.3f s (%.0f tokens/s)%s\n", made, n, secs,
                made / (secs > 0 ? secs : 1e-9), ended ? "; the model drew BOS (the document ended)"
                : kv.len == kv.cap ? "; the context is full" : "");
    }
    free(kvmem); free(work); free(in); free(logits);
    attn_transformer_free(&m);
    return rc;
}
