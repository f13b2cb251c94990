/* attnlab's part for the HYLA paper (Schug et al. 2025, arXiv:2406.05816): the pre-LN transformer with T5
   biases trained with AdamW and warmup-cosine on the fuzzy-logic task or SRAVEN, for every
   (attention kind, lr, wd, seed), the runs in parallel over the cores.

     attnlab train --task fuzzy  --attn softmax,linear_raw,hyla --steps 2000 --seeds 3
     attnlab train --task sraven --attn softmax,hyla --steps 2000 --layers 4
     attnlab preset hyla-fuzzy [--quick]      attnlab preset hyla-sraven [--quick]
     attnlab params --task fuzzy --N 32       (151265)

   Each seed fixes the task split and the initial weights (as in the paper's code); the training
   batches, the validation tasks (fresh draws from the training combinations) and the held-out
   ("OOD") tasks come from three independent streams of it. */
#include "../attn.h"
#include "attnlab.h"
#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HMAX_KINDS 16
#define HMAX_GRID 4

typedef struct {
    int sraven;                     /* the task: fuzzy logic (0) or SRAVEN (1) */
    int L, K, F, N;                 /* fuzzy: variables, terms, sequence length; SRAVEN: features K, values F */
    double frac, frac_terms;        /* held-out fraction of the combinations (latents); unseen-term fraction */
    int layers, width, seeds, seed0, batch, warmup, eval_every, eval_tasks, threads, nkind, nlr, nwd;
    sparse_opts sparse;           /* sparse attention patterns in every layer (0: none) */
    long steps;
    double lr[HMAX_GRID], wd[HMAX_GRID], dropout;
    attn_kind kind[HMAX_KINDS];
    const char *csv, *svg, *codes, *save;
} hopts;

/* One run's curve and final numbers: metric = R^2 (fuzzy) or all-features accuracy (SRAVEN). */
typedef struct {
    int kind, ilr, iwd, seed, nevals, failed;
    long *step;
    double *loss, *valid, *ood;
    double final_valid, final_ood, final_feat; /* final_feat: SRAVEN's held-out per-feature accuracy */
    double probe[ATTN_MAX_LAYERS]; /* fuzzy: mean F1 over the terms of the latent-code probe, per layer */
    double chance;                 /* the mean F1 of guessing "present" with probability 1/2: p / (p + 1/2) */
    double control;                /* the probe's F1 on the positive control (hprobe_control) */
    run_progress prog;             /* steps done and the latest held-out metric */
} hrun;


static void hyla_usage(FILE *f)
{
    fprintf(f,
            "usage: attnlab train --task fuzzy|sraven [options]   (the HYLA paper, Schug et al. 2025)\n"
            "       attnlab preset hyla-fuzzy|hyla-sraven [--quick] [train options]\n"
            "       attnlab params --task fuzzy|sraven [options]\n"
            "\n"
            "task options:\n"
            "  --N N            fuzzy: examples per sequence, the query included     [32]\n"
            "  --L L, --K K     fuzzy: variables and terms per function               [4, 2]\n"
            "  --K K, --F F     sraven: features and values                           [4, 8]\n"
            "  --frac X         held-out fraction of the combinations (latents)      [0.7 fuzzy, 0.25 sraven]\n"
            "  --frac-terms X   fuzzy: fraction of terms never seen                   [0.25]\n"
            "model and training options:\n"
            "  --attn K1,K2,..  attention kinds by name (softmax, linear_raw, hyla,\n"
            "                   linear_rmshead, hyla_no_rmshead, hyla_linear, ...)  [softmax,linear_raw,hyla]\n"
            "  --layers L       blocks                                               [2 fuzzy, 4 sraven]\n"
            "  --width W        SRAVEN width multiplier (heads, widths)              [1]\n"
            "  --steps S        optimizer steps of --batch sequences                  [2000]\n"
            "  --batch B        sequences per step                                   [128]\n"
            "  --lr X[,Y..]     AdamW peak rates (a grid, with --wd)                 [1e-3 fuzzy, 3e-4 sraven]\n"
            "  --wd X[,Y..]     weight decays                                        [0.1]\n"
            "  --warmup W       linear warmup steps, then cosine to 0.1 lr (optax)   [100 fuzzy, 1000 sraven]\n"
            "  --dropout P      attention dropout on the latent code                 [0.1]\n"
            "  --seeds S        seeds per (kind, lr, wd)                             [3]\n"
            "  --seed0 S0       the first seed: runs seeds S0 .. S0 + S - 1 (to split a grid)  [0]\n"
            "  --eval-every E   evaluate every E steps                               [250]\n"
            "  --eval-tasks N   tasks per evaluation (validation and held-out)       [2048]\n"
            "  --threads T      parallel runs (0: all cores)                         [0]\n"
            SPARSE_HELP "                   (with --linformer-k the model has no T5 biases)\n"
            "  --csv F, --svg F the curves\n"
            "  --codes PREFIX   the latent codes (the query's self-attention scores, per head) of\n"
            "                   held-out tasks, the first seed and (lr, wd): PREFIX-KIND.csv; SRAVEN also\n"
            "                   PREFIX-KIND-cos.csv / .svg, the cosine similarity of the mean code per rule\n"
            "  --save F         each run's trained model (F for one run, else F-KIND[-lrL-wdW]-sS.ext)\n"
            "\n"
            "The table gives, per kind, the held-out metric (the paper's \"OOD\": R^2 for fuzzy logic,\n"
            "all-features accuracy for SRAVEN) at the (lr, wd) with the best mean held-out metric (as the\n"
            "paper picked) and at the one with the best validation metric, mean +- s.e. over seeds.\n");
}

/* A comma-separated list of at most max numbers >= 0. */
static int hparse_list(const char *v, double *out, int max, int *n)
{
    char buf[256], *tok, *save = NULL;
    snprintf(buf, sizeof buf, "%s", v);
    for (*n = 0, tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), (*n)++)
        if (*n >= max || !parse_double(tok, &out[*n]) || !(out[*n] >= 0)) return 0;
    return *n > 0;
}

static csv_stream hyla_csv_log; /* the CSV, a line per evaluation as it happens */

#define HYLA_CSV_HEADER "attention,lr,wd,seed,step,loss,valid,heldout"
/* Evaluation k of a run as a CSV line (the loss is empty before the first step). */
static void hyla_row(char *line, size_t n, const hopts *o, const hrun *r, int k)
{
    char loss[32] = "";
    if (r->loss[k] == r->loss[k]) snprintf(loss, sizeof loss, "%.6f", r->loss[k]);
    snprintf(line, n, "%s,%g,%g,%d,%ld,%s,%.6f,%.6f", attn_kind_get(o->kind[r->kind])->name, o->lr[r->ilr], o->wd[r->iwd], r->seed, r->step[k],
             loss, r->valid[k], r->ood[k]);
}

/* A number strictly between 0 and 1. */
static int hparse_frac(const char *v, double *out) { return parse_double(v, out) && *out > 0 && *out < 1; }

