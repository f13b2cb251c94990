/* custom_kind: a new attention variant as one row written outside attn.h. The variant here is our
   own, for the example: softplus-normalised attention, A = softplus(s) / sum softplus(s) over the
   visible keys (positive and smooth everywhere, like softmax, but with linear rather than
   exponential growth in the score). The row gives the map from a row of scores to weights and its
   vector-Jacobian product; the tiled engine, masks, the layer, the models, threads and O(T d) memory
   come with it. The program checks the backward pass with the public gradient checker, then trains
   a small causal transformer with the new kind on the NT task. It exits 0 only if the check passes
   and the loss falls. Build and run: make build/custom_kind && build/custom_kind */
#define ATTN_IMPLEMENTATION
#include "../attn.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* p_i *= softplus(s_i) scale (p holds the 0/1 visibility on entry); returns the sum of p. */
static attn_float softplus_map(size_t n, const attn_float *s, attn_float *p, attn_float *x, attn_float scale)
{
    attn_float sum = 0;
    size_t i;
    (void)x;
    for (i = 0; i < n; i++) sum += p[i] *= (attn_float)(s[i] > 30 ? s[i] : log1p(exp(s[i]))) * scale;
    return sum;
}

/* A_i = g_i / N gives dL/ds_i = g'(s_i) (dA_i - D) / N with D = sum_j A_j dA_j; g' = sigmoid. */
static void softplus_vjp(size_t n, const attn_float *s, const attn_float *a, const attn_float *vis, attn_float *ds,
                         attn_float D, attn_float inv)
{
    size_t i;
    (void)a;
    for (i = 0; i < n; i++) ds[i] = vis[i] * (ds[i] - D) * inv / (1 + (attn_float)exp(-s[i]));
}

static const attn_score_row softplus_row = {ATTN_STAT_SUM, NULL, softplus_map, NULL, NULL, softplus_vjp};

int main(void)
{
    attn_kind_info row = {ATTN_SOFTMAX, "softplus", NULL, "A = softplus(s) / sum softplus(s)", NULL, NULL, NULL, 0, &softplus_row, NULL, NULL};
    attn_attention_desc d = {0};
    attn_transformer_config c = {0};
    attn_transformer m;
    attn_rng rng;
    enum { B = 16, T = 16, N = 5 };
    int series[B][T + 1], tok[B * T], tgt[B * T], l, step, b, t, pass;
    attn_float *y, *probs, loss[B * T], *cache, *mom, *vel;
    double err, first = 0, last = 0;
    size_t wb, cf;
    void *work;
    d.kind = c.kinds[0] = c.kinds[1] = attn_kind_register(&row);
    if ((int)d.kind < 0) { fprintf(stderr, "%s\n", attn_last_error()); return 1; }
    d.B = 2; d.H = 3; d.Tq = d.Tk = 9; d.dk = 4; d.dv = 3; d.causal = 1;
    pass = attn_gradcheck_attention(&d, 1, 0, 0, 0, &err); /* every entry of Q, K, V, causal */
    printf("softplus attention: gradient check %s, largest error %.2e\n", pass == 1 ? "passed" : "FAILED", err);
    c.vocab = c.out = N; c.d = 32; c.layers = 2; c.heads = 4; c.dk = c.dv = 8; c.mlp = 64; c.max_T = T; c.causal = 1;
    c.pos = ATTN_POS_LEARNED; c.eps = (attn_float)1e-5; c.act = ATTN_ACT_GELU_TANH; c.bias = 1;
    attn_rng_seed(&rng, 7, 0);
    if (attn_transformer_init(&m, &c, &rng) != ATTN_OK) { fprintf(stderr, "%s\n", attn_last_error()); return 1; }
    wb = attn_transformer_work_bytes(&m, B, T);
    y = malloc(sizeof *y * B * T * N); probs = malloc(sizeof *y * B * T * N); work = malloc(wb);
    cache = malloc(sizeof *cache * (cf = attn_transformer_cache_floats(&m, B, T)));
    mom = calloc(m.p.total, sizeof *mom); vel = calloc(m.p.total, sizeof *vel);
    for (step = 0; step < 300; step++) { /* next-symbol prediction on NT series N5T2 */
        for (b = 0; b < B; b++) attn_nt_series(series[b], T + 1, ATTN_NT, N, 2, NULL, &rng, NULL);
        for (b = 0; b < B; b++)
            for (t = 0; t < T; t++) tok[b * T + t] = series[b][t], tgt[b * T + t] = t >= 2 ? series[b][t + 1] : -1;
        attn_transformer_forward(&m, y, cache, cf, tok, NULL, B, T, work, wb);
        attn_cross_entropy_forward(loss, probs, y, tgt, B * T, N);
        for (last = 0, l = 0; l < B * T; l++) last += loss[l] / (B * (T - 2));
        if (step == 0) first = last;
        memset(y, 0, sizeof *y * B * T * N); /* y becomes dL/dy */
        attn_cross_entropy_backward(y, NULL, (attn_float)(1.0 / (B * (T - 2))), probs, tgt, B * T, N);
        attn_params_zero_grad(&m.p);
        attn_transformer_backward(&m, y, cache, cf, tok, NULL, B, T, work, wb);
        attn_adamw_step(&m.p, mom, vel, step + 1, (attn_float)3e-3, 0.9f, 0.999f, 1e-8f, 0.01f);
        if (step % 50 == 0) printf("step %3d  loss %.4f\n", step, last);
    }
    printf("loss %.4f -> %.4f (chance %.4f)\n", first, last, log((double)N));
    attn_transformer_free(&m);
    free(y); free(probs); free(work); free(cache); free(mom); free(vel);
    return pass == 1 && last < 0.7 * first ? 0 : 1;
}
