/* alibi: does a causal transformer trained on short sequences still work on longer ones? ALiBi (Press
   et al. 2022, "Train Short, Test Long") against RoPE and learned positions, each a line of the model's
   configuration (cfg.mods[l] = ATTN_MOD_ALIBI; cfg.pos = ATTN_POS_ROPE or ATTN_POS_LEARNED).

   The data: an order-2 Markov source over 16 symbols (each next symbol drawn from a fixed random
   distribution given the two before it), so the best possible loss is known (the source's own
   -log p, printed as "source") and a model needs positions only to find the two previous tokens.
   Each model (2 layers of 4 heads, d 64; AdamW, lr 3e-3 with warm-up and cosine decay, batches of 16)
   is trained on sequences of 32 tokens, then tested on sequences of 128: the mean next-token loss
   (nats) over positions 1 .. 31, the lengths it was trained on, and over 32 .. 127, which it never
   saw. Several seeds per scheme, mean +- sd. Last, the first ALiBi model decodes
   a 128-token sequence one token at a time over its KV cache, against its full forward pass.

   Usage: alibi [--seeds 3] [--steps 1500] [--test-T 128] [--seed0 0] */
#define ATTN_IMPLEMENTATION
#include "../attn.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { V = 16, TRAIN_T = 32, B = 16, EVAL_B = 32, MAX_SEEDS = 16, MAX_T = 1024 };
enum { LEARNED, ROPE, ALIBI, SCHEMES };
static const char *const scheme_name[SCHEMES] = {"learned", "rope", "alibi"};

/* The source: p[a][b][c] = P(next = c | the two before are a, b). */
static double src_p[V][V][V];

static void source_init(void)
{
    attn_rng r;
    int a, b, c;
    attn_rng_seed(&r, 2022, 0);
    for (a = 0; a < V; a++)
        for (b = 0; b < V; b++) {
            double z = 0;
            for (c = 0; c < V; c++) z += src_p[a][b][c] = exp(2 * attn_rng_normal(&r, 0, 1));
            for (c = 0; c < V; c++) src_p[a][b][c] /= z;
        }
}

/* n sequences of T + 1 tokens into seq [n, T + 1]; *source gets the source's mean -log p of tokens
   2 .. T (the first two have no full context: the models are scored on the same positions). */
static void draw(attn_rng *r, int *seq, int n, int T, double *source)
{
    double nll = 0;
    int s, t, c;
    for (s = 0; s < n; s++) {
        int *x = seq + (size_t)s * (T + 1);
        x[0] = (int)attn_rng_int(r, V);
        x[1] = (int)attn_rng_int(r, V);
        for (t = 2; t <= T; t++) {
            double u = attn_rng_uniform(r), acc = 0;
            const double *p = src_p[x[t - 2]][x[t - 1]];
            for (c = 0; c < V - 1 && (acc += p[c]) <= u; c++) {}
            x[t] = c;
            nll -= log(p[c]);
        }
    }
    if (source) *source = nll / ((double)n * (T - 1));
}

/* inputs [n, T] and targets [n, T] from sequences [n, T + 1]. */
static void split(const int *seq, int n, int T, int *in, int *tg)
{
    int s, t;
    for (s = 0; s < n; s++)
        for (t = 0; t < T; t++) {
            in[s * T + t] = seq[s * (T + 1) + t];
            tg[s * T + t] = seq[s * (T + 1) + t + 1];
        }
}

static attn_transformer_config config(int scheme, int test_T)
{
    attn_transformer_config c = attn_transformer_config_default();
    int l;
    c.vocab = c.out = V;
    c.d = 64; c.layers = 2; c.heads = 4; c.dk = c.dv = 16; c.mlp = 128;
    c.max_T = test_T; /* learned positions: rows 32 .. test_T - 1 are never trained */
    c.pos = scheme == LEARNED ? ATTN_POS_LEARNED : scheme == ROPE ? ATTN_POS_ROPE : ATTN_POS_NONE;
    for (l = 0; l < c.layers; l++) c.mods[l] = scheme == ALIBI ? ATTN_MOD_ALIBI : ATTN_MOD_NONE;
    return c;
}

/* The model's logits y [n, T, V] for in [n, T], and their cross-entropy per token in nll [n T]
   (probs [n T, V]); cache [cb], work [wb]; returns 0 on success. */
static int logits_loss(const attn_transformer *m, const int *in, const int *tg, int n, int T, attn_float *y,
                       attn_float *probs, attn_float *nll, attn_float *cache, size_t cb, void *work, size_t wb)
{
    return attn_transformer_forward(m, y, cache, cb, in, NULL, n, T, work, wb) != ATTN_OK ||
           attn_cross_entropy_forward(nll, probs, y, tg, n * T, V) != ATTN_OK;
}