/* Parses argv[2..] for the HYLA tasks; one line and 0 on a bad option. */
static int hyla_parse(int argc, char **argv, hopts *o)
{
    int i, e, layers = 0, lr_given = 0, warm_given = 0, frac_given = 0;
    memset(o, 0, sizeof *o);
    o->L = 4; o->K = 2; o->F = 8; o->N = 32; o->frac_terms = 0.25; o->width = 1; o->seeds = 3; o->batch = 128; o->steps = 2000;
    o->eval_every = 250; o->eval_tasks = 2048; o->dropout = 0.1; o->nwd = 1; o->wd[0] = 0.1; o->nlr = 1;
    o->nkind = 3; o->kind[0] = ATTN_SOFTMAX; o->kind[1] = ATTN_LINEAR_RAW; o->kind[2] = ATTN_HYLA;
    for (i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { hyla_usage(stdout); help_shown = 1; return 0; }
        if (!v) { fprintf(stderr, "attnlab: %s needs a value (or is unknown; see --help)\n", a); return 0; }
        if (!strcmp(a, "--task")) {
            ok = !strcmp(v, "fuzzy") || !strcmp(v, "sraven");
            o->sraven = !strcmp(v, "sraven");
            if (o->sraven) o->K = 4;
        } else if (!strcmp(a, "--N")) ok = parse_int(v, 2, &o->N) && o->N <= MAX_WIDTH;
        else if (!strcmp(a, "--L")) ok = parse_int(v, 1, &o->L) && o->L <= 12;
        else if (!strcmp(a, "--K")) ok = parse_int(v, 1, &o->K);
        else if (!strcmp(a, "--F")) ok = parse_int(v, 3, &o->F) && o->F <= 32;
        else if (!strcmp(a, "--frac")) ok = hparse_frac(v, &o->frac) && (frac_given = 1);
        else if (!strcmp(a, "--frac-terms")) ok = hparse_frac(v, &o->frac_terms);
        else if (!strcmp(a, "--layers")) ok = parse_int(v, 1, &layers) && layers <= ATTN_MAX_LAYERS;
        else if (!strcmp(a, "--width")) ok = parse_int(v, 1, &o->width) && o->width <= 16;
        else if (!strcmp(a, "--steps")) ok = parse_int(v, 1, &e) && (o->steps = e, 1);
        else if (!strcmp(a, "--batch")) ok = parse_int(v, 1, &o->batch) && o->batch <= MAX_WIDTH;
        else if (!strcmp(a, "--lr")) ok = hparse_list(v, o->lr, HMAX_GRID, &o->nlr) && (lr_given = 1);
        else if (!strcmp(a, "--wd")) ok = hparse_list(v, o->wd, HMAX_GRID, &o->nwd);
        else if (!strcmp(a, "--warmup")) ok = parse_int(v, 0, &o->warmup) && (warm_given = 1);
        else if (!strcmp(a, "--dropout")) ok = hparse_list(v, &o->dropout, 1, &e) && o->dropout < 1;
        else if (!strcmp(a, "--seeds")) ok = parse_int(v, 1, &o->seeds) && o->seeds <= MAX_SEEDS;
        else if (!strcmp(a, "--seed0")) ok = parse_int(v, 0, &o->seed0);
        else if (!strcmp(a, "--eval-every")) ok = parse_int(v, 1, &o->eval_every);
        else if (!strcmp(a, "--eval-tasks")) ok = parse_int(v, 1, &o->eval_tasks) && o->eval_tasks <= 1 << 24;
        else if (!strcmp(a, "--threads")) ok = parse_int(v, 0, &o->threads) && o->threads <= MAX_THREADS;
        else if (sparse_option(&o->sparse, a, v, &ok)) { /* ok says whether v is valid */ }
        else if (!strcmp(a, "--csv")) o->csv = v;
        else if (!strcmp(a, "--svg")) o->svg = v;
        else if (!strcmp(a, "--codes")) o->codes = v;
        else if (!strcmp(a, "--save")) o->save = v;
        else if (!strcmp(a, "--attn")) {
            char buf[256], *tok, *save = NULL;
            snprintf(buf, sizeof buf, "%s", v);
            o->nkind = 0;
            for (tok = strtok_r(buf, ",", &save); tok && ok; tok = strtok_r(NULL, ",", &save)) {
                int k = attn_kind_from_name(tok);
                ok = k >= 0 && !(attn_kind_get((attn_kind)k)->flags & ATTN_KF_NO_DROPOUT) && o->nkind < HMAX_KINDS; /* the model has dropout */
                if (ok) o->kind[o->nkind++] = (attn_kind)k;
            }
        } else { fprintf(stderr, "attnlab: unknown option %s for --task fuzzy|sraven (see attnlab train --task fuzzy --help)\n", a); return 0; }
        if (!ok) { fprintf(stderr, "attnlab: bad value '%s' for %s (see attnlab train --task fuzzy --help)\n", v, a); return 0; }
        i++;
    }
    o->layers = layers ? layers : o->sraven ? 4 : 2;
    if (!lr_given) o->lr[0] = o->sraven ? 3e-4 : 1e-3;
    if (!warm_given) o->warmup = o->sraven ? 1000 : 100;
    if (!frac_given) o->frac = o->sraven ? 0.25 : 0.7;
    if (o->warmup >= o->steps - o->warmup) o->warmup = (int)(o->steps / 4); /* short runs: keep the cosine */
    if (o->sraven && (o->K > 8)) { fprintf(stderr, "attnlab: --K %d: SRAVEN takes 1 .. 8 features\n", o->K); return 0; }
    return 1;
}

/* The HYLA paper's model for the options: fuzzy 2 layers, E 128, 8 heads of 2, MLP 256; SRAVEN
   E 128 w, 16 w heads of 4, MLP 256 w; pre-LN (eps 1e-6), GELU, T5 biases, non-causal, dense inputs,
   flax initialisation. */
static attn_transformer_config hyla_config(const hopts *o, attn_kind kind)
{
    attn_transformer_config c;
    int l;
    memset(&c, 0, sizeof c);
    c.in_dim = o->sraven ? o->F : o->L + 1;
    c.d = 128 * (o->sraven ? o->width : 1);
    c.layers = o->layers;
    c.heads = o->sraven ? 16 * o->width : 8;
    c.dk = c.dv = o->sraven ? 4 : 2;
    c.mlp = 256 * (o->sraven ? o->width : 1);
    c.max_T = o->sraven ? 9 * o->K : o->N;
    c.out = o->sraven ? o->F : 1;
    c.readout = o->sraven ? o->K : 1;
    c.eps = (attn_float)1e-6; c.act = ATTN_ACT_GELU_TANH; c.bias = 1; c.t5 = 1; c.dropout = (attn_float)o->dropout;
    sparse_apply(&o->sparse, &c);
    c.t5 = !c.linformer_k; /* T5 biases score every key; Linformer's keys are compressed */
    c.init = ATTN_INIT_LECUN;
    for (l = 0; l < c.layers; l++) c.kinds[l] = kind;
    return c;
}

/* The task of a seed: its split. */
typedef struct {
    attn_fuzzy fz;
    attn_sraven sr;
} htask;

static int htask_init(htask *t, const hopts *o, int seed)
{
    memset(t, 0, sizeof *t);
    if (o->sraven) return attn_sraven_init(&t->sr, o->K, o->F, o->frac, 1, (uint64_t)seed) == ATTN_OK;
    return attn_fuzzy_init(&t->fz, o->L, o->K, o->N, o->frac, o->frac_terms, (uint64_t)seed) == ATTN_OK;
}

static void htask_free(htask *t)
{
    attn_fuzzy_free(&t->fz);
    attn_sraven_free(&t->sr);
}

/* Buffers for one batch: inputs x [B, T, in], fuzzy targets y and variances [B], SRAVEN targets
   [B, K], outputs and their gradient [B, R, out], per-token losses and probabilities. */
typedef struct {
    attn_float *x, *y, *var, *out, *dout, *loss, *probs, *cache;
    int *targets;
    void *work;
    size_t cf, wb; /* the cache's floats, the workspace's bytes */
} hbuf;

static int hbuf_alloc(hbuf *b, const attn_transformer *m, int B)
{
    const attn_transformer_config *c = &m->cfg;
    size_t no = (size_t)B * c->readout * c->out;
    b->x = (attn_float *)malloc(sizeof(attn_float) * (size_t)B * c->max_T * c->in_dim);
    b->y = (attn_float *)malloc(sizeof(attn_float) * (size_t)B);
    b->var = (attn_float *)malloc(sizeof(attn_float) * (size_t)B);
    b->out = (attn_float *)malloc(sizeof(attn_float) * no);
    b->dout = (attn_float *)malloc(sizeof(attn_float) * no);
    b->loss = (attn_float *)malloc(sizeof(attn_float) * (size_t)B * c->readout);
    b->probs = (attn_float *)malloc(sizeof(attn_float) * no);
    b->targets = (int *)malloc(sizeof(int) * (size_t)B * c->readout);
    b->cache = (attn_float *)malloc(sizeof(attn_float) * (b->cf = attn_transformer_cache_floats(m, B, c->max_T)));
    b->wb = attn_transformer_work_bytes(m, B, c->max_T);
    b->work = malloc(b->wb);
    return b->x && b->y && b->var && b->out && b->dout && b->loss && b->probs && b->targets && b->cache && b->work;
}

