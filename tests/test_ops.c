/* Every op's backward pass against central finite differences (t_gradcheck), on small odd shapes,
   plus forward values with known answers (T5's relative-position buckets, Raffel et al. 2020, softmax rows, sinusoids). */
#include "test.h"

typedef struct {
    int N, C, OC, V, B, T, H, nb, mode, act;
    attn_float eps, p;
    attn_float *x, *x2, *w, *b, *out, *c1, *c2, *dx, *dx2, *dw, *db;
    int *ids;
    unsigned char *keep;
    attn_rng rng;
} op_ctx;

static op_ctx ctx_new(int N, int C, int OC, attn_rng *r)
{
    op_ctx c;
    size_t big = (size_t)(N + 1) * (C + 1) * (OC + 1) * 4 + 1024; /* room for every case below */
    memset(&c, 0, sizeof c);
    c.N = N; c.C = C; c.OC = OC;
    c.x = t_alloc(big); c.x2 = t_alloc(big); c.w = t_alloc(big); c.b = t_alloc(big);
    c.out = t_alloc(big); c.c1 = t_alloc(big); c.c2 = t_alloc(big);
    c.dx = t_alloc(big); c.dx2 = t_alloc(big); c.dw = t_alloc(big); c.db = t_alloc(big);
    c.ids = (int *)calloc(big, sizeof(int));
    c.keep = (unsigned char *)calloc(big, 1);
    t_randn(c.x, big, r, 1);
    t_randn(c.x2, big, r, 1);
    t_randn(c.w, big, r, 0.5);
    t_randn(c.b, big, r, 0.5);
    return c;
}

static void ctx_free(op_ctx *c)
{
    free(c->x); free(c->x2); free(c->w); free(c->b); free(c->out); free(c->c1); free(c->c2);
    free(c->dx); free(c->dx2); free(c->dw); free(c->db); free(c->ids); free(c->keep);
}

/* ---- forward/backward wrappers with the signature t_gradcheck wants ---- */
static void linear_f(void *p) { op_ctx *c = (op_ctx *)p; attn_linear_forward(c->out, c->x, c->w, c->b, c->N, c->C, c->OC); }
static void linear_b(void *p, const attn_float *d) { op_ctx *c = (op_ctx *)p; attn_linear_backward(c->dx, c->dw, c->db, d, c->x, c->w, c->N, c->C, c->OC); }

static void ln_f(void *p)
{
    op_ctx *c = (op_ctx *)p;
    attn_layernorm_forward(c->out, c->c1, c->c2, c->x, c->mode & 2 ? c->w : NULL, c->mode & 2 ? c->b : NULL, c->N, c->C, c->eps, (attn_ln_eps)(c->mode & 1));
}
static void ln_b(void *p, const attn_float *d)
{
    op_ctx *c = (op_ctx *)p;
    attn_layernorm_backward(c->dx, c->mode & 2 ? c->dw : NULL, c->mode & 2 ? c->db : NULL, d, c->x, c->mode & 2 ? c->w : NULL, c->c1, c->c2, c->N, c->C, c->eps, (attn_ln_eps)(c->mode & 1));
}

static void rms_f(void *p) { op_ctx *c = (op_ctx *)p; attn_rmsnorm_forward(c->out, c->c1, c->x, c->mode ? c->w : NULL, c->N, c->C, c->eps); }
static void rms_b(void *p, const attn_float *d) { op_ctx *c = (op_ctx *)p; attn_rmsnorm_backward(c->dx, c->mode ? c->dw : NULL, d, c->x, c->mode ? c->w : NULL, c->c1, c->N, c->C); }

static void act_f(void *p) { op_ctx *c = (op_ctx *)p; attn_act_forward(c->out, c->x, (size_t)c->N, (attn_act)c->act); }
static void act_b(void *p, const attn_float *d) { op_ctx *c = (op_ctx *)p; attn_act_backward(c->dx, d, c->x, (size_t)c->N, (attn_act)c->act); }

