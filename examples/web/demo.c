/* demo.c: the C side of the browser demo (examples/web/), built by `make web` with
   emcc -O2 -msimd128 into build/web/demo.js and demo.wasm, and driven by worker.js one chunk of
   training at a time. It builds natively too (`cc -O2 demo.c -lm`; -DDEMO_MAIN adds a main that
   runs both experiments), which is how the tests check it.

   Two experiments, each behind a handle (0 on failure; demo_error() says why):
   - nt: the expressive-attention paper's NT task (Gros 2024, arXiv:2407.18601, Sec. 3): the series
     x(t) = (x(t-1) + x(t-1-tau)) mod N at N = 16, tau = 2, predicted from a window of N_con = 32
     symbols by the paper's cisformer, one SGD step (lr 0.02, momentum 0.8) per epoch on the squared
     error of 40 predictions. nt_train(h, E) trains E epochs and returns the teacher-forced accuracy
     on 100 fixed test series (50 predictions each), as attnlab train reports it.
   - lm: a byte-level causal transformer (2 pre-RMSNorm layers, width 64, 4 heads, RoPE, SwiGLU;
     about 113k parameters) on a text the page hands over; AdamW with a warm-up and cosine decay.
     lm_train(h, S) takes S steps of 8 windows of 64 bytes and returns their mean loss (nats per
     byte); lm_sample(h, prompt, n, temperature, top_k, seed) writes n bytes after the prompt,
     decoded with the key-value cache (attn_transformer_decode, attn_sample). */
#define ATTN_IMPLEMENTATION
#include "../../attn.h"
#include <stdlib.h>
#include <string.h>
#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#define DEMO_API EMSCRIPTEN_KEEPALIVE
#else
#define DEMO_API
#endif

#define NT_N 16
#define NT_TAU 2
#define NT_NCON 32
#define NT_BATCH 40 /* predictions per epoch */
#define NT_TESTS 100
#define NT_PRED 50  /* predictions per test series */
#define LM_CTX 64
#define LM_BATCH 8
#define LM_STEPS 600 /* the schedule's length; training may go on at its final rate */

static char demo_msg[512];

/* The last failure's message ("" if none). */
DEMO_API const char *demo_error(void) { return demo_msg; }

/* Records what failed with attn.h's message; NULL, and -1 for the functions that return numbers. */
static void *demo_fail(const char *what)
{
    snprintf(demo_msg, sizeof demo_msg, "%s: %s", what, attn_last_error());
    return NULL;
}
static double demo_failed(const char *what) { demo_fail(what); return -1; }

/* ---- the NT task on the cisformer ---- */

typedef struct {
    attn_cisformer m;
    attn_rng train;
    attn_float *vel, *y, *target, *dy, *cache;
    int series[NT_NCON + NT_BATCH], test[NT_TESTS][NT_NCON + NT_PRED];
    void *work;
    size_t cf, wb; /* the cache's floats, the workspace's bytes */
    long epoch;
} nt_run;

DEMO_API void nt_free(nt_run *r)
{
    if (!r) return;
    attn_cisformer_free(&r->m);
    free(r->vel); free(r->y); free(r->target); free(r->dy); free(r->cache); free(r->work);
    free(r);
}