/* The batch in b from example a on (its inputs, targets and outputs; the same cache and work). */
static hbuf hview(const hbuf *b, const attn_transformer *m, int a)
{
    const attn_transformer_config *c = &m->cfg;
    hbuf v = *b;
    size_t r = (size_t)a * c->readout;
    v.x += (size_t)a * c->max_T * c->in_dim;
    v.y += a; v.var += a;
    v.out += r * c->out; v.dout += r * c->out; v.probs += r * c->out;
    v.loss += r; v.targets += r;
    return v;
}

static void hbuf_free(hbuf *b)
{
    free(b->x); free(b->y); free(b->var); free(b->out); free(b->dout); free(b->loss); free(b->probs); free(b->targets);
    free(b->cache); free(b->work);
}

/* Draws a batch of B tasks: the training combinations (ood = 0) or the held-out ones; which [B]
   (may be NULL) receives each task's combination (latent) index in its split (in latent[]). */
static void hbatch(const hopts *o, const htask *t, int ood, int B, hbuf *b, int *which, attn_rng *r)
{
    if (o->sraven) attn_sraven_batch(&t->sr, ood, B, b->x, b->targets, which, r);
    else attn_fuzzy_batch(&t->fz, ood ? ATTN_FUZZY_HELDOUT : ATTN_FUZZY_TRAIN, B, b->x, b->y, b->var, which, r);
}

/* The loss of the batch in b->out and, with grad, its gradient in b->dout: fuzzy mean squared
   error of the query's output; SRAVEN mean cross-entropy over the K query tokens. */
static double hloss(const hopts *o, const attn_transformer *m, hbuf *b, int B, int grad)
{
    const attn_transformer_config *c = &m->cfg;
    double l = 0;
    int i, n = B * c->readout;
    if (o->sraven) {
        attn_cross_entropy_forward(b->loss, b->probs, b->out, b->targets, n, c->out);
        for (i = 0; i < n; i++) l += b->loss[i] / n;
        if (grad) {
            memset(b->dout, 0, sizeof(attn_float) * (size_t)n * c->out);
            attn_cross_entropy_backward(b->dout, NULL, (attn_float)(1.0 / n), b->probs, b->targets, n, c->out);
        }
        return l;
    }
    for (i = 0; i < B; i++) {
        double e = (double)b->out[i] - b->y[i];
        l += e * e / B;
        if (grad) b->dout[i] = (attn_float)(2 * e / B);
    }
    return l;
}

/* The metric over n tasks (in batches): mean R^2 (fuzzy) or the fraction of instances with every
   feature right (SRAVEN; *feat, if not NULL, gets the fraction of features right). The evaluation
   set is the same at every call (r re-seeded by the caller). */
static double hmetric(const hopts *o, attn_transformer *m, const htask *t, int ood, int n, hbuf *b, int B, attn_rng *r, double *feat)
{
    const attn_transformer_config *c = &m->cfg;
    double s = 0, f = 0;
    int done = 0, i, k;
    m->training = 0;
    while (done < n) {
        int nb = n - done < B ? n - done : B;
        hbatch(o, t, ood, nb, b, NULL, r);
        if (attn_transformer_forward(m, b->out, b->cache, b->cf, NULL, b->x, nb, c->max_T, b->work, b->wb) != ATTN_OK) return NAN;
        if (!o->sraven) s += attn_fuzzy_r2(b->out, b->y, b->var, nb) * nb;
        else
            for (i = 0; i < nb; i++) {
                int all = 1;
                for (k = 0; k < c->readout; k++) {
                    const attn_float *z = b->out + ((size_t)i * c->readout + k) * c->out;
                    int best = 0, v;
                    for (v = 1; v < c->out; v++) best = z[v] > z[best] ? v : best;
                    all = all && best == b->targets[i * c->readout + k];
                    f += best == b->targets[i * c->readout + k];
                }
                s += all;
            }
        done += nb;
    }
    if (feat) *feat = o->sraven ? f / ((double)n * c->readout) : NAN;
    return s / n;
}

static progress_set hprog;

/* The latent codes of n tasks of a split, codes [layers, n, H]: at each layer, every head's score of
   the query token attending to itself (fuzzy: the last token; SRAVEN: query token q of the K, given
   by q_of_task [n]); which [n] gets each task's combination or latent. */
static void hcodes(const hopts *o, attn_transformer *m, const htask *t, int ood, int n, const int *q_of_task, attn_float *codes,
                   int *which, hbuf *b, attn_rng *r)
{
    const attn_transformer_config *c = &m->cfg;
    size_t wwb = attn_transformer_weights_work_bytes(m, o->batch, c->max_T);
    void *ww = malloc(wwb);
    attn_float *w = (attn_float *)malloc(sizeof(attn_float) * (size_t)o->batch * c->heads * c->max_T * c->max_T);
    int done = 0, i, l, h, T = c->max_T;
    m->training = 0;
    while (done < n && ww && w) {
        int nb = n - done < o->batch ? n - done : o->batch;
        hbatch(o, t, ood, nb, b, which + done, r);
        attn_transformer_forward(m, b->out, b->cache, b->cf, NULL, b->x, nb, T, b->work, b->wb);
        for (l = 0; l < c->layers; l++) {
            attn_transformer_weights(m, w, b->cache, b->cf, nb, T, l, ww, wwb);
            for (i = 0; i < nb; i++) {
                int q = T - 1 - (q_of_task ? q_of_task[done + i] : 0);
                for (h = 0; h < c->heads; h++)
                    codes[((size_t)l * n + done + i) * c->heads + h] = w[(((size_t)i * c->heads + h) * T + q) * T + q];
            }
        }
        done += nb;
    }
    free(ww); free(w);
}

/* The terms of n fuzzy tasks' combinations which [n] of split sp, y [n, nterms]: 1 where term k is
   in the task's function. */
static void hterms(const hopts *o, const htask *t, int sp, const int *which, int n, int *y)
{
    int i, j, nt = t->fz.nterms;
    memset(y, 0, sizeof(int) * (size_t)n * nt);
    for (i = 0; i < n; i++)
        for (j = 0; j < o->K; j++) y[(size_t)i * nt + t->fz.combos[sp][(size_t)which[i] * o->K + j]] = 1;
}

/* The latent-code probe on codes ztr, zho [n, H] with the terms ytr, yho [n, nterms]: per term, a
   class-balanced logistic regression fit on the training tasks, its held-out F1; the mean over the
   terms that vary in training and occur held out, and in *chance guessing "present" with probability
   1/2 (F1 p / (p + 1/2)). lab [2n] is scratch. */
static double hprobe(const attn_float *ztr, const attn_float *zho, const int *ytr, const int *yho, int n, int H, int nterms, int *lab,
                     double *chance)
{
    double sum = 0, w[65], mu[64], sd[64];
    int k, i, terms = 0;
    *chance = 0;
    for (k = 0; k < nterms && H <= 64; k++) {
        int ptr = 0, pho = 0;
        for (i = 0; i < n; i++) {
            ptr += lab[i] = ytr[(size_t)i * nterms + k];
            pho += lab[n + i] = yho[(size_t)i * nterms + k];
        }
        if (!ptr || ptr == n || !pho) continue;
        attn_probe_fit(w, mu, sd, ztr, lab, n, H, 200, 0.5, 1e-3, 1); /* terms are rare: balanced */
        sum += attn_probe_f1(w, mu, sd, zho, lab + n, n, H);
        *chance += (double)pho / n / ((double)pho / n + 0.5);
        terms++;
    }
    if (terms) *chance /= terms;
    return terms ? sum / terms : 0;
}