static void swiglu_f(void *p) { op_ctx *c = (op_ctx *)p; attn_swiglu_forward(c->out, c->x, c->x2, (size_t)c->N); }
static void swiglu_b(void *p, const attn_float *d) { op_ctx *c = (op_ctx *)p; attn_swiglu_backward(c->dx, c->dx2, d, c->x, c->x2, (size_t)c->N); }

static void softmax_f(void *p) { op_ctx *c = (op_ctx *)p; attn_softmax_forward(c->out, c->x, c->N, c->C); }
static void softmax_b(void *p, const attn_float *d) { op_ctx *c = (op_ctx *)p; attn_softmax_backward(c->dx, d, c->out, c->N, c->C); }

static void emb_f(void *p) { op_ctx *c = (op_ctx *)p; attn_embedding_forward(c->out, c->ids, c->w, c->N, c->V, c->C); }
static void emb_b(void *p, const attn_float *d) { op_ctx *c = (op_ctx *)p; attn_embedding_backward(c->dw, d, c->ids, c->N, c->V, c->C); }

static void pos_f(void *p) { op_ctx *c = (op_ctx *)p; attn_pos_learned_forward(c->out, c->x, c->w, c->B, c->T, c->C, c->T + 2); }
static void pos_b(void *p, const attn_float *d) { op_ctx *c = (op_ctx *)p; attn_pos_learned_backward(c->dx, c->dw, d, c->B, c->T, c->C, c->T + 2); }

/* RoPE tables live in c1 (cos) and c2 (sin), filled once */
static void rope_f(void *p) { op_ctx *c = (op_ctx *)p; attn_rope_forward(c->out, c->x, c->c1, c->c2, c->N, c->T, c->C); }
static void rope_b(void *p, const attn_float *d) { op_ctx *c = (op_ctx *)p; attn_rope_backward(c->dx, d, c->c1, c->c2, c->N, c->T, c->C); }

static void t5_f(void *p) { op_ctx *c = (op_ctx *)p; attn_t5_bias_forward(c->out, c->w, c->H, c->T, c->T + 1, c->nb); }
static void t5_b(void *p, const attn_float *d) { op_ctx *c = (op_ctx *)p; attn_t5_bias_backward(c->dw, d, c->H, c->T, c->T + 1, c->nb); }

/* dropout re-seeds its generator so every forward call draws the same mask */
static void drop_f(void *p)
{
    op_ctx *c = (op_ctx *)p;
    attn_rng_seed(&c->rng, 4, 4);
    attn_dropout_forward(c->out, c->keep, c->x, (size_t)c->N, c->p, &c->rng);
}
static void drop_b(void *p, const attn_float *d) { op_ctx *c = (op_ctx *)p; attn_dropout_backward(c->dx, d, c->keep, (size_t)c->N, c->p); }

static void mse_f(void *p) { op_ctx *c = (op_ctx *)p; attn_mse_forward(c->out, c->x, c->x2, (size_t)c->N, (attn_reduce)c->mode); }
static void mse_b(void *p, const attn_float *d) { op_ctx *c = (op_ctx *)p; attn_mse_backward(c->dx, c->x, c->x2, (size_t)c->N, (attn_reduce)c->mode, d[0]); }

static void ce_f(void *p) { op_ctx *c = (op_ctx *)p; attn_cross_entropy_forward(c->out, c->c1, c->x, c->ids, c->N, c->V); }
static void ce_b(void *p, const attn_float *d) { op_ctx *c = (op_ctx *)p; attn_cross_entropy_backward(c->dx, d, 0, c->c1, c->ids, c->N, c->V); }