/* A cisformer of the given kind ("softmax", "ea", ... any one-head kind), initialised from seed. */
DEMO_API nt_run *nt_new(const char *kind, int seed)
{
    attn_cisformer_config c = attn_cisformer_config_default();
    nt_run *r = (nt_run *)calloc(1, sizeof *r);
    attn_rng init, test;
    int k = attn_kind_from_name(kind), i, nb = NT_BATCH > NT_PRED ? NT_BATCH : NT_PRED;
    if (!r) return demo_fail("nt_new");
    if (k < 0) {
        free(r);
        snprintf(demo_msg, sizeof demo_msg, "nt_new: unknown attention kind '%s'", kind);
        return NULL;
    }
    c.d = NT_N; c.ncon = NT_NCON; c.kind = (attn_kind)k;
    attn_rng_seed(&init, (uint64_t)seed, 1);
    attn_rng_seed(&r->train, (uint64_t)seed, 2);
    attn_rng_seed(&test, (uint64_t)seed, 3);
    if (attn_cisformer_init(&r->m, &c, &init) != ATTN_OK) { free(r); return demo_fail("nt_new"); }
    r->vel = (attn_float *)calloc(r->m.p.total, sizeof(attn_float));
    r->y = (attn_float *)malloc(sizeof(attn_float) * (size_t)nb * NT_N);
    r->target = (attn_float *)malloc(sizeof(attn_float) * (size_t)nb * NT_N);
    r->dy = (attn_float *)malloc(sizeof(attn_float) * (size_t)nb * NT_N);
    r->cache = (attn_float *)malloc(sizeof(attn_float) * (r->cf = attn_cisformer_cache_floats(&r->m, nb)));
    r->wb = attn_cisformer_work_bytes(&r->m, nb);
    r->work = malloc(r->wb);
    if (!r->vel || !r->y || !r->target || !r->dy || !r->cache || !r->work) {
        nt_free(r);
        snprintf(demo_msg, sizeof demo_msg, "nt_new: out of memory");
        return NULL;
    }
    for (i = 0; i < NT_TESTS; i++)
        attn_nt_series(r->test[i], NT_NCON + NT_PRED, ATTN_NT, NT_N, NT_TAU, NULL, &test, NULL);
    return r;
}

static int argmax(const attn_float *y, int n)
{
    int i, best = 0;
    for (i = 1; i < n; i++)
        if (y[i] > y[best]) best = i;
    return best;
}

/* Teacher-forced accuracy on the test series: each of a series' 50 next symbols predicted from
   the 32 true symbols before it. */
DEMO_API double nt_accuracy(nt_run *r)
{
    int s, j, right = 0;
    for (s = 0; s < NT_TESTS; s++) {
        attn_cisformer_forward(&r->m, r->y, r->cache, r->cf, r->test[s], 1, NT_PRED, r->work, r->wb);
        for (j = 0; j < NT_PRED; j++) right += argmax(r->y + j * NT_N, NT_N) == r->test[s][NT_NCON + j];
    }
    return (double)right / (NT_TESTS * NT_PRED);
}

/* epochs more epochs (a fresh series each: its 40 predictions, one step on their mean loss), then
   the test accuracy; -1 (demo_error) if a pass fails. */
DEMO_API double nt_train(nt_run *r, int epochs)
{
    int e;
    for (e = 0; e < epochs; e++, r->epoch++) {
        attn_nt_series(r->series, NT_NCON + NT_BATCH, ATTN_NT, NT_N, NT_TAU, NULL, &r->train, NULL);
        if (attn_cisformer_forward(&r->m, r->y, r->cache, r->cf, r->series, 1, NT_BATCH, r->work, r->wb) != ATTN_OK)
            return demo_failed("nt_train");
        attn_one_hot(r->target, r->series + NT_NCON, NT_BATCH, NT_N);
        memset(r->dy, 0, sizeof(attn_float) * NT_BATCH * NT_N);
        attn_mse_backward(r->dy, r->y, r->target, NT_BATCH * NT_N, ATTN_REDUCE_SUM, (attn_float)(1.0 / NT_BATCH));
        if (attn_cisformer_backward_sgd(&r->m, r->dy, r->cache, r->cf, NT_BATCH, r->vel, (attn_float)0.02,
                                        (attn_float)0.8, r->epoch, r->work, r->wb) != ATTN_OK)
            return demo_failed("nt_train");
    }
    return nt_accuracy(r);
}

/* ---- the byte-level language model ---- */

typedef struct {
    attn_transformer m;
    attn_optim opt;
    attn_schedule sched;
    attn_rng data;
    unsigned char *text;
    long n;
    int tok[LM_BATCH * LM_CTX], tg[LM_BATCH * LM_CTX];
    attn_float *logits, *probs, *loss, *cache;
    void *work;
    size_t cf, wb; /* the cache's floats, the workspace's bytes */
    char out[4096];
} lm_run;