/* The probe's positive control: codes known to carry the terms linearly, each task's terms y [n,
   nterms] mixed into H features by one fixed N(0, 1) matrix, plus Gaussian noise with each feature's
   variance over the tasks (signal-to-noise 1), written to z [2][n, H] (training, held out). If the
   probe finds the terms here and not in a model's code, the code does not carry them linearly. */
static void hprobe_control(const int *ytr, const int *yho, int n, int H, int nterms, attn_float *z, attn_rng *r)
{
    double *P = (double *)malloc(sizeof(double) * (size_t)H * nterms), sd[64];
    int h, k, i, sp;
    if (!P) { memset(z, 0, sizeof(attn_float) * 2 * (size_t)n * H); return; }
    for (i = 0; i < H * nterms; i++) P[i] = attn_rng_normal(r, 0, 1);
    for (sp = 0; sp < 2; sp++)
        for (i = 0; i < n; i++)
            for (h = 0; h < H; h++) {
                double v = 0;
                for (k = 0; k < nterms; k++) v += P[h * nterms + k] * (sp ? yho : ytr)[(size_t)i * nterms + k];
                z[((size_t)sp * n + i) * H + h] = (attn_float)v;
            }
    for (h = 0; h < H && h < 64; h++) {
        double m = 0, v = 0;
        for (i = 0; i < n; i++) m += z[(size_t)i * H + h] / n;
        for (i = 0; i < n; i++) v += (z[(size_t)i * H + h] - m) * (z[(size_t)i * H + h] - m) / n;
        sd[h] = sqrt(v);
    }
    for (i = 0; i < 2 * n; i++)
        for (h = 0; h < H && h < 64; h++) z[(size_t)i * H + h] += (attn_float)attn_rng_normal(r, 0, sd[h]);
    free(P);
}

/* After training: the fuzzy probe (per layer, the mean over terms of the held-out F1 of a logistic
   regression from the code to "term k is in the function", fit on training tasks), and with
   --codes the codes of held-out tasks (and for SRAVEN the rule similarity of the last layer). */
static void hyla_analyse(const hopts *o, attn_transformer *m, htask *t, hrun *res, hbuf *b)
{
    const attn_transformer_config *c = &m->cfg;
    int n = o->eval_tasks, H = c->heads, l, k, i, *wtr = (int *)malloc(sizeof(int) * (size_t)n), *who = (int *)malloc(sizeof(int) * (size_t)n);
    int *qs = (int *)malloc(sizeof(int) * (size_t)n);
    attn_float *ctr = (attn_float *)malloc(sizeof(attn_float) * (size_t)c->layers * n * H), *cho = (attn_float *)malloc(sizeof(attn_float) * (size_t)c->layers * n * H);
    int write = o->codes && res->seed == o->seed0 && res->ilr == 0 && res->iwd == 0;
    attn_rng r;
    if (!wtr || !who || !qs || !ctr || !cho) goto done;
    for (i = 0; i < n; i++) qs[i] = o->sraven ? i % o->K : 0; /* SRAVEN: query token K-1-q, cycling */
    if (o->sraven) t->sr.permute = 0; /* unpermuted instances: query q asks for feature K-1-q's rule */
    attn_rng_seed(&r, (uint64_t)res->seed, 6);
    hcodes(o, m, t, 1, n, o->sraven ? qs : NULL, cho, who, b, &r);
    if (!o->sraven) {
        int nt = t->fz.nterms, *ytr = (int *)malloc(sizeof(int) * (size_t)n * nt * 2), *yho = ytr + (size_t)n * nt;
        int *lab = (int *)malloc(sizeof(int) * 2 * (size_t)n);
        attn_float *zc = (attn_float *)malloc(sizeof(attn_float) * 2 * (size_t)n * H);
        double ch;
        attn_rng_seed(&r, (uint64_t)res->seed, 5);
        hcodes(o, m, t, 0, n, NULL, ctr, wtr, b, &r);
        if (ytr && lab && zc) {
            hterms(o, t, ATTN_FUZZY_TRAIN, wtr, n, ytr);
            hterms(o, t, ATTN_FUZZY_HELDOUT, who, n, yho);
            for (l = 0; l < c->layers; l++)
                res->probe[l] = hprobe(ctr + (size_t)l * n * H, cho + (size_t)l * n * H, ytr, yho, n, H, nt, lab, &res->chance);
            attn_rng_seed(&r, (uint64_t)res->seed, 8);
            hprobe_control(ytr, yho, n, H, nt, zc, &r);
            res->control = hprobe(zc, zc + (size_t)n * H, ytr, yho, n, H, nt, lab, &ch); /* ch: the same chance */
        }
        free(ytr); free(lab); free(zc);
    }
    if (write) {
        char path[1024];
        FILE *f;
        snprintf(path, sizeof path, "%s-%s.csv", o->codes, attn_kind_get(c->kinds[0])->name);
        if ((f = fopen(path, "w")) != NULL) {
            fprintf(f, "layer,task,%s", o->sraven ? "latent,query,rule" : "combination,terms");
            for (k = 0; k < H; k++) fprintf(f, ",head%d", k);
            fprintf(f, "\n");
            for (l = 0; l < c->layers; l++)
                for (i = 0; i < n; i++) {
                    if (o->sraven) fprintf(f, "%d,%d,%d,%d,%d", l, i, who[i], qs[i], t->sr.latent[(size_t)who[i] * o->K + o->K - 1 - qs[i]]);
                    else {
                        fprintf(f, "%d,%d,%d,", l, i, who[i]);
                        for (k = 0; k < o->K; k++) fprintf(f, "%s%d", k ? " " : "", t->fz.combos[ATTN_FUZZY_HELDOUT][(size_t)who[i] * o->K + k]);
                    }
                    for (k = 0; k < H; k++) fprintf(f, ",%.6g", cho[((size_t)l * n + i) * H + k]);
                    fprintf(f, "\n");
                }
            fclose(f);
        }
        if (o->sraven) { /* the mean code per rule at the last layer, and the cosine similarity of those */
            static const char *rules[ATTN_SRAVEN_RULES] = {"constant", "prog +1", "prog +2", "prog -1", "prog -2", "addition", "subtraction", "distribute 3"};
            attn_float mean[ATTN_SRAVEN_RULES * 64] = {0}, S[ATTN_SRAVEN_RULES * ATTN_SRAVEN_RULES];
            int cnt[ATTN_SRAVEN_RULES] = {0}, rr;
            char title[128];
            l = c->layers - 1;
            for (i = 0; i < n && H <= 64; i++) {
                rr = t->sr.latent[(size_t)who[i] * o->K + o->K - 1 - qs[i]];
                cnt[rr]++;
                for (k = 0; k < H; k++) mean[rr * H + k] += cho[((size_t)l * n + i) * H + k];
            }
            for (rr = 0; rr < ATTN_SRAVEN_RULES; rr++)
                for (k = 0; k < H && cnt[rr]; k++) mean[rr * H + k] /= (attn_float)cnt[rr];
            attn_cosine_matrix(S, mean, ATTN_SRAVEN_RULES, H);
            snprintf(path, sizeof path, "%s-%s-cos.csv", o->codes, attn_kind_get(c->kinds[0])->name);
            if ((f = fopen(path, "w")) != NULL) {
                for (rr = 0; rr < ATTN_SRAVEN_RULES * ATTN_SRAVEN_RULES; rr++)
                    fprintf(f, "%.6f%s", S[rr], rr % ATTN_SRAVEN_RULES == ATTN_SRAVEN_RULES - 1 ? "\n" : ",");
                fclose(f);
            }
            snprintf(path, sizeof path, "%s-%s-cos.svg", o->codes, attn_kind_get(c->kinds[0])->name);
            snprintf(title, sizeof title, "%s, layer %d: cosine similarity of the mean code per rule", attn_kind_get(c->kinds[0])->name, l);
            attn_heatmap_svg(path, title, S, ATTN_SRAVEN_RULES, ATTN_SRAVEN_RULES, rules, rules, ATTN_HEAT_SIGNED);
        }
    }
    if (o->sraven) t->sr.permute = 1;
done:
    free(wtr); free(who); free(qs); free(ctr); free(cho);
}