/* Trains a model of this scheme from seed and returns it (steps of AdamW on B sequences of 32). */
static int train(attn_transformer *m, int scheme, int seed, int steps, int test_T)
{
    attn_transformer_config c = config(scheme, test_T);
    attn_rng r;
    attn_optim o;
    int seq[B * (TRAIN_T + 1)], in[B * TRAIN_T], tg[B * TRAIN_T], s, ok = 1;
    size_t cb, wb;
    attn_float *y, *probs, *nll, *dy, *cache;
    void *work;
    attn_rng_seed(&r, (uint64_t)seed, 1);
    if (attn_transformer_init(m, &c, &r) != ATTN_OK) return 0;
    cb = attn_transformer_cache_floats(m, B, TRAIN_T);
    wb = attn_transformer_work_bytes(m, B, TRAIN_T);
    y = (attn_float *)malloc(sizeof(attn_float) * B * TRAIN_T * V * 3 + sizeof(attn_float) * B * TRAIN_T);
    cache = (attn_float *)malloc(sizeof(attn_float) * cb);
    work = malloc(wb);
    if (!y || !cache || !work || attn_optim_adamw(&o, &m->p, 0.9, 0.98, 1e-8, 0.01) != ATTN_OK) ok = 0;
    probs = y ? y + B * TRAIN_T * V : NULL;
    dy = y ? probs + B * TRAIN_T * V : NULL;
    nll = y ? dy + B * TRAIN_T * V : NULL;
    for (s = 0; ok && s < steps; s++) {
        double warm = (s + 1) / 50.0, decay = 0.5 * (1 + cos(3.14159265358979 * (s - 50) / (steps - 50 + 1)));
        double lr = 3e-3 * (s < 50 ? warm : decay);
        draw(&r, seq, B, TRAIN_T, NULL);
        split(seq, B, TRAIN_T, in, tg);
        attn_params_zero_grad(&m->p);
        memset(dy, 0, sizeof(attn_float) * B * TRAIN_T * V); /* backward passes accumulate */
        ok = !logits_loss(m, in, tg, B, TRAIN_T, y, probs, nll, cache, cb, work, wb) &&
             attn_cross_entropy_backward(dy, NULL, (attn_float)(1.0 / (B * TRAIN_T)), probs, tg, B * TRAIN_T,
                                         V) == ATTN_OK &&
             attn_transformer_backward(m, dy, cache, cb, in, NULL, B, TRAIN_T, work, wb) == ATTN_OK &&
             attn_optim_step(&o, &m->p, lr) == ATTN_OK;
    }
    if (y && cache && work) attn_optim_free(&o);
    free(y); free(cache); free(work);
    return ok;
}

/* The mean loss of m over positions [2, 32) and [32, T) of EVAL_B sequences of T tokens drawn from
   rng seed 7 (the same sequences for every model); source gets the source's own on all of them. */
static int evaluate(const attn_transformer *m, int T, double *near, double *far, double *source)
{
    attn_rng r;
    int *seq = (int *)malloc(sizeof(int) * EVAL_B * (T + 1) * 3), *in = seq + EVAL_B * (T + 1),
        *tg = in + EVAL_B * T, s, t, ok;
    size_t cb = attn_transformer_cache_floats(m, EVAL_B, T), wb = attn_transformer_work_bytes(m, EVAL_B, T);
    attn_float *y = (attn_float *)malloc(sizeof(attn_float) * ((size_t)EVAL_B * T * (2 * V + 1) + cb));
    void *work = malloc(wb);
    double a = 0, b = 0;
    attn_rng_seed(&r, 7, 0);
    ok = seq && y && work;
    if (ok) {
        attn_float *probs = y + (size_t)EVAL_B * T * V, *nll = probs + (size_t)EVAL_B * T * V;
        attn_float *cache = nll + EVAL_B * T;
        draw(&r, seq, EVAL_B, T, source);
        split(seq, EVAL_B, T, in, tg);
        ok = !logits_loss(m, in, tg, EVAL_B, T, y, probs, nll, cache, cb, work, wb);
        for (s = 0; ok && s < EVAL_B; s++)
            for (t = 1; t < T; t++) { /* target t + 1 has its two tokens of context from t = 1 */
                if (t < TRAIN_T) a += nll[s * T + t];
                else b += nll[s * T + t];
            }
        *near = a / ((double)EVAL_B * (TRAIN_T - 1));
        *far = T > TRAIN_T ? b / ((double)EVAL_B * (T - TRAIN_T)) : 0;
    }
    free(seq); free(y); free(work);
    return ok;
}

/* The largest difference between m's logits for tok [T] decoded one token at a time over its KV
   cache and its full forward pass; -1 on failure. */
