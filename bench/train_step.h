/* One training step (forward, loss, backward, AdamW) of the models bench_transformer measures, for
   whichever attn.h was included before this file: bench_transformer times runs of them, bench/ab_step.c
   alternates the steps of two builds of attn.h. Presets: 0 the HYLA paper's fuzzy transformer (2
   layers, E 128, 8 heads of 2, T 32, batch 128), 1 SRAVEN width 1 (4 layers, 16 heads of 4, T 36), both
   with T5 biases and attention dropout 0.1; 2 a small Cogformer (4 RMSNorm blocks of width 128, RoPE, 4
   heads of 32, SwiGLU 344, 16 windows of 128 byte tokens, every position predicted, clipping at 1.0).
   Inputs are random. */
#ifndef ATTN_TRAIN_STEP_H
#define ATTN_TRAIN_STEP_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    attn_transformer m;
    attn_transformer_config c;
    int B, preset, n_out, *tok, *targets;
    long steps;
    attn_float *x, *out, *dout, *loss, *probs, *cache, *mom, *vel;
    void *work;
    size_t wb;
} train_step;

/* The product FLOPs of one training step on one sequence of c->max_T tokens: every matrix product
   of the forward pass (input or embedding projection, Q, K, V, O, the MLP's two or three, QK^T and
   PV over the keys each query sees, the head), times 3 for forward + backward (3.5 for the
   attention products: two forward, five backward). The last layer of a read-out model computes
   its read-out rows only (K and V for all); the head-mixing kinds' own value networks are not
   counted. */
static inline double step_flops(const attn_transformer_config *c)
{
    double T = c->max_T, C = c->d, H = c->heads, dk = c->dk, dv = c->dv, lin = 0, att = 0, R;
    int l;
    lin += c->in_dim ? 2 * T * c->in_dim * C : 0; /* dense inputs' projection; token embeddings are lookups */
    for (l = 0; l < c->layers; l++) {
        R = l == c->layers - 1 && c->readout ? c->readout : T; /* the queries this layer computes */
        lin += 2 * T * C * H * (dk + dv) + 2 * R * C * H * dk + 2 * R * H * dv * C +
               2 * R * C * c->mlp * (c->glu ? 3 : 2);
        att += 2 * R * (c->causal ? (T + 1) / 2 : T) * H * (dk + dv);
    }
    lin += 2 * (c->readout ? c->readout : T) * C * c->out;
    return 3 * lin + 3.5 * att;
}

static void *train_step_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) { fprintf(stderr, "train_step: out of memory\n"); exit(1); }
    return p;
}

/* Sets up preset (0 fuzzy, 1 SRAVEN, 2 the Cogformer) with every layer of `kind` on `threads` threads. */
static void train_step_init(train_step *s, int preset, attn_kind kind, int threads)
{
    attn_transformer_config c;
    attn_rng r;
    int sraven = preset == 1, cog = preset == 2, l, i, rows;
    memset(s, 0, sizeof *s);
    memset(&c, 0, sizeof c);
    c.in_dim = sraven ? 8 : 5; c.d = 128; c.layers = sraven ? 4 : 2; c.heads = sraven ? 16 : 8; c.dk = c.dv = sraven ? 4 : 2;
    c.mlp = 256; c.max_T = sraven ? 36 : 32; c.out = sraven ? 8 : 1; c.readout = sraven ? 4 : 1; c.eps = (attn_float)1e-6;
    c.act = ATTN_ACT_GELU_TANH; c.bias = 1; c.t5 = 1; c.dropout = (attn_float)0.1; c.init = ATTN_INIT_LECUN;
    if (cog) {
        memset(&c, 0, sizeof c);
        c.vocab = c.out = 257; c.d = 128; c.layers = 4; c.heads = 4; c.dk = c.dv = 32; c.mlp = 344; c.max_T = 128; c.causal = 1;
        c.pos = ATTN_POS_ROPE; c.norm = ATTN_NORM_RMS; c.eps = (attn_float)1e-6; c.act = ATTN_ACT_SILU; c.glu = 1;
    }
    for (l = 0; l < c.layers; l++) c.kinds[l] = kind;
    s->B = cog ? 16 : 128;
    s->preset = preset;
    attn_set_threads(threads);
    attn_rng_seed(&r, 1, 0);
    if (attn_transformer_init(&s->m, &c, &r) != ATTN_OK) { fprintf(stderr, "%s\n", attn_last_error()); exit(1); }
    s->c = c;
    rows = s->B * (cog ? c.max_T : c.readout);
    s->n_out = rows * c.out;
    s->x = (attn_float *)train_step_alloc(sizeof(attn_float) * (size_t)s->B * c.max_T * (cog ? 1 : c.in_dim));
    s->tok = (int *)train_step_alloc(sizeof(int) * (size_t)s->B * c.max_T);
    s->out = (attn_float *)train_step_alloc(sizeof(attn_float) * (size_t)s->n_out);
    s->dout = (attn_float *)train_step_alloc(sizeof(attn_float) * (size_t)s->n_out);
    s->probs = (attn_float *)train_step_alloc(sizeof(attn_float) * (size_t)s->n_out);
    s->loss = (attn_float *)train_step_alloc(sizeof(attn_float) * (size_t)rows);
    s->targets = (int *)train_step_alloc(sizeof(int) * (size_t)rows);
#ifdef ATTN_CHUNK_TOKENS /* attn_transformer_grad: its work holds a chunk's cache */
    s->cache = NULL;
    s->wb = attn_transformer_grad_work_bytes(&s->m, s->B, c.max_T, 0);
#else
    s->cache = (attn_float *)train_step_alloc(sizeof(attn_float) * attn_transformer_cache_floats(&s->m, s->B, c.max_T));
    s->wb = attn_transformer_work_bytes(&s->m, s->B, c.max_T);
#endif
    s->work = train_step_alloc(s->wb);
    s->mom = (attn_float *)calloc(s->m.p.total, sizeof(attn_float));
    s->vel = (attn_float *)calloc(s->m.p.total, sizeof(attn_float));
    if (!s->mom || !s->vel) { fprintf(stderr, "train_step: out of memory\n"); exit(1); }
    for (i = 0; i < s->B * c.max_T * (cog ? 1 : c.in_dim); i++) s->x[i] = (attn_float)attn_rng_uniform(&r);
    for (i = 0; i < s->B * c.max_T; i++) s->tok[i] = (int)attn_rng_int(&r, 257);
    for (i = 0; i < rows; i++) s->targets[i] = (int)attn_rng_int(&r, (uint32_t)c.out);
    s->m.training = 1;
}