/* Where run res saves its model (--save). */
static void hsave_path(const hopts *o, const hrun *res, char *path, size_t size)
{
    char tag[128];
    if (o->nlr * o->nwd > 1) snprintf(tag, sizeof tag, "%s-lr%g-wd%g-s%d", attn_kind_get(o->kind[res->kind])->name, o->lr[res->ilr],
                                      o->wd[res->iwd], res->seed);
    else snprintf(tag, sizeof tag, "%s-s%d", attn_kind_get(o->kind[res->kind])->name, res->seed);
    run_save_path(o->save, o->nkind * o->nlr * o->nwd * o->seeds, tag, path, size);
}

/* A run in progress as bytes (a snapshot, attnlab.h): the step it goes on from, everything that
   carries over from step to step, and its curve so far (room for nev evaluations). */
typedef struct {
    long step;
    attn_rng data;
    double lsum;
    int lcount;
} hstate;
/* A run's result (its curve so far, with room for nev evaluations, and its final numbers) through
   jb_io; whether it succeeded. */
static int hrun_io(jobbuf *b, hrun *r, int nev)
{
    jb_count(b, &r->nevals, nev);
    jb_io(b, r->step, sizeof(long) * (size_t)r->nevals);
    jb_io(b, r->loss, sizeof(double) * (size_t)r->nevals);
    jb_io(b, r->valid, sizeof(double) * (size_t)r->nevals);
    jb_io(b, r->ood, sizeof(double) * (size_t)r->nevals);
    jb_io(b, &r->final_valid, sizeof r->final_valid);
    jb_io(b, &r->final_ood, sizeof r->final_ood);
    jb_io(b, &r->final_feat, sizeof r->final_feat);
    jb_io(b, r->probe, sizeof r->probe);
    jb_io(b, &r->chance, sizeof r->chance);
    jb_io(b, &r->control, sizeof r->control);
    jb_io(b, &r->failed, sizeof r->failed);
    return !r->failed;
}

static void hyla_state(jobbuf *b, hstate *t, hrun *res, attn_params *p, attn_float *mom, attn_float *vel, int nev)
{
    jb_io(b, t, sizeof *t);
    hrun_io(b, res, nev);
    jb_io(b, p->data, sizeof(attn_float) * p->total);
    jb_io(b, mom, sizeof(attn_float) * p->total);
    jb_io(b, vel, sizeof(attn_float) * p->total);
}

/* Run j (res) of the grid; nev: the evaluations res has room for. */
static void hyla_run(const hopts *o, hrun *res, int j, int nev)
{
    attn_transformer_config cf = hyla_config(o, o->kind[res->kind]);
    attn_transformer m;
    attn_schedule sched;
    htask task;
    hbuf tb, eb;
    attn_rng init, ev;
    attn_float *mom = NULL, *vel = NULL;
    hstate t = {0, {0, 0}, 0, 0};
    jobbuf snap;
    double l;
    int i, evaluate = !data_parallel || mpi_rank() == 0; /* data-parallel: rank 0 evaluates */
    dp_sum dp = {0};
    char line[256];
    attn_status st = ATTN_OK;
    attn_rng_seed(&init, (uint64_t)res->seed, 1);
    attn_rng_seed(&t.data, (uint64_t)res->seed, 2);
    if (!htask_init(&task, o, res->seed) || attn_transformer_init(&m, &cf, &init) != ATTN_OK) {
        fprintf(stderr, "\nattnlab: %s\n", attn_last_error());
        res->failed = 1;
        return;
    }
    for (i = 0; i < m.p.count; i++) /* optax's mask: every tensor but the 1-D ones; flax's q, k, v biases are (H, dh) */
        if (!strcmp(m.p.name[i], "bq") || !strcmp(m.p.name[i], "bk") || !strcmp(m.p.name[i], "bv")) m.p.decay[i] = 1;
    attn_schedule_warmup_cosine(&sched, 0, o->lr[res->ilr], o->warmup, o->steps - o->warmup, 0.1 * o->lr[res->ilr]);
    mom = (attn_float *)calloc(m.p.total, sizeof(attn_float));
    vel = (attn_float *)calloc(m.p.total, sizeof(attn_float));
    if (!mom || !vel || !hbuf_alloc(&tb, &m, o->batch) || !hbuf_alloc(&eb, &m, o->batch) ||
        (data_parallel && !dp_begin(&dp, m.p.total, dp_chunks < o->batch ? dp_chunks : o->batch))) {
        fprintf(stderr, "\nattnlab: out of memory\n");
        res->failed = 1;
        return;
    }
    if (snap_resume(j, &snap)) { /* --resume: on from the snapshot */
        hyla_state(&snap, &t, res, &m.p, mom, vel, nev);
        if (!snap_resumed(j, &snap, t.step)) {
            res->failed = 1;
            res->nevals = 0;
            t.step = o->steps + 1;
        }
    }
    for (; t.step <= o->steps && !stop_requested; t.step++) {
        long step = t.step;
        if (step % o->eval_every == 0 || step == o->steps) {
            int k = res->nevals++;
            res->step[k] = step;
            res->loss[k] = t.lcount ? t.lsum / t.lcount : NAN; /* the mean training loss since the last evaluation */
            t.lsum = 0; t.lcount = 0;
            attn_rng_seed(&ev, (uint64_t)res->seed, 3);
            res->valid[k] = evaluate ? hmetric(o, &m, &task, 0, o->eval_tasks, &eb, o->batch, &ev, NULL) : 0;
            attn_rng_seed(&ev, (uint64_t)res->seed, 4);
            res->ood[k] = evaluate ? hmetric(o, &m, &task, 1, o->eval_tasks, &eb, o->batch, &ev, &res->final_feat) : 0;
            res->prog.latest = res->ood[k];
            res->prog.evaluated = 1;
            hyla_row(line, sizeof line, o, res, k);
            csv_row(&hyla_csv_log, line);
        }
        if (step == o->steps) break;
        hbatch(o, &task, 0, o->batch, &tb, NULL, &t.data);
        m.training = 1;
        if (data_parallel) { /* this rank's chunks of the batch, each on its own, then their exact sum */
            int c, C = dp_chunks < o->batch ? dp_chunks : o->batch;
            for (c = 0; c < C && st == ATTN_OK; c++) {
                int a = (int)((long)c * o->batch / C), nb = (int)((long)(c + 1) * o->batch / C) - a;
                hbuf v;
                if (!dp_mine(c)) continue;
                v = hview(&tb, &m, a);
                m.seed = (((uint64_t)res->seed << 32) + (uint64_t)step) * (uint64_t)C + (uint64_t)c;
                if ((st = attn_transformer_forward(&m, v.out, v.cache, v.cf, NULL, v.x, nb, cf.max_T, v.work, v.wb)) != ATTN_OK) break;
                l = hloss(o, &m, &v, nb, 1);
                attn_params_zero_grad(&m.p);
                if ((st = attn_transformer_backward(&m, v.dout, v.cache, v.cf, NULL, v.x, nb, cf.max_T, v.work, v.wb)) != ATTN_OK) break;
                dp_add(&dp, c, m.p.gdata, (double)nb / o->batch, l);
            }
            if (st != ATTN_OK) break;
            t.lsum += dp_end(&dp, m.p.gdata);
        } else {
            m.seed = ((uint64_t)res->seed << 32) + (uint64_t)step;
            if ((st = attn_transformer_forward(&m, tb.out, tb.cache, tb.cf, NULL, tb.x, o->batch, cf.max_T, tb.work, tb.wb)) != ATTN_OK) break;
            t.lsum += hloss(o, &m, &tb, o->batch, 1);
            attn_params_zero_grad(&m.p);
            if ((st = attn_transformer_backward(&m, tb.dout, tb.cache, tb.cf, NULL, tb.x, o->batch, cf.max_T, tb.work, tb.wb)) != ATTN_OK)
                break;
        }
        t.lcount++;
        attn_adamw_step(&m.p, mom, vel, step + 1, (attn_float)attn_schedule_lr(&sched, step), (attn_float)0.9, (attn_float)0.999,
                        (attn_float)1e-8, (attn_float)o->wd[res->iwd]);
        res->prog.done = step + 1;
        if (step % 8 == 0) progress_report(&hprog, 0);
        if (snap_due(step + 1) && step + 1 < o->steps) { /* the state before step + 1 */
            hstate next = t;
            memset(&snap, 0, sizeof snap);
            next.step = step + 1;
            hyla_state(&snap, &next, res, &m.p, mom, vel, nev);
            snap_save(j, &snap);
            free(snap.p);
        }
    }
    if (!res->failed && (st != ATTN_OK || res->ood[res->nevals - 1] != res->ood[res->nevals - 1])) { /* a call refused: say why */
        fprintf(stderr, "\nattnlab: %s\n", attn_last_error());
        res->failed = 1;
    }
    if (res->nevals > 0) {
        res->final_valid = res->valid[res->nevals - 1];
        res->final_ood = res->ood[res->nevals - 1];
    }
    if (!res->failed && !stop_requested && evaluate) hyla_analyse(o, &m, &task, res, &eb);
    if (o->save && !res->failed && !stop_requested && evaluate) { /* data-parallel: rank 0 saves */
        char path[1024];
        hsave_path(o, res, path, sizeof path);
        if (attn_transformer_save(&m, path) != ATTN_OK) {
            fprintf(stderr, "\nattnlab: %s\n", attn_last_error());
            res->failed = 1;
        }
    }
    hbuf_free(&tb); hbuf_free(&eb);
    dp_free(&dp);
    free(mom); free(vel);
    htask_free(&task);
    attn_transformer_free(&m);
}