static void test_gradients(void)
{
    attn_rng r;
    op_ctx c;
    char what[96];
    int mode, a, i;
    attn_rng_seed(&r, 21, 0);

    c = ctx_new(7, 5, 3, &r);
    {
        t_var v[3] = {{"inp", c.x, c.dx, 35}, {"W", c.w, c.dw, 15}, {"b", c.b, c.db, 3}};
        t_gradcheck("linear 7x5 -> 3", linear_f, linear_b, &c, c.out, 21, v, 3);
    }
    ctx_free(&c);
    c = ctx_new(9, 5, 83, &r); /* 83 outputs: whole vectors and a tail in every vector loop */
    {
        t_var v[3] = {{"inp", c.x, c.dx, 45}, {"W", c.w, c.dw, 415}, {"b", c.b, c.db, 83}};
        t_gradcheck("linear 9x5 -> 83", linear_f, linear_b, &c, c.out, 9 * 83, v, 3);
    }
    ctx_free(&c);

    for (mode = 0; mode < 8; mode++) { /* bit 0: eps outside, bit 1: affine, bit 2: rows of 37 (vector loops) */
        int C = mode & 4 ? 37 : 7;
        c = ctx_new(3, C, 1, &r);
        c.mode = mode & 3;
        c.eps = (attn_float)(mode & 1 ? 1e-3 : 1e-5);
        {
            t_var v[3] = {{"inp", c.x, c.dx, 3 * C}, {"gamma", c.w, c.dw, C}, {"beta", c.b, c.db, C}};
            snprintf(what, sizeof what, "layernorm eps %s%s, C = %d", mode & 1 ? "outside" : "inside", mode & 2 ? " affine" : "", C);
            t_gradcheck(what, ln_f, ln_b, &c, c.out, 3 * C, v, mode & 2 ? 3 : 1);
        }
        ctx_free(&c);
    }

    for (mode = 0; mode < 4; mode++) { /* bit 0: gain; bit 1: rows of 37, through the vector loops and a tail */
        int C = mode & 2 ? 37 : 9;
        c = ctx_new(5, C, 1, &r);
        c.mode = mode & 1;
        c.eps = (attn_float)1e-6;
        {
            t_var v[2] = {{"inp", c.x, c.dx, 5 * C}, {"g", c.w, c.dw, C}};
            snprintf(what, sizeof what, "rmsnorm%s, C = %d", mode & 1 ? " with gain" : "", C);
            t_gradcheck(what, rms_f, rms_b, &c, c.out, 5 * C, v, mode & 1 ? 2 : 1);
        }
        ctx_free(&c);
    }

    for (a = 0; a < ATTN_ACT_COUNT; a++) {
        c = ctx_new(17, 1, 1, &r);
        c.act = a;
        for (i = 0; i < 17; i++) /* keep clear of ReLU's kink */
            if (fabs(c.x[i]) < 0.1) c.x[i] = (attn_float)(c.x[i] < 0 ? -0.5 : 0.5);
        {
            t_var v[1] = {{"inp", c.x, c.dx, 17}};
            snprintf(what, sizeof what, "activation %s", attn_act_name((attn_act)a));
            t_gradcheck(what, act_f, act_b, &c, c.out, 17, v, 1);
        }
        ctx_free(&c);
    }

    c = ctx_new(37, 1, 1, &r); /* whole vectors and a tail */
    {
        t_var v[2] = {{"a", c.x, c.dx, 37}, {"b", c.x2, c.dx2, 37}};
        t_gradcheck("swiglu", swiglu_f, swiglu_b, &c, c.out, 37, v, 2);
    }
    ctx_free(&c);

    c = ctx_new(3, 7, 1, &r);
    {
        t_var v[1] = {{"inp", c.x, c.dx, 21}};
        c.x[3] = -INFINITY; /* a masked entry */
        for (i = 7; i < 14; i++) c.x[i] = -INFINITY; /* a fully masked row */
        t_gradcheck("softmax", softmax_f, softmax_b, &c, c.out, 21, v, 1);
        for (i = 7; i < 14; i++) CHECK(c.out[i] == 0 && c.dx[i] == 0.25, "fully masked softmax row: out %g, grad %g", (double)c.out[i], (double)c.dx[i] - 0.25);
        CHECK(c.out[3] == 0, "masked entry has weight %g", (double)c.out[3]);
    }
    ctx_free(&c);
    { /* a row of 37 (whole vectors and a tail) with masked entries in both: weight exactly 0, in cross entropy too */
        attn_float x[37], y[37], sum = 0, loss;
        int t = 5;
        for (i = 0; i < 37; i++) x[i] = (attn_float)(0.1 * (i % 5));
        x[3] = x[36] = -INFINITY;
        attn_softmax_forward(y, x, 1, 37);
        for (i = 0; i < 37; i++) sum += y[i];
        CHECK(y[3] == 0 && y[36] == 0 && fabs(sum - 1) < 1e-6, "softmax over 37 with two masked: %g %g, sum %g", (double)y[3], (double)y[36], (double)sum);
        attn_cross_entropy_forward(&loss, y, x, &t, 1, 37);
        CHECK(y[3] == 0 && y[36] == 0 && fabs(loss + log(y[5])) < 1e-6, "cross entropy over 37 with two masked: %g %g", (double)y[3], (double)y[36]);
    }

    c = ctx_new(9, 5, 1, &r);
    c.V = 4;
    for (i = 0; i < 9; i++) c.ids[i] = (i * 3) % 4;
    {
        t_var v[1] = {{"table", c.w, c.dw, 20}};
        t_gradcheck("embedding", emb_f, emb_b, &c, c.out, 45, v, 1);
    }
    ctx_free(&c);

    c = ctx_new(1, 3, 1, &r);
    c.B = 2; c.T = 5;
    {
        t_var v[2] = {{"inp", c.x, c.dx, 30}, {"table", c.w, c.dw, 21}};
        t_gradcheck("learned positions", pos_f, pos_b, &c, c.out, 30, v, 2);
    }
    ctx_free(&c);

    c = ctx_new(3, 6, 1, &r); /* N = 3 sequences, T = 5, dh = 6 */
    c.T = 5;
    attn_rope_tables(c.c1, c.c2, 5, 6, 2, 10000);
    {
        t_var v[1] = {{"inp", c.x, c.dx, 90}};
        t_gradcheck("rope", rope_f, rope_b, &c, c.out, 90, v, 1);
    }
    ctx_free(&c);

    c = ctx_new(1, 1, 1, &r);
    c.H = 3; c.T = 7; c.nb = 6;
    {
        t_var v[1] = {{"table", c.w, c.dw, 18}};
        t_gradcheck("t5 bias", t5_f, t5_b, &c, c.out, 3 * 7 * 8, v, 1);
    }
    ctx_free(&c);

    c = ctx_new(33, 1, 1, &r);
    c.p = (attn_float)0.3;
    {
        t_var v[1] = {{"inp", c.x, c.dx, 33}};
        t_gradcheck("dropout", drop_f, drop_b, &c, c.out, 33, v, 1);
    }
    ctx_free(&c);

    for (mode = 0; mode < 2; mode++) {
        c = ctx_new(11, 1, 1, &r);
        c.mode = mode;
        {
            t_var v[1] = {{"pred", c.x, c.dx, 11}};
            t_gradcheck(mode ? "mse mean" : "mse sum", mse_f, mse_b, &c, c.out, 1, v, 1);
        }
        ctx_free(&c);
    }

    c = ctx_new(5, 1, 1, &r);
    c.V = 7;
    for (i = 0; i < 5; i++) c.ids[i] = i == 2 ? -1 : (i * 5) % 7; /* one ignored target */
    {
        t_var v[1] = {{"logits", c.x, c.dx, 35}};
        t_gradcheck("cross entropy", ce_f, ce_b, &c, c.out, 5, v, 1);
        CHECK(c.out[2] == 0, "ignored target has loss %g", (double)c.out[2]);
    }
    ctx_free(&c);
}