DEMO_API void lm_free(lm_run *r)
{
    if (!r) return;
    attn_transformer_free(&r->m);
    attn_optim_free(&r->opt);
    free(r->text); free(r->logits); free(r->probs); free(r->loss); free(r->cache); free(r->work);
    free(r);
}

/* A model initialised from seed, to be trained on text [n] (copied; at least 2 windows long). */
DEMO_API lm_run *lm_new(const unsigned char *text, int n, int seed)
{
    attn_transformer_config c;
    lm_run *r;
    attn_rng init;
    int l, rows = LM_BATCH * LM_CTX;
    if (n < 2 * (LM_CTX + 1)) {
        snprintf(demo_msg, sizeof demo_msg, "lm_new: a text of %d bytes; at least %d needed", n, 2 * (LM_CTX + 1));
        return NULL;
    }
    if (!(r = (lm_run *)calloc(1, sizeof *r))) return demo_fail("lm_new");
    memset(&c, 0, sizeof c);
    c.vocab = c.out = 256; c.d = 64; c.layers = 2; c.heads = 4; c.dk = c.dv = 16; c.mlp = 176;
    c.max_T = LM_CTX; c.causal = 1; c.pos = ATTN_POS_ROPE; c.norm = ATTN_NORM_RMS; c.eps = (attn_float)1e-6;
    c.act = ATTN_ACT_SILU; c.glu = 1; c.init = ATTN_INIT_NORMAL;
    for (l = 0; l < c.layers; l++) c.kinds[l] = ATTN_SOFTMAX;
    attn_rng_seed(&init, (uint64_t)seed, 1);
    attn_rng_seed(&r->data, (uint64_t)seed, 2);
    if (attn_transformer_init(&r->m, &c, &init) != ATTN_OK) { free(r); return demo_fail("lm_new"); }
    if (attn_optim_adamw(&r->opt, &r->m.p, 0.9, 0.95, 1e-8, 0.1) != ATTN_OK ||
        attn_schedule_warmup_cosine(&r->sched, 0, 3e-3, 50, LM_STEPS, 3e-4) != ATTN_OK) {
        demo_fail("lm_new");
        lm_free(r);
        return NULL;
    }
    r->n = n;
    r->text = (unsigned char *)malloc((size_t)n);
    r->logits = (attn_float *)malloc(sizeof(attn_float) * (size_t)rows * 256);
    r->probs = (attn_float *)malloc(sizeof(attn_float) * (size_t)rows * 256);
    r->loss = (attn_float *)malloc(sizeof(attn_float) * (size_t)rows);
    r->cache = (attn_float *)malloc(sizeof(attn_float) * (r->cf = attn_transformer_cache_floats(&r->m, LM_BATCH, LM_CTX)));
    r->wb = attn_transformer_work_bytes(&r->m, LM_BATCH, LM_CTX);
    r->work = malloc(r->wb);
    if (!r->text || !r->logits || !r->probs || !r->loss || !r->cache || !r->work) {
        lm_free(r);
        snprintf(demo_msg, sizeof demo_msg, "lm_new: out of memory");
        return NULL;
    }
    memcpy(r->text, text, (size_t)n);
    return r;
}

/* steps more steps, each on LM_BATCH random windows (bytes t .. t + 63 predict t + 1 .. t + 64);
   returns the mean loss of the last step, or -1 (demo_error). */