/* Mean and standard error over the seeds of (kind, ilr, iwd) of a final number (0 valid, 1 ood). */
static double hmean(const hopts *o, const hrun *res, int kind, int ilr, int iwd, int which, double *se)
{
    double m = 0, v = 0, x;
    int s, n = o->seeds;
    for (s = 0; s < n; s++) {
        const hrun *r = &res[((kind * o->nlr + ilr) * o->nwd + iwd) * n + s];
        m += (which ? r->final_ood : r->final_valid) / n;
    }
    for (s = 0; s < n; s++) {
        const hrun *r = &res[((kind * o->nlr + ilr) * o->nwd + iwd) * n + s];
        x = which ? r->final_ood : r->final_valid;
        v += (x - m) * (x - m);
    }
    *se = n > 1 ? sqrt(v / (n - 1) / n) : 0;
    return m;
}

/* The (lr, wd) index ilr * nwd + iwd with the best mean final metric (0 valid, 1 ood). */
static int hbest(const hopts *o, const hrun *res, int kind, int which)
{
    double best = -INFINITY, se, m;
    int g, arg = 0;
    for (g = 0; g < o->nlr * o->nwd; g++)
        if ((m = hmean(o, res, kind, g / o->nwd, g % o->nwd, which, &se)) > best) { best = m; arg = g; }
    return arg;
}

static void hyla_report(const hopts *o, const hrun *res)
{
    const char *metric = o->sraven ? "accuracy" : "R^2";
    int k;
    printf("\n%-24s %-26s %-22s %-26s\n", "attention", "held-out (best held-out)", "at lr, wd", "held-out (best validation)");
    for (k = 0; k < o->nkind; k++) {
        int a = hbest(o, res, k, 1), b = hbest(o, res, k, 0);
        double sa, sb, ma = hmean(o, res, k, a / o->nwd, a % o->nwd, 1, &sa), mb = hmean(o, res, k, b / o->nwd, b % o->nwd, 1, &sb);
        char at[32];
        snprintf(at, sizeof at, "%g, %g", o->lr[a / o->nwd], o->wd[a % o->nwd]);
        printf("%-24s %.4f +- %.4f          %-22s %.4f +- %.4f (lr %g, wd %g)\n", attn_kind_get(o->kind[k])->name, ma, sa, at, mb, sb,
               o->lr[b / o->nwd], o->wd[b % o->nwd]);
    }
    printf("(held-out %s on %d tasks after %ld steps, mean +- s.e. over %d seeds; validation: fresh tasks of the\n"
           " training combinations)\n", metric, o->eval_tasks, o->steps, o->seeds);
    if (o->sraven) { /* the features one at a time: what a short run learns first */
        int s;
        printf("\nheld-out per-feature accuracy (chance %.3f) at the best-by-validation (lr, wd), mean over seeds:\n", 1.0 / o->F);
        for (k = 0; k < o->nkind; k++) {
            int b = hbest(o, res, k, 0), base = ((k * o->nlr + b / o->nwd) * o->nwd + b % o->nwd) * o->seeds;
            double f = 0;
            for (s = 0; s < o->seeds; s++) f += res[base + s].final_feat / o->seeds;
            printf("%-24s %.4f\n", attn_kind_get(o->kind[k])->name, f);
        }
    }
    if (!o->sraven) { /* the probe, at the best-by-validation (lr, wd), mean over seeds, per layer */
        int l, s;
        printf("\nlatent-code probe: held-out F1 of a class-balanced logistic regression from the query's\n"
               "self-attention code (one score per head) to each term, mean over the terms, per layer\n"
               "(chance: guessing each term present with probability 1/2; control: the same probe on codes\n"
               "known to carry the terms, mixed linearly into as many features with noise at signal-to-noise 1):\n");
        for (k = 0; k < o->nkind; k++) {
            int g = hbest(o, res, k, 0), base = ((k * o->nlr + g / o->nwd) * o->nwd + g % o->nwd) * o->seeds;
            double f;
            printf("%-24s", attn_kind_get(o->kind[k])->name);
            for (l = 0; l < o->layers; l++) {
                f = 0;
                for (s = 0; s < o->seeds; s++) f += res[base + s].probe[l] / o->seeds;
                printf(" layer %d %.3f", l, f);
            }
            for (f = 0, s = 0; s < o->seeds; s++) f += res[base + s].control / o->seeds;
            printf("   chance %.3f   control %.3f\n", res[base].chance, f);
        }
    }
}

/* The held-out metric per kind at its best-by-validation (lr, wd): mean with a +-1 sd band over
   seeds, and the training loss dashed on the right axis; 0 if it cannot be written. */
static int hyla_svg(const hopts *o, const hrun *res)
{
    attn_plot p;
    attn_plot_series s[2 * HMAX_KINDS];
    char title[160];
    int k, i, j, n = res[0].nevals;
    double *buf = (double *)malloc(sizeof(double) * (size_t)n * (1 + 4 * o->nkind));
    for (j = 0; j < o->nkind * o->nlr * o->nwd * o->seeds; j++) n = res[j].nevals < n ? res[j].nevals : n;
    for (i = 0; i < n; i++) buf[i] = (double)res[0].step[i];
    for (k = 0; k < o->nkind; k++) {
        int g = hbest(o, res, k, 0), base = ((k * o->nlr + g / o->nwd) * o->nwd + g % o->nwd) * o->seeds;
        double *m = buf + (size_t)n * (1 + 4 * k), *lo = m + n, *hi = lo + n, *ls = hi + n;
        for (i = 0; i < n; i++) {
            double mm = 0, v = 0, l = 0;
            for (j = 0; j < o->seeds; j++) { mm += res[base + j].ood[i] / o->seeds; l += res[base + j].loss[i] / o->seeds; }
            for (j = 0; j < o->seeds; j++) v += (res[base + j].ood[i] - mm) * (res[base + j].ood[i] - mm);
            v = o->seeds > 1 ? sqrt(v / (o->seeds - 1)) : 0;
            m[i] = mm; lo[i] = mm - v; hi[i] = mm + v; ls[i] = l;
        }
        memset(&s[2 * k], 0, 2 * sizeof s[0]);
        s[2 * k].label = attn_kind_get(o->kind[k])->name; s[2 * k].x = buf; s[2 * k].y = m; s[2 * k].lo = lo; s[2 * k].hi = hi;
        s[2 * k + 1].x = buf; s[2 * k + 1].y = ls; s[2 * k + 1].right = 1;
        s[2 * k].n = s[2 * k + 1].n = n; s[2 * k].colour = s[2 * k + 1].colour = k;
    }
    if (o->sraven) snprintf(title, sizeof title, "SRAVEN K %d, F %d, %d layers, width %d, %d seed%s", o->K, o->F, o->layers, o->width, o->seeds,
                            seeds_note(o->seeds));
    else snprintf(title, sizeof title, "fuzzy logic L %d, K %d, N %d, held out %.0f%%, %d seed%s", o->L, o->K, o->N, 100 * o->frac,
                  o->seeds, seeds_note(o->seeds));
    memset(&p, 0, sizeof p);
    p.title = title; p.xlabel = "step"; p.ylabel = o->sraven ? "held-out accuracy" : "held-out R^2"; p.y2label = "training loss (dashed)";
    p.ymin = o->sraven ? 0 : -0.5; p.ymax = 1; /* R^2 starts far below 0: the untrained model's values sit on the bottom edge */
    n = attn_plot_svg(o->svg, &p, s, 2 * o->nkind) == ATTN_OK;
    if (n) printf("wrote %s\n", o->svg);
    else fprintf(stderr, "attnlab: %s\n", attn_last_error());
    free(buf);
    return n;
}