static void test_values(void)
{
    /* T5's buckets (Raffel et al. 2020), as the HYLA code uses them */
    static const int b32[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 21, 22, 23, 24, 25, 26, 27, 28, 28, 29, 30, 31, 31, 31};
    static const int b36[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 32, 33, 34, 35, 35, 35};
    attn_float pe[4 * 6], x[6] = {1, 2, 3, 0, 0, 0}, y[6], cs[3], sn[3], rx[6], lsm[3], p3[3];
    int n, bad16 = 0, bad32 = 0, bad36 = 0, ids[3] = {2, 0, 1};
    for (n = 0; n < 40; n++) {
        bad16 += attn_t5_bucket(n, 0, 16) != (n < 15 ? n : 15);
        bad32 += n < 34 && attn_t5_bucket(n, 0, 32) != b32[n];
        bad36 += n < 38 && attn_t5_bucket(n, 0, 36) != b36[n];
    }
    CHECK(bad16 == 0 && bad32 == 0 && bad36 == 0, "T5 buckets against the hand-computed table: %d (nb 16), %d (nb 32), %d (nb 36) wrong", bad16, bad32, bad36);
    CHECK(attn_t5_bucket(0, 5, 32) == 0, "a key after the query falls in bucket 0 (unidirectional)");

    attn_pos_sinusoidal(pe, 4, 6);
    CHECK(pe[0] == 0 && pe[1] == 1 && fabs(pe[6 * 3 + 0] - sin(3.0)) < 1e-6 && fabs(pe[6 * 2 + 3] - cos(2 / pow(10000, 2.0 / 6))) < 1e-6,
          "sinusoidal table values");

    attn_rope_tables(cs, sn, 1, 6, 3, 10000); /* position 3 */
    attn_rope_forward(y, x, cs, sn, 1, 1, 6);
    CHECK(fabs(y[0] - (cos(3.0) - 2 * sin(3.0))) < 1e-6 && fabs(y[1] - (sin(3.0) + 2 * cos(3.0))) < 1e-6, "rope rotates the first pair by t = 3 radians");
    attn_rope_forward(rx, x, cs, sn, 1, 1, 6);
    CHECK(fabs(attn_dot(6, rx, rx) - attn_dot(6, x, x)) < 1e-5, "rope preserves the norm");

    attn_softmax_forward(lsm, x, 1, 3);
    CHECK(fabs(lsm[0] - 0.0900306) < 1e-6 && fabs(lsm[2] - 0.6652410) < 1e-6, "softmax(1, 2, 3)");
    attn_one_hot(p3, ids + 1, 1, 3);
    CHECK(p3[0] == 1 && p3[1] == 0 && p3[2] == 0, "one-hot");
    {
        attn_float l[1], pr[3];
        int t = 2;
        attn_cross_entropy_forward(l, pr, x, &t, 1, 3);
        CHECK(fabs(l[0] - (-log(0.6652410))) < 1e-5, "cross entropy of softmax(1, 2, 3) at class 2: %g", (double)l[0]);
    }
    {
        attn_float a[3] = {-1, 0.5, 2}, o[3], d;
        attn_act_forward(o, a, 3, ATTN_ACT_GELU_TANH);
        CHECK(fabs(o[2] - 1.9545977) < 1e-6, "gelu_tanh(2) = %.7f, expected 1.9545977", (double)o[2]);
        attn_act_forward(o, a, 3, ATTN_ACT_GELU_ERF);
        CHECK(fabs(o[0] - (-0.1586553)) < 1e-6, "gelu_erf(-1) = %.7f, expected -0.1586553", (double)o[0]);
        attn_mse_forward(&d, a, x, 3, ATTN_REDUCE_MEAN);
        CHECK(fabs(d - (4 + 2.25 + 1) / 3.0) < 1e-6, "mse mean");
    }
    { /* the vector forms of the activations (whole vectors of a run) against the scalar path (runs of 1) */
        attn_float x[37], o[37], o1, dout[37], din[37], din1;
        attn_rng rr;
        int k, i, a;
        attn_rng_seed(&rr, 21, 0);
        for (i = 0; i < 37; i++) { x[i] = (attn_float)(12 * attn_rng_uniform(&rr) - 6); dout[i] = (attn_float)attn_rng_normal(&rr, 0, 1); }
        x[0] = 0; x[1] = (attn_float)1e-4; x[2] = (attn_float)-0.29; x[3] = (attn_float)0.31; /* the tanh kernel's branch point */
        for (a = 0; a < ATTN_ACT_COUNT; a++) {
            double worst = 0, worstd = 0;
            attn_act_forward(o, x, 37, (attn_act)a);
            for (i = 0; i < 37; i++) din[i] = 0;
            attn_act_backward(din, dout, x, 37, (attn_act)a);
            for (k = 0; k < 37; k++) {
                din1 = 0;
                attn_act_forward(&o1, x + k, 1, (attn_act)a);
                attn_act_backward(&din1, dout + k, x + k, 1, (attn_act)a);
                worst = fmax(worst, fabs(o[k] - o1) / (1e-6 + fabs(o1)));
                worstd = fmax(worstd, fabs(din[k] - din1) / (1e-6 + fabs(din1)));
            }
            CHECK(worst <= 8 * T_EPS && worstd <= 16 * T_EPS, "activation %s: vector vs scalar, forward %.3g, backward %.3g (relative)",
                  attn_act_name((attn_act)a), worst, worstd);
        }
    }
    {
        attn_float in[6] = {1, 2, 3, 4, 5, 6}, out[6], mu[2], rs[2];
        attn_layernorm_forward(out, mu, rs, in, NULL, NULL, 2, 3, 0, ATTN_LN_EPS_INSIDE);
        CHECK(fabs(out[0] + 1.2247449) < 1e-6 && mu[1] == 5, "layernorm of (1, 2, 3)");
        attn_layernorm_forward(out, mu, rs, in, NULL, NULL, 2, 3, (attn_float)0.5, ATTN_LN_EPS_OUTSIDE);
        CHECK(fabs(out[0] - (-1 / (sqrt(2.0 / 3) + 0.5))) < 1e-6, "layernorm with eps outside");
    }
    {   /* dropout keeps about 1 - p, scales by 1 / (1 - p) */
        static attn_float in[10000], out[10000];
        static unsigned char keep[10000];
        attn_rng r;
        int i, kept = 0;
        for (i = 0; i < 10000; i++) in[i] = 1;
        attn_rng_seed(&r, 1, 1);
        attn_dropout_forward(out, keep, in, 10000, (attn_float)0.25, &r);
        for (i = 0; i < 10000; i++) kept += keep[i];
        CHECK(abs(kept - 7500) < 200 && (out[0] == 0 || fabs(out[0] - 4.0 / 3) < 1e-6), "dropout kept %d of 10000 at p = 0.25", kept);
    }
}