DEMO_API double lm_train(lm_run *r, int steps)
{
    int s, i, t, rows = LM_BATCH * LM_CTX;
    double l = 0;
    for (s = 0; s < steps; s++) {
        for (i = 0; i < LM_BATCH; i++) {
            long at = (long)attn_rng_int(&r->data, (uint32_t)(r->n - LM_CTX - 1));
            for (t = 0; t < LM_CTX; t++) {
                r->tok[i * LM_CTX + t] = r->text[at + t];
                r->tg[i * LM_CTX + t] = r->text[at + t + 1];
            }
        }
        if (attn_transformer_forward(&r->m, r->logits, r->cache, r->cf, r->tok, NULL, LM_BATCH, LM_CTX, r->work, r->wb))
            return demo_failed("lm_train");
        attn_cross_entropy_forward(r->loss, r->probs, r->logits, r->tg, rows, 256);
        for (l = 0, i = 0; i < rows; i++) l += r->loss[i] / rows;
        memset(r->logits, 0, sizeof(attn_float) * (size_t)rows * 256); /* now dL/dlogits */
        attn_cross_entropy_backward(r->logits, NULL, (attn_float)(1.0 / rows), r->probs, r->tg, rows, 256);
        attn_params_zero_grad(&r->m.p);
        if (attn_transformer_backward(&r->m, r->logits, r->cache, r->cf, r->tok, NULL, LM_BATCH, LM_CTX, r->work, r->wb))
            return demo_failed("lm_train");
        attn_clip_grad_norm(&r->m.p, 1.0);
        if (attn_optim_step(&r->opt, &r->m.p, attn_schedule_lr(&r->sched, r->opt.step)) != ATTN_OK)
            return demo_failed("lm_train");
    }
    return l;
}

/* Runs bytes [count] (count <= LM_CTX - kv->len) through the cache; the logits of the last one. */
static const attn_float *lm_feed(lm_run *r, attn_transformer_kv *kv, const char *bytes, int count, attn_float *logits,
                                 void *work, size_t wb)
{
    int tokens[LM_CTX], k;
    for (k = 0; k < count; k++) tokens[k] = (unsigned char)bytes[k];
    if (attn_transformer_decode(&r->m, kv, logits, tokens, count, work, wb) != ATTN_OK) return demo_fail("lm_sample");
    return logits + (size_t)(count - 1) * 256;
}

/* The prompt and n generated bytes (n <= 2000; temperature 0: greedy, top_k 0: all), as a C string;
   NULL (demo_error) on failure. The cache holds the last LM_CTX bytes at most: when it is full, it
   restarts from the last half context. */
DEMO_API const char *lm_sample(lm_run *r, const char *prompt, int n, double temperature, int top_k,
                               int seed)
{
    attn_transformer_kv kv;
    attn_rng rng;
    size_t kb = attn_transformer_kv_bytes(&r->m, LM_CTX), wb = attn_transformer_decode_work_bytes(&r->m, LM_CTX, LM_CTX);
    void *kvmem = malloc(kb), *work = malloc(wb);
    attn_float *logits = (attn_float *)malloc(sizeof(attn_float) * LM_CTX * 256);
    const attn_float *last = NULL;
    int len = (int)strlen(prompt), i, keep = len < LM_CTX ? len : LM_CTX;
    const char *result = NULL;
    if (len < 1 || len > 1000 || n < 0 || n > 2000) {
        snprintf(demo_msg, sizeof demo_msg, "lm_sample: a prompt of 1 .. 1000 bytes (not %d) and n in 0 .. 2000 (not %d)", len, n);
    } else if (!kvmem || !work || !logits) {
        snprintf(demo_msg, sizeof demo_msg, "lm_sample: out of memory");
    } else if (attn_transformer_kv_init(&kv, &r->m, LM_CTX, kvmem, kb) != ATTN_OK) {
        demo_fail("lm_sample");
    } else {
        attn_rng_seed(&rng, (uint64_t)seed, 5);
        memcpy(r->out, prompt, (size_t)len);
        last = lm_feed(r, &kv, r->out + len - keep, keep, logits, work, wb);
        for (i = 0; last && i < n; i++) {
            int next = attn_sample(last, 256, temperature, top_k, 1.0, &rng), at = len + i;
            if (next < 0) { last = demo_fail("lm_sample"); break; }
            r->out[at] = (char)(next ? next : ' '); /* no NUL inside the string */
            if (kv.len == LM_CTX) { /* full: the last half context again, ending at the new byte */
                kv.len = 0;
                last = lm_feed(r, &kv, r->out + at + 1 - LM_CTX / 2, LM_CTX / 2, logits, work, wb);
            } else {
                last = lm_feed(r, &kv, r->out + at, 1, logits, work, wb);
            }
        }
        if (last) {
            r->out[len + n] = 0;
            result = r->out;
        }
    }
    free(kvmem); free(work); free(logits);
    return result;
}