/* Run j of the (kind, lr, wd, seed) grid, for run_jobs. */
struct hyla_jobs {
    const hopts *o; hrun *res;
    int nev; /* the evaluations a run has room for */
};
static void hyla_job(void *ctx, int j)
{
    struct hyla_jobs *t = (struct hyla_jobs *)ctx;
    hyla_run(t->o, &t->res[j], j, t->nev);
}
static int hyla_xfer(void *ctx, int j, jobbuf *b)
{
    struct hyla_jobs *t = (struct hyla_jobs *)ctx;
    return hrun_io(b, &t->res[j], t->nev);
}
static int hyla_line(const void *ctx, int j, int k, char *line, size_t n)
{
    const struct hyla_jobs *t = (const struct hyla_jobs *)ctx;
    if (k >= t->res[j].nevals) return 0;
    hyla_row(line, n, t->o, &t->res[j], k);
    return 1;
}

static int hyla_train(const hopts *o)
{
    int njobs = o->nkind * o->nlr * o->nwd * o->seeds, j, nev = (int)(o->steps / o->eval_every) + 2, failed = 0, lost, out, rc;
    hrun *res;
    attn_transformer_config cf;
    htask probe;
    struct hyla_jobs jobs;
    char codes[1024], save[1024];
    for (j = 0; j < o->nkind; j++) { /* each kind's model built, and (not a dry run) its size and speed measured */
        double bytes, secs;
        cf = hyla_config(o, o->kind[j]);
        if (dry_run ? !attn_transformer_param_count(&cf) : !transformer_probe(&cf, o->batch, cf.max_T, &bytes, &secs)) { fprintf(stderr, "attnlab: the model cannot be built: %s\n", attn_last_error()); return 1; }
        if (!dry_run && !limits_ok("attnlab", bytes, njobs, o->threads, secs, (double)o->steps * o->batch,
                                   ((double)o->steps / o->eval_every + 2) * o->eval_tasks * 2))
            return 1;
    }
    cf = hyla_config(o, o->kind[0]);
    if (!htask_init(&probe, o, 0)) { fprintf(stderr, "attnlab: %s\n", attn_last_error()); return 1; }
    htask_free(&probe);
    if (o->codes) snprintf(codes, sizeof codes, "%s-%s.csv", o->codes, attn_kind_get(o->kind[0])->name);
    if (o->save) {
        hrun first = {0};
        first.seed = o->seed0;
        hsave_path(o, &first, save, sizeof save);
    }
    if (!output_ok(o->csv) || !output_ok(o->svg) || !output_ok(o->codes ? codes : NULL) || !output_ok(o->save ? save : NULL)) return 1;
    if (dry_run) { printf("dry run: %d run(s) would start; the options, the models and the outputs are fine\n", njobs); return 0; }
    if (!(res = (hrun *)calloc((size_t)njobs, sizeof(hrun)))) { fprintf(stderr, "attnlab: out of memory\n"); return 1; }
    for (j = 0; j < njobs; j++) {
        res[j].seed = o->seed0 + j % o->seeds; res[j].iwd = j / o->seeds % o->nwd; res[j].ilr = j / (o->seeds * o->nwd) % o->nlr;
        res[j].kind = j / (o->seeds * o->nwd * o->nlr);
        res[j].step = (long *)calloc((size_t)nev, sizeof(long));
        res[j].loss = (double *)calloc((size_t)nev, sizeof(double));
        res[j].valid = (double *)calloc((size_t)nev, sizeof(double));
        res[j].ood = (double *)calloc((size_t)nev, sizeof(double));
        if (!res[j].step || !res[j].loss || !res[j].valid || !res[j].ood) { fprintf(stderr, "attnlab: out of memory\n"); return 1; }
    }
    printf("attnlab train: %s, %d layers (%lu parameters with %s), %d kind(s) x %d lr x %d wd x %d seeds, %ld steps of %d, warmup %d\n",
           o->sraven ? "SRAVEN" : "fuzzy logic", o->layers, (unsigned long)attn_transformer_param_count(&cf), attn_kind_get(o->kind[0])->name,
           o->nkind, o->nlr, o->nwd, o->seeds, o->steps, o->batch, o->warmup);
    progress_begin(&hprog, res, sizeof *res, offsetof(hrun, prog), njobs, (long)njobs * o->steps, "steps", "mean latest held-out metric");
    catch_stop();
    jobs.o = o; jobs.res = res; jobs.nev = nev;
    {
        job_set js = {hyla_job, hyla_xfer, hyla_line, &hyla_csv_log, o->csv, HYLA_CSV_HEADER, &jobs};
        lost = run_jobs(njobs, o->threads, &js, &hprog);
    }
    csv_end(&hyla_csv_log);
    for (j = 0; j < njobs; j++) failed += res[j].failed;
    out = runs_end(lost, failed, njobs, "attnlab", &rc);
    if (out == 2) hyla_report(o, res);
    if (out && o->csv && !csv_write(o->csv, HYLA_CSV_HEADER, njobs, hyla_line, &jobs)) rc = 1;
    if (out == 2 && o->svg && !hyla_svg(o, res)) rc = 1;
    for (j = 0; j < njobs; j++) { free(res[j].step); free(res[j].loss); free(res[j].valid); free(res[j].ood); }
    free(res);
    return rc;
}

/* The presets: Table A1's columns at a budget this machine carries. */
static const struct {
    const char *name, *claim, *args, *quick;
} hpresets[] = {
    {"hyla-fuzzy", "Table A1, fuzzy column: held-out R^2, L 4, K 2, N 32, 70% of combinations held out",
     "--task fuzzy --attn softmax,linear_raw,hyla,linear_rmshead,hyla_no_rmshead,hyla_linear,hyla_linear_no_rmshead,softmax_hyla,hyla_plus "
     "--steps 5000 --seeds 3 --lr 0.001,0.003 --wd 0.1,0.03 --eval-every 500 --csv results/hyla_fuzzy.csv --svg results/hyla_fuzzy.svg",
     "--task fuzzy --attn softmax,linear_raw,hyla --steps 600 --seeds 2 --eval-every 150 --eval-tasks 1024 "
     "--csv results/hyla_fuzzy_quick.csv --svg results/hyla_fuzzy_quick.svg"},
    {"hyla-sraven", "Table A1, SRAVEN column: OOD accuracy, 4 layers, width 1",
     "--task sraven --attn softmax,linear_raw,hyla,linear_rmshead,hyla_plus --steps 5000 --seeds 3 --lr 0.0003,0.001 --wd 0.1 "
     "--warmup 500 --eval-every 500 --csv results/hyla_sraven.csv --svg results/hyla_sraven.svg",
     "--task sraven --attn softmax,linear_raw,hyla --steps 400 --seeds 1 --warmup 50 --eval-every 100 --eval-tasks 512 "
     "--csv results/hyla_sraven_quick.csv --svg results/hyla_sraven_quick.svg"},
};