/* RoPE against the rotation in double: 3 sequences of 70 positions of dh 10 (350 pairs: whole vectors,
   their tails, and the kernel's blocks of pairs ending mid-row), the forward out of place and in
   place, and the backward, which adds R^T dy to what dx holds. */
static void test_rope_long(void)
{
    enum { N = 3, T = 70, DH = 10, P = T * DH / 2 };
    static attn_float cs[P], sn[P], x[N * 2 * P], y[N * 2 * P], z[N * 2 * P], dx[N * 2 * P];
    double worst = 0, worst_b = 0;
    int n, k;
    attn_rope_tables(cs, sn, T, DH, 5, 10000);
    for (k = 0; k < N * 2 * P; k++) x[k] = (attn_float)sin(0.37 * k + 1), dx[k] = (attn_float)cos(0.11 * k);
    memcpy(z, x, sizeof z);
    attn_rope_forward(y, x, cs, sn, N, T, DH);
    attn_rope_forward(z, z, cs, sn, N, T, DH);
    attn_rope_backward(dx, x, cs, sn, N, T, DH);
    for (n = 0; n < N; n++)
        for (k = 0; k < P; k++) {
            size_t i = (size_t)n * 2 * P + 2 * (size_t)k;
            double x0 = x[i], x1 = x[i + 1], c = cs[k], s = sn[k];
            double f0 = x0 * c - x1 * s, f1 = x0 * s + x1 * c, b0 = x0 * c + x1 * s, b1 = x1 * c - x0 * s;
            worst = fmax(worst, fmax(fabs(y[i] - f0), fabs(y[i + 1] - f1)));
            worst = fmax(worst, fmax(fabs(z[i] - f0), fabs(z[i + 1] - f1)));
            worst_b = fmax(worst_b, fabs(dx[i] - (cos(0.11 * i) + b0)));
            worst_b = fmax(worst_b, fabs(dx[i + 1] - (cos(0.11 * (i + 1)) + b1)));
        }
    CHECK(worst < 4e-7, "rope over 3 x 350 pairs, out of place and in place: worst error %.3g", worst);
    CHECK(worst_b < 8e-7, "rope backward adds R^T dy over 3 x 350 pairs: worst error %.3g", worst_b);
}