/* The loss of sequences b0 .. b0 + nb - 1 from their outputs y, dL/dy in dy: SRAVEN and the Cogformer
   cross entropy, fuzzy squared error against 0.5, both averaged over the whole batch. */
static double train_step_loss(void *ctx, int b0, int nb, const attn_float *y, attn_float *dy)
{
    train_step *s = (train_step *)ctx;
    int i, per = s->preset == 2 ? s->c.max_T : s->c.readout, n = nb * per, nt = s->B * per;
    double sum = 0;
    if (s->preset) {
        attn_cross_entropy_forward(s->loss, s->probs, y, s->targets + (size_t)b0 * per, n, s->c.out);
        memset(dy, 0, sizeof(attn_float) * (size_t)n * s->c.out);
        attn_cross_entropy_backward(dy, NULL, (attn_float)(1.0 / nt), s->probs, s->targets + (size_t)b0 * per, n, s->c.out);
        for (i = 0; i < n; i++) sum += s->loss[i] / nt;
    } else {
        for (i = 0; i < nb; i++) {
            dy[i] = (attn_float)(2 * (y[i] - 0.5) / s->B);
            sum += (y[i] - 0.5) * (y[i] - 0.5) / s->B;
        }
    }
    return sum;
}

/* One step; tokens in it: B max_T. With attn_transformer_grad (ATTN_CHUNK_TOKENS defined), the batch in
   its chunks; else one forward and backward pass over the batch. */
static void train_step_run(train_step *s)
{
    int cog = s->preset == 2;
    s->m.seed = (uint64_t)s->steps;
    attn_params_zero_grad(&s->m.p);
#ifdef ATTN_CHUNK_TOKENS
    attn_transformer_grad(&s->m, train_step_loss, s, cog ? s->tok : NULL, cog ? NULL : s->x, s->B, s->c.max_T, 0, NULL,
                          s->work, s->wb);
#else
    attn_transformer_forward(&s->m, s->out, s->cache, cog ? s->tok : NULL, cog ? NULL : s->x, s->B, s->c.max_T, s->work,
                             s->wb);
    train_step_loss(s, 0, s->B, s->out, s->dout);
    attn_transformer_backward(&s->m, s->dout, s->cache, cog ? s->tok : NULL, cog ? NULL : s->x, s->B, s->c.max_T, s->work,
                              s->wb);
#endif
    if (cog) attn_clip_grad_norm(&s->m.p, 1.0);
    attn_adamw_step(&s->m.p, s->mom, s->vel, s->steps + 1, (attn_float)1e-3, (attn_float)0.9, (attn_float)(cog ? 0.95 : 0.999),
                    (attn_float)1e-8, (attn_float)0.1);
    s->steps++;
}

static inline void train_step_free(train_step *s)
{
    free(s->x); free(s->tok); free(s->out); free(s->dout); free(s->probs); free(s->loss); free(s->targets);
    free(s->cache); free(s->work); free(s->mom); free(s->vel);
    attn_transformer_free(&s->m);
}
#endif