/* The attention weights of one head of a layer over the first T bytes of text (T <= 64): a [T, T]
   row-major array (row i: query i's weights on keys 0 .. i), valid until the next call; NULL
   (demo_error) on failure. */
DEMO_API const float *lm_weights(lm_run *r, const char *text, int layer, int head)
{
    static float w[LM_CTX * LM_CTX];
    int T = (int)strlen(text), t, i;
    size_t wb;
    void *work;
    attn_float *all;
    if (T > LM_CTX) T = LM_CTX;
    if (T < 1 || layer < 0 || layer >= r->m.cfg.layers || head < 0 || head >= r->m.cfg.heads) {
        snprintf(demo_msg, sizeof demo_msg, "lm_weights: %d bytes, layer %d, head %d", T, layer, head);
        return NULL;
    }
    for (t = 0; t < T; t++) r->tok[t] = (unsigned char)text[t];
    wb = attn_transformer_weights_work_bytes(&r->m, 1, T);
    work = malloc(wb);
    all = (attn_float *)malloc(sizeof(attn_float) * (size_t)r->m.cfg.heads * T * T);
    if (!work || !all) {
        free(work); free(all);
        snprintf(demo_msg, sizeof demo_msg, "lm_weights: out of memory");
        return NULL;
    }
    if (attn_transformer_forward(&r->m, r->logits, r->cache, r->cf, r->tok, NULL, 1, T, r->work, r->wb) != ATTN_OK ||
        attn_transformer_weights(&r->m, all, r->cache, r->cf, 1, T, layer, work, wb) != ATTN_OK) {
        free(work); free(all);
        return (const float *)demo_fail("lm_weights");
    }
    for (i = 0; i < T * T; i++) w[i] = (float)all[(size_t)head * T * T + i];
    free(work); free(all);
    return w;
}

/* attn.h's version and the kernels this build runs, e.g. "attn.h 0.2.0, SIMD wasm128". */
DEMO_API const char *demo_build(void)
{
    static char s[128];
    snprintf(s, sizeof s, "attn.h %s, SIMD %s", ATTN_VERSION_STRING, attn_simd_name());
    return s;
}

#ifdef DEMO_MAIN
/* Both experiments for a few seconds, as the page runs them (the tests compare it with the page). */
int main(int argc, char **argv)
{
    static unsigned char text[1 << 16];
    FILE *f = fopen(argc > 1 ? argv[1] : "examples/data/sample.txt", "rb");
    int n = f ? (int)fread(text, 1, sizeof text, f) : 0, e;
    nt_run *a = nt_new("softmax", 0), *b = nt_new("ea", 0);
    lm_run *lm;
    const char *s;
    if (f) fclose(f);
    if (!a || !b || !(lm = lm_new(text, n, 0))) { fprintf(stderr, "demo: %s\n", demo_error()); return 1; }
    printf("%s\n", demo_build());
    for (e = 0; e < 4; e++) printf("nt epoch %d: softmax %.4f ea %.4f\n", (e + 1) * 25, nt_train(a, 25), nt_train(b, 25));
    for (e = 0; e < 4; e++) printf("lm step %d: loss %.4f\n", (e + 1) * 10, lm_train(lm, 10));
    s = lm_sample(lm, "The ", 40, 0, 0, 1);
    printf("sample: %s\n", s ? s : demo_error());
    nt_free(a); nt_free(b); lm_free(lm);
    return s ? 0 : 1;
}
#endif