static double decode_check(const attn_transformer *m, int T)
{
    attn_rng r;
    int *seq = (int *)malloc(sizeof(int) * (T + 1)), t, ok;
    size_t kb = attn_transformer_kv_bytes(m, T), db = attn_transformer_decode_work_bytes(m, 1, T),
           cb = attn_transformer_cache_floats(m, 1, T), wb = attn_transformer_work_bytes(m, 1, T);
    attn_float *y = (attn_float *)malloc(sizeof(attn_float) * ((size_t)T * V + V + cb));
    void *kvm = malloc(kb), *dw = malloc(db), *work = malloc(wb);
    attn_transformer_kv kv;
    double worst = 0;
    attn_rng_seed(&r, 11, 0);
    ok = seq && y && kvm && dw && work && attn_transformer_kv_init(&kv, m, T, kvm, kb) == ATTN_OK;
    if (ok) {
        draw(&r, seq, 1, T, NULL);
        ok = attn_transformer_forward(m, y, y + (size_t)T * V + V, cb, seq, NULL, 1, T, work, wb) == ATTN_OK;
    }
    for (t = 0; ok && t < T; t++) {
        int c;
        ok = attn_transformer_decode(m, &kv, y + (size_t)T * V, seq + t, 1, dw, db) == ATTN_OK;
        for (c = 0; ok && c < V; c++)
            worst = fmax(worst, fabs((double)y[(size_t)T * V + c] - y[(size_t)t * V + c]));
    }
    free(seq); free(y); free(kvm); free(dw); free(work);
    return ok ? worst : -1;
}

static void mean_sd(const double *x, int n, double *mean, double *sd)
{
    double s = 0, q = 0;
    int i;
    for (i = 0; i < n; i++) s += x[i];
    *mean = s / n;
    for (i = 0; i < n; i++) q += (x[i] - *mean) * (x[i] - *mean);
    *sd = n > 1 ? sqrt(q / (n - 1)) : 0;
}

/* Whether v is a whole number in [lo, hi], into *out. */
static int whole(const char *v, long lo, long hi, int *out)
{
    char *end;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || end == v || *end || x < lo || x > hi) return 0;
    *out = (int)x;
    return 1;
}

int main(int argc, char **argv)
{
    int seeds = 3, steps = 1500, test_T = 128, seed0 = 0, i, k, s;
    double res[SCHEMES][2][MAX_SEEDS], source = 0, diff = -1;
    for (i = 1; i < argc; i += 2) { /* option, value */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = !strcmp(a, "--seeds")    ? whole(v, 1, MAX_SEEDS, &seeds)
                 : !strcmp(a, "--steps")  ? whole(v, 1, 1000000, &steps)
                 : !strcmp(a, "--test-T") ? whole(v, TRAIN_T + 1, MAX_T, &test_T)
                 : !strcmp(a, "--seed0")  ? whole(v, 0, 1000000, &seed0)
                                          : -1;
        if (ok == 0) {
            fprintf(stderr, "alibi: bad value '%s' for %s (see alibi --help)\n", v ? v : "", a);
            return 1;
        }
        if (ok < 0) {
            printf("usage: alibi [--seeds 3] [--steps 1500] [--test-T 128] [--seed0 0]\n"
                   "  trains causal transformers with learned positions, RoPE and ALiBi on sequences of %d\n"
                   "  tokens of an order-2 Markov source (seeds seed0 ..), then tests them on test-T\n"
                   "  tokens: the mean next-token loss (nats) +- sd over the seeds at the positions seen\n"
                   "  in training and beyond them; and decodes with the KV cache against the full pass\n",
                   TRAIN_T);
            return strcmp(a, "--help") && strcmp(a, "-h") ? 1 : 0;
        }
    }
    source_init();
    printf("train on %d tokens, test on %d: %d seeds x %d steps per scheme (one thread each)\n", TRAIN_T,
           test_T, seeds, steps);
    for (k = 0; k < SCHEMES; k++)
        for (s = 0; s < seeds; s++) {
            attn_transformer m;
            if (!train(&m, k, seed0 + s, steps, test_T) ||
                !evaluate(&m, test_T, &res[k][0][s], &res[k][1][s], &source)) {
                fprintf(stderr, "alibi: %s seed %d: %s\n", scheme_name[k], seed0 + s, attn_last_error());
                return 1;
            }
            if (k == ALIBI && s == 0) diff = decode_check(&m, test_T);
            attn_transformer_free(&m);
            fprintf(stderr, "  %s seed %d: %.3f / %.3f\n", scheme_name[k], seed0 + s, res[k][0][s],
                    res[k][1][s]);
        }
    {
        char h1[32], h2[32];
        snprintf(h1, sizeof h1, "seen: 1..%d", TRAIN_T - 1);
        snprintf(h2, sizeof h2, "unseen: %d..%d", TRAIN_T, test_T - 1);
        printf("\n%-9s %-17s %-17s\n", "positions", h1, h2);
    }
    for (k = 0; k < SCHEMES; k++) {
        double mu, sd;
        printf("%-9s", scheme_name[k]);
        for (i = 0; i < 2; i++) {
            mean_sd(res[k][i], seeds, &mu, &sd);
            printf(" %6.3f +- %-7.3f", mu, sd);
        }
        printf("\n");
    }
    printf("%-9s %6.3f (the source's own -log p on the test sequences)\n", "source", source);
    printf("\nALiBi, decoded one token at a time over the KV cache: logits within %.2g of the full pass\n",
           diff);
    if (diff < 0 || diff > 1e-3) fprintf(stderr, "alibi: decoding differs from the full pass (%g)\n", diff);
    return diff < 0 || diff > 1e-3 ? 1 : 0;
}