/* GELU's erf form against erfc in double over [-8, 8]: in float, relative error within 4e-6 from
   x = -5 on (the fit's 1.2e-7, and float's rounding of the exponent -x^2/2, a few ulp of up to 12.5,
   which moves e^-12.5 by a few 1e-6 of itself) and absolute within 1e-11 below it; float64 (libm's
   erfc) within 1e-13 relative everywhere; the derivative within 1e-6 (absolute); an entry gives the
   same value at every position of the array (the tail runs through the vector code). A broken fit
   is off by 1e-3 or more. */
static void test_gelu_erf(void)
{
    enum { N = 3203 };
    static attn_float x[N], y[N], d[N], g[N], z[7];
    double worst = 0, wd = 0, wa = 0, tol = T_DOUBLE ? 1e-13 : 4e-6;
    int i, same = 1;
    for (i = 0; i < N; i++) x[i] = (attn_float)(-8 + 16.0 * i / (N - 1)), g[i] = 1, d[i] = 0;
    attn_act_forward(y, x, N, ATTN_ACT_GELU_ERF);
    attn_act_backward(d, g, x, N, ATTN_ACT_GELU_ERF);
    for (i = 0; i < N; i++) {
        double v = x[i], f = 0.5 * v * erfc(-v / sqrt(2.0)), df = 0.5 * erfc(-v / sqrt(2.0)) + v * exp(-0.5 * v * v) / sqrt(2 * 3.141592653589793);
        if (v >= -5 || T_DOUBLE) worst = fmax(worst, fabs(y[i] - f) / fabs(f ? f : 1));
        else wa = fmax(wa, fabs(y[i] - f));
        wd = fmax(wd, fabs(d[i] - df));
    }
    for (i = 0; i < 7; i++) { /* x[N - 1 - i] alone, last in a short array */
        attn_act_forward(z, x + N - 7, (size_t)(7 - i), ATTN_ACT_GELU_ERF);
        same &= z[6 - i] == y[N - 1 - i];
    }
    CHECK(worst < tol && wa < 1e-11 && wd < 1e-6 && same,
          "GELU (erf): relative error %.3g, left tail %.3g, derivative %.3g, the same at every position %d", worst, wa,
          wd, same);
    printf("  GELU (erf) over [-8, 8]: worst relative error %.2g, derivative %.2g\n", worst, wd);
}

void test_ops(void)
{
    test_gradients();
    test_values();
    test_rope_long();
    test_gelu_erf();
}