/* attnlab preset hyla-fuzzy|hyla-sraven [--quick] [options]: the preset's options, then the user's. */
static int hyla_preset(int argc, char **argv)
{
    const char *name = argv[2];
    char *args[256], buf[1024];
    int n, quick = 0, p;
    hopts o;
    for (p = 0; p < 2 && strcmp(hpresets[p].name, name); p++) {}
    n = preset_argv(argc, argv, "train", hpresets[p].args, hpresets[p].quick, buf, sizeof buf, args, 256, &quick);
    printf("preset %s%s: %s\n", name, quick ? " (quick)" : "", hpresets[p].claim);
    if (!hyla_parse(n, args, &o)) return !help_shown;
    return hyla_train(&o);
}

/* 1 if the command line is for the HYLA tasks: --task fuzzy|sraven, or a hyla- preset. */
/* attnlab ambiguity: the fraction of SRAVEN instances whose context admits another answer, by the
   paper's wording (some feature) and by every feature, R runs of N instances each, beside Table A2. */
static int hyla_ambiguity(int argc, char **argv)
{
    static const double paper[3][2] = {{0.0642, 0.0038}, {0.0032, 0.0009}, {0.0005, 0.0003}}; /* K 4: F 4, 8, 16 */
    int K = 4, F = 8, samples = 4096, runs = 100, seed = 0, i, d, run, *panels;
    const double *ref = NULL;
    attn_sraven s;
    attn_rng r;
    double sum[2] = {0, 0}, sq[2] = {0, 0};
    long hits[2] = {0, 0};
    for (i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("usage: attnlab ambiguity [--K 4] [--F 8] [--samples 4096] [--runs 100] [--seed 0]\n"
                   "\n"
                   "The fraction of SRAVEN instances (the HYLA paper, Schug et al. 2025, App. B.3) whose\n"
                   "context admits an answer other than the true one, in --runs runs of --samples instances\n"
                   "(Table A2: 4,096), by two definitions:\n"
                   "  some feature   the paper's wording: another fitting assignment of rules and feature\n"
                   "                 orders predicts a different panel\n"
                   "  every feature  our reading of the authors' released checker: under one assignment\n"
                   "                 every feature has a fitting rule that predicts a different value\n"
                   "Printed: mean +- sd over runs, the pooled rate with its 95%% Wilson interval, and\n"
                   "Table A2's value for K = 4, F = 4, 8, 16. --K takes 1 .. 6, --F 3 .. 32.\n");
            help_shown = 1;
            return 0;
        }
        if (!v) { fprintf(stderr, "attnlab: %s needs a value (or is unknown; see attnlab ambiguity --help)\n", a); return 1; }
        if (!strcmp(a, "--K")) ok = parse_int(v, 1, &K) && K <= 6;
        else if (!strcmp(a, "--F")) ok = parse_int(v, 3, &F) && F <= 32;
        else if (!strcmp(a, "--samples")) ok = parse_int(v, 1, &samples) && samples <= 1 << 24;
        else if (!strcmp(a, "--runs")) ok = parse_int(v, 1, &runs) && runs <= MAX_SEEDS;
        else if (!strcmp(a, "--seed")) ok = parse_int(v, 0, &seed);
        else { fprintf(stderr, "attnlab: unknown option %s for ambiguity (see attnlab ambiguity --help)\n", a); return 1; }
        if (!ok) { fprintf(stderr, "attnlab: bad value '%s' for %s (see attnlab ambiguity --help)\n", v, a); return 1; }
        i++;
    }
    if (K == 4 && (F == 4 || F == 8 || F == 16)) ref = paper[F == 4 ? 0 : F == 8 ? 1 : 2];
    if (dry_run) { printf("dry run: %d run(s) of %d instances; the options are fine\n", runs, samples); return 0; }
    if (attn_sraven_init(&s, K, F, 0.25, 1, (uint64_t)seed) != ATTN_OK || !(panels = (int *)malloc(sizeof(int) * 9 * (size_t)K))) {
        fprintf(stderr, "attnlab ambiguity: %s\n", attn_last_error());
        return 1;
    }
    attn_rng_seed(&r, (uint64_t)seed, 77);
    for (run = 0; run < runs; run++) {
        long n[2] = {0, 0};
        for (i = 0; i < samples; i++) {
            attn_sraven_panels(&s, (int)attn_rng_int(&r, (uint32_t)s.nlatent), panels, &r);
            for (d = 0; d < 2; d++) n[d] += attn_sraven_ambiguous(&s, panels, d);
        }
        for (d = 0; d < 2; d++) {
            double f = (double)n[d] / samples;
            sum[d] += f; sq[d] += f * f; hits[d] += n[d];
        }
        fprintf(stderr, "\r  run %d/%d", run + 1, runs);
    }
    fprintf(stderr, "\n");
    printf("SRAVEN ambiguity, K %d, F %d: %d runs of %d instances (seed %d)\n\n", K, F, runs, samples, seed);
    printf("| definition | mean +- sd over runs | pooled, 95%% Wilson interval | Table A2 | consistent (|diff| < 2 se) |\n");
    printf("|---|---:|---:|---:|---|\n");
    for (d = 0; d < 2; d++) {
        double N = (double)runs * samples, p = hits[d] / N, z = 1.959964, m = sum[d] / runs;
        double sd = runs > 1 ? sqrt((sq[d] - runs * m * m) / (runs - 1) > 0 ? (sq[d] - runs * m * m) / (runs - 1) : 0) : 0;
        double c = (p + z * z / (2 * N)) / (1 + z * z / N), h = z * sqrt(p * (1 - p) / N + z * z / (4 * N * N)) / (1 + z * z / N);
        printf("| %s | %.4f%% +- %.4f%% | %.4f%% [%.4f%%, %.4f%%] |", d ? "every feature" : "some feature", 100 * m, 100 * sd, 100 * p,
               100 * (c - h), 100 * (c + h));
        if (ref) {
            double se = sqrt(p * (1 - p) / N + ref[1] * ref[1]);
            printf(" %.2f%% +- %.2f%% | %s (z = %.1f) |\n", 100 * ref[0], 100 * ref[1], fabs(p - ref[0]) < 2 * se ? "yes" : "no",
                   (p - ref[0]) / se);
        } else printf(" - | - |\n");
    }
    printf("\nz: (pooled - Table A2) / sqrt(pooled's binomial variance + Table A2's +- squared).\n");
    free(panels);
    attn_sraven_free(&s);
    return 0;
}

int hyla_wants(int argc, char **argv)
{
    int i;
    if (argc >= 2 && !strcmp(argv[1], "ambiguity")) return 1;
    if (argc >= 3 && !strcmp(argv[1], "preset")) return !strncmp(argv[2], "hyla-", 5);
    for (i = 2; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--task") && (!strcmp(argv[i + 1], "fuzzy") || !strcmp(argv[i + 1], "sraven"))) return 1;
    return 0;
}

int hyla_main(int argc, char **argv)
{
    hopts o;
    if (!strcmp(argv[1], "ambiguity")) return hyla_ambiguity(argc, argv);
    if (!strcmp(argv[1], "preset")) {
        int p;
        for (p = 0; p < 2 && strcmp(hpresets[p].name, argv[2]); p++) {}
        if (p == 2) { fprintf(stderr, "attnlab: unknown preset '%s' (hyla-fuzzy, hyla-sraven)\n", argv[2]); return 1; }
        return hyla_preset(argc, argv);
    }
    if (!hyla_parse(argc, argv, &o)) return !help_shown;
    if (!strcmp(argv[1], "train")) return hyla_train(&o);
    if (!strcmp(argv[1], "params")) {
        attn_transformer_config c = hyla_config(&o, o.kind[0]);
        printf("%lu\n", (unsigned long)attn_transformer_param_count(&c));
        return 0;
    }
    fprintf(stderr, "attnlab: '%s' does not take --task fuzzy|sraven (train, params, preset hyla-*)\n", argv[1]);
    return 1;
}
