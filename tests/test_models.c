/* Models: the cisformer's parameter counts (the EA paper's table, Gros 2024), its forward pass against
   a naive per-window implementation of the paper's formulas, its backward pass against finite differences for
   every per-position vector choice and several attention kinds, and bad input. */
#include "test.h"

/* LN without affine parameters, eps 1e-5, of a row of d values (double). */
static void naive_ln(const double *x, double *out, int d)
{
    double mu = 0, var = 0;
    int e;
    for (e = 0; e < d; e++) mu += x[e] / d;
    for (e = 0; e < d; e++) var += (x[e] - mu) * (x[e] - mu) / d;
    for (e = 0; e < d; e++) out[e] = (x[e] - mu) / sqrt(var + 1e-5);
}

/* y [d] of one window by the EA paper's bilayer (Gros 2024), position by position, in double. */
#define CN 12 /* the reference's largest ncon */
#define CD 6  /* and d */
static void naive_cisformer(const attn_cisformer *m, const int *tok, double *y)
{
    const attn_cisformer_config *cf = &m->cfg;
    int d = cf->d, n = cf->ncon, c, j, e, k;
    double x[CN][CD], xt[CN][CD], q[CN][CD], kk[CN][CD], v[CN][CD], h[CN][CD], f[CN][CD];
    const attn_float *Wq = m->p.value[0].data, *Wk = m->p.value[1].data, *Wv = m->p.value[2].data, *W1 = m->p.value[3].data,
                     *W2 = m->p.value[4].data, *vec = m->p.value[5].data, *R = m->p.value[6].data, *r = m->p.value[7].data;
    double scale = cf->scale != 0 ? cf->scale : 1 / sqrt((double)d);
    for (c = 0; c < n; c++) {
        for (e = 0; e < d; e++) x[c][e] = e == tok[c];
        naive_ln(x[c], xt[c], d);
        for (e = 0; e < d; e++) xt[c][e] = cf->vec == ATTN_CIS_LN_BIAS ? xt[c][e] + vec[c * d + e] : cf->vec == ATTN_CIS_LN_GAINS ? xt[c][e] * vec[2 * c] : xt[c][e];
        for (e = 0; e < d; e++) {
            q[c][e] = kk[c][e] = v[c][e] = 0;
            for (k = 0; k < d; k++) {
                q[c][e] += Wq[(c * d + e) * d + k] * (cf->qk_raw ? x[c][k] : xt[c][k]);
                kk[c][e] += Wk[(c * d + e) * d + k] * (cf->qk_raw ? x[c][k] : xt[c][k]);
                v[c][e] += Wv[(c * d + e) * d + k] * xt[c][k];
            }
        }
    }
    for (c = 0; c < n; c++) { /* causal attention row c, then the FFN at position c */
        double s[CN], a[CN], sum = 0, mx = -1e300, nh[CD], u[4 * CD];
        for (j = 0; j <= c; j++) {
            s[j] = 0;
            for (e = 0; e < d; e++) s[j] += q[c][e] * kk[j][e];
            s[j] *= scale;
            mx = fmax(mx, cf->kind == ATTN_COG ? fabs(s[j]) : s[j]);
        }
        for (j = 0; j <= c; j++) {
            a[j] = cf->kind == ATTN_EXPRESSIVE ? s[j] * s[j] / (1 + s[j] * s[j]) : exp((cf->kind == ATTN_COG ? fabs(s[j]) : s[j]) - mx);
            sum += a[j];
        }
        for (j = 0; j <= c; j++) a[j] = a[j] / sum * (cf->kind == ATTN_COG ? (s[j] > 0) - (s[j] < 0) : 1);
        for (e = 0; e < d; e++) {
            h[c][e] = x[c][e];
            for (j = 0; j <= c; j++) h[c][e] += a[j] * v[j][e];
        }
        naive_ln(h[c], nh, d);
        for (e = 0; e < d && cf->vec == ATTN_CIS_LN_GAINS; e++) nh[e] *= vec[2 * c + 1];
        for (e = 0; e < 4 * d; e++) {
            u[e] = 0;
            for (k = 0; k < d; k++) u[e] += W1[(c * 4 * d + e) * d + k] * nh[k];
            u[e] = tanh(u[e]);
        }
        for (e = 0; e < d; e++) {
            f[c][e] = h[c][e] + (cf->vec == ATTN_CIS_FFN_BIAS ? vec[c * d + e] : 0);
            for (k = 0; k < 4 * d; k++) f[c][e] += W2[(c * d + e) * 4 * d + k] * u[k];
        }
    }
    for (e = 0; e < d; e++) {
        y[e] = r[e];
        for (c = 0; c < n; c++)
            for (k = 0; k < d; k++) y[e] += R[(size_t)e * n * d + c * d + k] * f[c][k];
    }
}

typedef struct {
    attn_cisformer m;
    attn_float *y, *cache;
    int *tok, stride, nb;
    void *work;
    size_t wb;
} cis_ctx;

static void cis_f(void *p)
{
    cis_ctx *c = (cis_ctx *)p;
    attn_cisformer_forward(&c->m, c->y, c->cache, attn_cisformer_cache_floats(&c->m, c->nb), c->tok, c->stride, c->nb, c->work, c->wb);
}

static void cis_b(void *p, const attn_float *dy)
{
    cis_ctx *c = (cis_ctx *)p;
    attn_cisformer_backward(&c->m, dy, c->cache, attn_cisformer_cache_floats(&c->m, c->nb), c->nb, c->work, c->wb);
}

static void test_cisformer_counts(void)
{
    static const int table[][3] = {{2, 16, 802}, {16, 16, 49424}, {16, 32, 98832}, {16, 52, 160592}, {16, 56, 172944},
                                   {16, 64, 197648}, {16, 128, 395280}, {16, 256, 790544}, {16, 512, 1581072}};
    size_t i;
    attn_rng r;
    attn_rng_seed(&r, 3, 0);
    for (i = 0; i < sizeof table / sizeof table[0]; i++) {
        attn_cisformer_config cf = {0};
        cf.d = table[i][0]; cf.ncon = table[i][1]; cf.kind = ATTN_SOFTMAX; cf.scale = 1;
        CHECK(attn_cisformer_param_count(&cf) == (size_t)table[i][2], "cisformer N%d ncon %d: %lu parameters, the EA paper says %d", cf.d, cf.ncon,
              (unsigned long)attn_cisformer_param_count(&cf), table[i][2]);
    }
    {
        attn_cisformer_config cf = {0};
        attn_cisformer m;
        cf.d = 16; cf.ncon = 128; cf.kind = ATTN_EXPRESSIVE; cf.scale = 1; cf.vec = ATTN_CIS_LN_GAINS;
        CHECK(attn_cisformer_param_count(&cf) == 393488, "the LN-gains alternative at N16/128: %lu (the EA paper: 393,488)", (unsigned long)attn_cisformer_param_count(&cf));
        cf.d = 2; cf.ncon = 16;
        CHECK(attn_cisformer_param_count(&cf) == 802, "the LN-gains alternative at N2/16 is also 802");
        CHECK(attn_cisformer_init(&m, &cf, &r) == ATTN_OK, "init: %s", attn_last_error());
        {
            size_t n = 0;
            int t;
            for (t = 0; t < m.p.count; t++) n += attn_tensor_numel(&m.p.value[t]);
            CHECK(n == 802, "an initialised N2/16 model holds %lu parameters, not 802", (unsigned long)n);
        }
        attn_cisformer_free(&m);
    }
}

static void test_cisformer_forward_backward(void)
{
    static const attn_kind kinds[3] = {ATTN_SOFTMAX, ATTN_EXPRESSIVE, ATTN_COG};
    attn_rng r;
    int v, k;
    attn_rng_seed(&r, 4, 0);
    for (v = 0; v <= ATTN_CIS_LN_GAINS + 1; v++) /* the last: the LN bias with q, k from the raw input */
        for (k = 0; k < 3; k++) {
            cis_ctx c;
            attn_cisformer_config cf = {0};
            int len, i, stride;
            double worst = 0;
            char what[96];
            cf.d = 3; cf.ncon = 5; cf.kind = kinds[k]; cf.scale = k == 2 ? 0 : 1;
            cf.vec = (attn_cis_vec)(v > ATTN_CIS_LN_GAINS ? ATTN_CIS_LN_BIAS : v); cf.qk_raw = v > ATTN_CIS_LN_GAINS;
            CHECK(attn_cisformer_init(&c.m, &cf, &r) == ATTN_OK, "init: %s", attn_last_error());
            for (i = 0; i < (int)c.m.p.total; i++) c.m.p.data[i] += (attn_float)(0.3 * attn_rng_normal(&r, 0, 1)); /* biases, gains off 0 and 1 */
            for (stride = 1; stride <= cf.ncon; stride += cf.ncon - 1) { /* a sliding series, then separate windows */
                c.nb = 4; c.stride = stride;
                len = (c.nb - 1) * stride + cf.ncon;
                c.tok = (int *)malloc(sizeof(int) * (size_t)len);
                for (i = 0; i < len; i++) c.tok[i] = (int)attn_rng_int(&r, (uint32_t)cf.d);
                c.y = t_alloc((size_t)c.nb * cf.d);
                c.cache = t_alloc(attn_cisformer_cache_floats(&c.m, c.nb));
                c.wb = attn_cisformer_work_bytes(&c.m, c.nb);
                c.work = malloc(c.wb);
                cis_f(&c);
                for (i = 0; i < c.nb; i++) {
                    double y[CD];
                    int e;
                    naive_cisformer(&c.m, c.tok + (size_t)i * stride, y);
                    for (e = 0; e < cf.d; e++) worst = fmax(worst, fabs(y[e] - c.y[i * cf.d + e]) / (1 + fabs(y[e])));
                }
                CHECK(worst <= 1e3 * T_EPS, "cisformer %s vec %d stride %d: forward differs from the naive bilayer by %.3g",
                      attn_kind_get(cf.kind)->name, v, stride, worst);
                if (T_DOUBLE || (k != 2 && v == 0)) { /* Cog's weights jump at s = 0: float64 only, as in the attention tests */
                    t_var tv[1];
                    tv[0].name = "params"; tv[0].x = c.m.p.data; tv[0].g = c.m.p.gdata; tv[0].n = c.m.p.total;
                    snprintf(what, sizeof what, "cisformer %s vec %d stride %d", attn_kind_get(cf.kind)->name, v, stride);
                    t_gradcheck(what, cis_f, cis_b, &c, c.y, (size_t)c.nb * cf.d, tv, 1);
                }
                free(c.tok); free(c.y); free(c.cache); free(c.work);
            }
            attn_cisformer_free(&c.m);
        }
}

/* The fused backward + SGD step against zero_grad + backward + attn_sgd_step, over three steps (the
   first without momentum), both starting each step from the same weights and velocities: the new
   velocities agree up to rounding relative to the step's largest (the per-window gradients of a
   perturbed model reach far beyond 1), the weights relative to 1 + |w|, and the gradient block is
   never touched. Wrong update order (a weight stepped before a product that reads it) changes the
   update by O(lr), far above the tolerance. */
static void test_cisformer_backward_sgd(void)
{
    static const attn_kind kinds[2] = {ATTN_SOFTMAX, ATTN_EXPRESSIVE};
    static const int dims[3][3] = {{3, 5, 1}, {16, 6, 1}, {16, 6, 3}}; /* d, ncon, nb: scalar tails, whole vectors, a batch */
    attn_rng r;
    int v, k, s;
    attn_rng_seed(&r, 41, 0);
    for (v = 0; v <= ATTN_CIS_LN_GAINS + 1; v++) /* the last: the LN bias with q, k from the raw input */
        for (k = 0; k < 2; k++)
            for (s = 0; s < 3; s++) {
                attn_cisformer_config cf = {0};
                attn_cisformer a, b;
                attn_rng ra, rb;
                attn_float *va, *vb, *y, *dy, *cache;
                int *tok, nb = dims[s][2], step, i, len;
                size_t wb, j, total;
                void *work;
                double worst = 0;
                int untouched = 1;
                cf.d = dims[s][0]; cf.ncon = dims[s][1]; cf.kind = kinds[k]; cf.scale = 1; cf.init_uniform = 1;
                cf.vec = (attn_cis_vec)(v > ATTN_CIS_LN_GAINS ? ATTN_CIS_LN_BIAS : v); cf.qk_raw = v > ATTN_CIS_LN_GAINS;
                attn_rng_seed(&ra, 9, 1); rb = ra;
                CHECK(attn_cisformer_init(&a, &cf, &ra) == ATTN_OK && attn_cisformer_init(&b, &cf, &rb) == ATTN_OK, "init: %s", attn_last_error());
                total = a.p.total;
                for (i = 5; i < 8; i += 2) /* the biases and gains off 0 and 1; the matrices as drawn, so the steps stay small */
                    for (j = 0; j < attn_tensor_numel(&a.p.value[i]); j++) a.p.value[i].data[j] += (attn_float)(0.3 * attn_rng_normal(&r, 0, 1));
                for (j = 0; j < total; j++) b.p.gdata[j] = 7;
                va = t_alloc(total); vb = t_alloc(total);
                for (j = 0; j < total; j++) va[j] = (attn_float)attn_rng_normal(&r, 0, 1); /* ignored at step 0 */
                len = nb + cf.ncon - 1;
                tok = (int *)malloc(sizeof(int) * (size_t)len);
                y = t_alloc((size_t)nb * cf.d); dy = t_alloc((size_t)nb * cf.d);
                cache = t_alloc(attn_cisformer_cache_floats(&a, nb));
                wb = attn_cisformer_work_bytes(&a, nb);
                work = malloc(wb);
                for (step = 0; step < 3; step++) {
                    double dv = 0, eu = 0, ev = 0;
                    memcpy(b.p.data, a.p.data, sizeof(attn_float) * total);
                    memcpy(vb, va, sizeof(attn_float) * total);
                    for (i = 0; i < len; i++) tok[i] = (int)attn_rng_int(&r, (uint32_t)cf.d);
                    CHECK(attn_cisformer_forward(&a, y, cache, attn_cisformer_cache_floats(&a, nb), tok, 1, nb, work, wb) == ATTN_OK, "forward: %s", attn_last_error());
                    for (i = 0; i < nb * cf.d; i++) dy[i] = 2 * (y[i] - (i % cf.d == tok[i / cf.d + cf.ncon - 1] ? 1 : 0)) / (attn_float)nb; /* the paper's loss */
                    attn_params_zero_grad(&a.p);
                    attn_cisformer_backward(&a, dy, cache, attn_cisformer_cache_floats(&a, nb), nb, work, wb);
                    attn_sgd_step(&a.p, va, (attn_float)0.02, (attn_float)0.8, step);
                    attn_cisformer_forward(&b, y, cache, attn_cisformer_cache_floats(&b, nb), tok, 1, nb, work, wb);
                    CHECK(attn_cisformer_backward_sgd(&b, dy, cache, attn_cisformer_cache_floats(&b, nb), nb, vb, (attn_float)0.02, (attn_float)0.8, step, work, wb) == ATTN_OK,
                          "backward_sgd: %s", attn_last_error());
                    for (i = 0; i < a.p.count; i++) /* the tensors; the alignment padding between them is no parameter */
                        for (j = a.p.offset[i]; j < a.p.offset[i] + attn_tensor_numel(&a.p.value[i]); j++) {
                            eu = fmax(eu, fabs(a.p.data[j] - b.p.data[j]) / (1 + fabs(a.p.data[j])));
                            dv = fmax(dv, fabs(va[j])); ev = fmax(ev, fabs(va[j] - vb[j]));
                            untouched &= b.p.gdata[j] == 7;
                        }
                    worst = fmax(worst, fmax(eu, ev / dv));
                }
                CHECK(worst <= 1e2 * T_EPS && untouched, "cisformer %s vec %d d %d nb %d: the fused SGD backward's steps differ by %.3g "
                      "from backward + attn_sgd_step%s", attn_kind_get(cf.kind)->name, v, cf.d, nb, worst,
                      untouched ? "" : "; it wrote the gradient block");
                CHECK(attn_cisformer_backward_sgd(&b, dy, cache, attn_cisformer_cache_floats(&b, nb), nb, NULL, 1, 1, 1, work, wb) == ATTN_ERR_ARG, "backward_sgd without a velocity");
                free(tok); free(y); free(dy); free(cache); free(work); free(va); free(vb);
                attn_cisformer_free(&a); attn_cisformer_free(&b);
            }
}

/* The two initialisations: N(0, 1/fan_in) and U(+-1/sqrt(fan_in)) (variance 1/(3 fan_in)); biases 0. */
static void test_cisformer_init(void)
{
    int u;
    attn_rng r;
    attn_rng_seed(&r, 6, 0);
    for (u = 0; u < 2; u++) {
        attn_cisformer_config cf = {0};
        attn_cisformer m;
        const attn_float *W1;
        double var = 0, mx = 0, bmax = 0;
        size_t i, n;
        cf.d = 16; cf.ncon = 8; cf.kind = ATTN_SOFTMAX; cf.scale = 1; cf.init_uniform = u;
        attn_cisformer_init(&m, &cf, &r);
        W1 = m.p.value[3].data; /* fan_in d = 16 */
        n = attn_tensor_numel(&m.p.value[3]);
        for (i = 0; i < n; i++) { var += (double)W1[i] * W1[i] / n; mx = fmax(mx, fabs(W1[i])); }
        for (i = 0; i < attn_tensor_numel(&m.p.value[5]); i++) bmax = fmax(bmax, fabs(m.p.value[5].data[i]));
        CHECK(fabs(var * 16 * (u ? 3 : 1) - 1) < 0.1 && (!u || mx <= 0.25) && bmax == 0,
              "cisformer init %s: W1 variance x fan_in = %.3f (expected %s), max |w| %.3f, max |b| %g", u ? "uniform" : "normal", var * 16,
              u ? "1/3" : "1", mx, bmax);
        attn_cisformer_free(&m);
    }
}

static void test_cisformer_bad_input(void)
{
    attn_cisformer_config cf = {0};
    attn_cisformer m;
    attn_rng r;
    int tok[8] = {0, 1, 2, 0, 1, 2, 0, 1};
    attn_float y[3] = {7, 7, 7}, *cache;
    void *work;
    size_t wb;
    attn_rng_seed(&r, 5, 0);
    cf.d = 1; cf.ncon = 4; cf.kind = ATTN_SOFTMAX;
    CHECK(attn_cisformer_init(&m, &cf, &r) == ATTN_ERR_SHAPE, "d = 1 refused");
    cf.d = 3; cf.kind = ATTN_HYLA;
    CHECK(attn_cisformer_init(&m, &cf, &r) == ATTN_ERR_ARG, "a head-mixing kind refused");
    cf.kind = ATTN_EXPRESSIVE; cf.scale = 1;
    CHECK(attn_cisformer_init(&m, &cf, &r) == ATTN_OK, "init");
    cache = t_alloc(attn_cisformer_cache_floats(&m, 1));
    wb = attn_cisformer_work_bytes(&m, 1);
    work = malloc(wb);
    tok[2] = 3;
    CHECK(attn_cisformer_forward(&m, y, cache, attn_cisformer_cache_floats(&m, 1), tok, 4, 1, work, wb) == ATTN_ERR_ARG && y[0] == 7, "a token out of range refused, nothing written");
    tok[2] = 2;
    CHECK(attn_cisformer_forward(&m, y, cache, attn_cisformer_cache_floats(&m, 1), tok, 4, 1, work, wb - 1) == ATTN_ERR_ARG && y[0] == 7, "a short workspace refused");
    CHECK(attn_cisformer_forward(&m, y, cache, attn_cisformer_cache_floats(&m, 1), tok, 0, 1, work, wb) == ATTN_ERR_SHAPE, "stride 0 refused");
    CHECK(attn_cisformer_forward(&m, y, cache, attn_cisformer_cache_floats(&m, 1), tok, 4, 1, work, wb) == ATTN_OK, "a valid call: %s", attn_last_error());
    free(cache); free(work);
    attn_cisformer_free(&m);
}

/* Checkpoints: a round trip through memory and a file gives the same parameters and the same
   output; every single-byte corruption and every truncation of a record is refused with
   ATTN_ERR_FORMAT and leaves the destination as it was; a record for another model or size is
   refused; a float64 record reads into either build. */
static void test_checkpoints(void)
{
    attn_cisformer_config cf = {0};
    attn_cisformer m, back;
    attn_checkpoint_header h;
    attn_rng r;
    int32_t cfgw[2] = {3, -7};
    attn_param_desc td[2] = {{"a", 1, {2}, 0, ATTN_PARAM_ZERO, 0}, {"b", 2, {1, 3}, 0, ATTN_PARAM_ZERO, 0}}, other[2] = {{"a", 1, {2}, 0, ATTN_PARAM_ZERO, 0}, {"b", 2, {3, 1}, 0, ATTN_PARAM_ZERO, 0}};
    const char *names[1] = {"softmax"};
    attn_params tp, tq, to;
    unsigned char rec[1024];
    size_t n, i;
    int tok[8] = {0, 1, 2, 3, 0, 1, 2, 3}, bad = 0, e;
    const char *path = "build/test_checkpoint.ckpt";
    FILE *f;
    CHECK(attn_params_init(&tp, td, 2) == ATTN_OK && attn_params_init(&tq, td, 2) == ATTN_OK && attn_params_init(&to, other, 2) == ATTN_OK,
          "toy parameters");
    for (i = 0; i < tp.total; i++) tp.data[i] = (attn_float)(1.5 * (double)i - 3), tq.data[i] = 9;
    n = attn_checkpoint_bytes(2, 1, &tp);
    CHECK(n == 52 + 8 + 32 + 2 * 60 + tp.total * sizeof(attn_float) + 8 && n <= sizeof rec, "record size %lu", (unsigned long)n);
    CHECK(attn_checkpoint_write(rec, n, "toy", cfgw, 2, names, 1, &tp) == ATTN_OK, "write: %s", attn_last_error());
    CHECK(attn_checkpoint_read(&h, &tq, rec, n) == ATTN_OK && h.version == 2 && !strcmp(h.model, "toy") && h.nconfig == 2 &&
              h.config[0] == 3 && h.config[1] == -7 && h.nnames == 1 && !strcmp(h.names[0], "softmax") && h.ntensors == 2 &&
              h.count == tp.total && h.float_bytes == (int)sizeof(attn_float) && t_params_equal(&tq, &tp),
          "memory round trip: %s", attn_last_error());
    for (i = 0; i < tq.total; i++) tq.data[i] = 9;
    for (i = 0; i < n; i++) { /* any flipped bit is caught: by a field check or by the hash */
        int b;
        for (b = 0; b < 8; b++) {
            rec[i] ^= (unsigned char)(1 << b);
            bad += attn_checkpoint_read(&h, &tq, rec, n) != ATTN_ERR_FORMAT;
            rec[i] ^= (unsigned char)(1 << b);
        }
    }
    for (i = 0; i < tq.total; i++) bad += tq.data[i] != 9;
    CHECK(bad == 0, "%d of %lu single-bit corruptions were not refused, or wrote", bad, (unsigned long)(8 * n));
    for (i = 0, bad = 0; i < n; i++) bad += attn_checkpoint_read(&h, &tq, rec, i) != ATTN_ERR_FORMAT;
    for (i = 0; i < tq.total; i++) bad += tq.data[i] != 9;
    CHECK(bad == 0, "%d truncations were not refused, or wrote", bad);
    /* the same count in another layout (b [3, 1] instead of [1, 3]), or another name: refused */
    CHECK(to.total == tp.total && attn_checkpoint_read(&h, &to, rec, n) == ATTN_ERR_SHAPE && strstr(attn_last_error(), "tensor 1"),
          "a destination of another layout with the same count refused: %s", attn_last_error());
    other[1].shape[0] = 1; other[1].shape[1] = 3; other[1].name = "c";
    attn_params_free(&to);
    CHECK(attn_params_init(&to, other, 2) == ATTN_OK && attn_checkpoint_read(&h, &to, rec, n) == ATTN_ERR_SHAPE,
          "a destination with another tensor name refused");
    for (i = 0, bad = 0; i < to.total; i++) bad += to.data[i] != 0;
    CHECK(bad == 0, "the refused reads wrote");
    CHECK(attn_checkpoint_write(rec, n - 1, "toy", cfgw, 2, names, 1, &tp) == ATTN_ERR_ARG, "a short buffer refused");
    CHECK(attn_checkpoint_write(rec, n, "a-name-of-17-chrs", cfgw, 2, names, 1, &tp) == ATTN_ERR_ARG, "a long model name refused");
    { /* a format-1 float64 record (as 0.1.0's double build wrote it) reads into this build, rounded */
        static const unsigned char hdr[12] = {'A', 'T', 'T', 'N', 'C', 'K', 'P', 'T', 1, 0, 0, 0};
        unsigned char d64[44 + 16 * 8 + 8];
        attn_param_desc one[1] = {{"x", 1, {16}, 0, ATTN_PARAM_ZERO, 0}};
        attn_params p1;
        double x = 0.1;
        uint64_t bits, hs = 14695981039346656037ull;
        memset(d64, 0, sizeof d64);
        memcpy(d64, hdr, 12);
        memcpy(d64 + 12, "f64", 3);
        d64[32] = 8; d64[36] = 16; /* float bytes 8, count 16 */
        memcpy(&bits, &x, 8);
        for (e = 0; e < 8; e++) d64[44 + e] = (unsigned char)(bits >> (8 * e));
        for (e = 0; e < 44 + 16 * 8; e++) hs = (hs ^ d64[e]) * 1099511628211ull;
        for (e = 0; e < 8; e++) d64[44 + 16 * 8 + e] = (unsigned char)(hs >> (8 * e));
        CHECK(attn_params_init(&p1, one, 1) == ATTN_OK && p1.total == 16, "one tensor of 16");
        CHECK(attn_checkpoint_read(&h, &p1, d64, sizeof d64) == ATTN_OK && p1.data[0] == (attn_float)0.1 && h.float_bytes == 8 &&
                  h.version == 1 && h.ntensors == 0,
              "a format-1 float64 record: %s", attn_last_error());
        attn_params_free(&p1);
    }
    /* the cisformer through a file */
    attn_rng_seed(&r, 8, 0);
    cf.d = 4; cf.ncon = 5; cf.kind = ATTN_EXPRESSIVE; cf.scale = 0.75f; cf.vec = ATTN_CIS_LN_GAINS; cf.init_uniform = 1;
    CHECK(attn_cisformer_init(&m, &cf, &r) == ATTN_OK, "init");
    CHECK(attn_cisformer_save(&m, path) == ATTN_OK, "save: %s", attn_last_error());
    CHECK(attn_cisformer_load(&back, path) == ATTN_OK, "load: %s", attn_last_error());
    if (attn_last_status() == ATTN_OK || back.p.data) {
        attn_float y1[4 * 4], y2[4 * 4], *cache = t_alloc(attn_cisformer_cache_floats(&m, 4));
        size_t wb = attn_cisformer_work_bytes(&m, 4);
        void *work = malloc(wb);
        attn_cisformer_forward(&m, y1, cache, attn_cisformer_cache_floats(&m, 4), tok, 1, 4, work, wb);
        attn_cisformer_forward(&back, y2, cache, attn_cisformer_cache_floats(&back, 4), tok, 1, 4, work, wb);
        CHECK(back.cfg.d == 4 && back.cfg.ncon == 5 && back.cfg.kind == ATTN_EXPRESSIVE && back.cfg.scale == 0.75f &&
                  back.cfg.vec == ATTN_CIS_LN_GAINS && back.p.total == m.p.total && t_params_equal(&back.p, &m.p) &&
                  !memcmp(y1, y2, sizeof y1),
              "the loaded cisformer differs from the saved one");
        attn_cisformer_free(&back);
        free(cache); free(work);
    }
    CHECK(attn_checkpoint_save(path, "toy", cfgw, 2, names, 1, &tp) == ATTN_OK && attn_cisformer_load(&back, path) == ATTN_ERR_FORMAT,
          "another model's checkpoint refused");
    f = fopen(path, "wb");
    if (f) { fputs("not a checkpoint", f); fclose(f); }
    CHECK(attn_cisformer_load(&back, path) == ATTN_ERR_FORMAT, "a text file refused");
    CHECK(attn_cisformer_load(&back, "build/no-such-dir/x.ckpt") == ATTN_ERR_IO, "a missing file refused");
    remove(path);
    attn_cisformer_free(&m);
    attn_params_free(&tp); attn_params_free(&tq); attn_params_free(&to);
}

/* Whether every value of p is the fixtures' ((i mod 97) - 48) / 64, i its place in a float32 block
   (every tensor starting ATTN_ALIGN-aligned). */
static int fixture_values(const attn_params *p)
{
    size_t i, at = 0, n;
    int k;
    for (k = 0; k < p->count; k++) {
        n = attn_tensor_numel(&p->value[k]);
        for (i = 0; i < n; i++)
            if (p->value[k].data[i] != (attn_float)((int)((at + i) % 97) - 48) / 64) return 0;
        at += (n * 4 + ATTN_ALIGN - 1) / ATTN_ALIGN * ATTN_ALIGN / 4;
    }
    return p->count > 0;
}

/* Format-1 files written by 0.1.0 (tests/data) load bit for bit, and save again as format 2; a kind
   registered outside the header is saved by its name; a name not known here is refused. */
static void test_checkpoint_compat(void)
{
    const char *path = "build/test_compat.ckpt";
    attn_transformer t, t2;
    attn_cisformer c, c2;
    attn_seq2seq q, q2;
    attn_kind_info row;
    attn_kind mine;
    attn_rng r;
    int ok, ok2 = 0;
    CHECK((ok = attn_transformer_load(&t, "tests/data/transformer_v1.ckpt") == ATTN_OK), "transformer_v1: %s", attn_last_error());
    if (ok) {
        CHECK(t.cfg.vocab == 11 && t.cfg.d == 8 && t.cfg.layers == 3 && t.cfg.t5 == 1 && t.cfg.kinds[0] == ATTN_COG &&
                  t.cfg.kinds[1] == ATTN_HYLA_PLUS && t.cfg.kinds[2] == ATTN_DIFFERENTIAL && fixture_values(&t.p),
              "transformer_v1: configuration, kinds and every value");
        ok2 = 0;
        CHECK(attn_transformer_save(&t, path) == ATTN_OK && (ok2 = attn_transformer_load(&t2, path) == ATTN_OK), "resaved: %s", attn_last_error());
        if (ok2) {
            CHECK(!memcmp(&t2.cfg, &t.cfg, sizeof t.cfg) && fixture_values(&t2.p), "transformer: format 2 holds what format 1 did");
            attn_transformer_free(&t2);
        }
        attn_transformer_free(&t);
    }
    CHECK((ok = attn_transformer_load(&t, "tests/data/transformer_v2.ckpt") == ATTN_OK) && fixture_values(&t.p) && t.cfg.kinds[1] == ATTN_HYLA_PLUS,
          "transformer_v2 (format 2, float32, in this build's floats): %s", attn_last_error());
    if (ok) attn_transformer_free(&t);
    CHECK((ok = attn_cisformer_load(&c, "tests/data/cisformer_v1.ckpt") == ATTN_OK), "cisformer_v1: %s", attn_last_error());
    if (ok) {
        CHECK(c.cfg.d == 4 && c.cfg.ncon == 6 && c.cfg.kind == ATTN_EXPRESSIVE && c.cfg.vec == ATTN_CIS_LN_GAINS && fixture_values(&c.p),
              "cisformer_v1: configuration, kind and every value");
        ok2 = 0;
        CHECK(attn_cisformer_save(&c, path) == ATTN_OK && (ok2 = attn_cisformer_load(&c2, path) == ATTN_OK), "resaved: %s", attn_last_error());
        if (ok2) {
            CHECK(!memcmp(&c2.cfg, &c.cfg, sizeof c.cfg) && fixture_values(&c2.p), "cisformer: format 2 holds what format 1 did");
            attn_cisformer_free(&c2);
        }
        attn_cisformer_free(&c);
    }
    CHECK((ok = attn_seq2seq_load(&q, "tests/data/seq2seq_v1.ckpt") == ATTN_OK), "seq2seq_v1: %s", attn_last_error());
    if (ok) {
        CHECK(q.cfg.src_vocab == 13 && q.cfg.dec_layers == 2 && q.cfg.kind == ATTN_SIGMOID && fixture_values(&q.p),
              "seq2seq_v1: configuration, kind and every value");
        ok2 = 0;
        CHECK(attn_seq2seq_save(&q, path) == ATTN_OK && (ok2 = attn_seq2seq_load(&q2, path) == ATTN_OK), "resaved: %s", attn_last_error());
        if (ok2) {
            CHECK(!memcmp(&q2.cfg, &q.cfg, sizeof q.cfg) && fixture_values(&q2.p), "seq2seq: format 2 holds what format 1 did");
            attn_seq2seq_free(&q2);
        }
        attn_seq2seq_free(&q);
    }
    /* a registered kind travels by name */
    row = *attn_kind_get(ATTN_SOFTMAX);
    row.name = "ckpt_test_softmax"; row.code_name = NULL;
    mine = attn_kind_register(&row);
    CHECK((int)mine >= ATTN_KIND_COUNT, "register: %s", attn_last_error());
    if ((int)mine >= ATTN_KIND_COUNT) {
        attn_transformer_config tc = attn_transformer_config_default();
        tc.vocab = tc.out = 7; tc.d = 8; tc.layers = 3; tc.heads = 2; tc.dk = tc.dv = 4; tc.mlp = 8; tc.max_T = 4;
        tc.kinds[0] = mine; tc.kinds[1] = ATTN_EXPRESSIVE; tc.kinds[2] = mine;
        attn_rng_seed(&r, 5, 5);
        CHECK(attn_transformer_init(&t, &tc, &r) == ATTN_OK && attn_transformer_save(&t, path) == ATTN_OK, "save: %s", attn_last_error());
        CHECK((ok = attn_transformer_load(&t2, path) == ATTN_OK) && t2.cfg.kinds[0] == mine && t2.cfg.kinds[1] == ATTN_EXPRESSIVE &&
                  t2.cfg.kinds[2] == mine && t_params_equal(&t2.p, &t.p),
              "a registered kind saved and loaded by name: %s", attn_last_error());
        if (ok) attn_transformer_free(&t2);
        {   /* the same record with a kind name this program does not know */
            void *buf;
            size_t bytes;
            attn_checkpoint_header h;
            const char *names[2] = {"no_such_kind", "ea"};
            if (attn_checkpoint_load_file(path, &buf, &bytes, &h) == ATTN_OK) {
                free(buf);
                CHECK(h.nnames == 2 && !strcmp(h.names[0], "ckpt_test_softmax") && !strcmp(h.names[1], "ea") && h.config[30] == 0 &&
                          h.config[31] == 1 && h.config[32] == 0,
                      "kinds stored as indices into the names");
                CHECK(attn_checkpoint_save(path, "transformer", h.config, h.nconfig, names, 2, &t.p) == ATTN_OK, "rewrite");
                memset(&t2, 0x5A, sizeof t2);
                CHECK(attn_transformer_load(&t2, path) == ATTN_ERR_FORMAT && strstr(attn_last_error(), "no_such_kind"),
                      "an unknown kind name refused: %s", attn_last_error());
            }
        }
        {   /* each name's fingerprint (its kind's output on a fixed probe) after the modifiers' words: a file
               whose kind of that name computed something else (the probe's sum 1% off) is refused; one off
               by another build's rounding (1e-6) loads */
            void *buf;
            size_t bytes;
            attn_checkpoint_header h;
            const char *names[2] = {"ckpt_test_softmax", "ea"};
            static const double off[2] = {1e-6, 1e-2};
            int fp = 30 + 2 * 3 + 17, k;
            CHECK(attn_transformer_save(&t, path) == ATTN_OK, "save: %s", attn_last_error());
            if (attn_checkpoint_load_file(path, &buf, &bytes, &h) == ATTN_OK) {
                int32_t saved = h.config[fp];
                free(buf);
                CHECK(h.nconfig == fp + 4 && h.config[fp] && h.config[fp + 1] && h.config[fp + 2] && h.config[fp + 3],
                      "two fingerprint words per name (%d words)", h.nconfig);
                for (k = 0; k < 2; k++) {
                    float f;
                    memcpy(&f, &saved, 4);
                    f *= (float)(1 + off[k]);
                    memcpy(&h.config[fp], &f, 4);
                    CHECK(attn_checkpoint_save(path, "transformer", h.config, h.nconfig, names, 2, &t.p) == ATTN_OK,
                          "rewrite");
                    memset(&t2, 0x5A, sizeof t2);
                    if (k == 0) {
                        CHECK((ok = attn_transformer_load(&t2, path) == ATTN_OK) && t2.cfg.kinds[0] == mine,
                              "a fingerprint off by rounding loads: %s", attn_last_error());
                        if (ok) attn_transformer_free(&t2);
                    } else
                        CHECK(attn_transformer_load(&t2, path) == ATTN_ERR_FORMAT &&
                                  strstr(attn_last_error(), "computes something else") &&
                                  strstr(attn_last_error(), "ckpt_test_softmax"),
                              "a same-name kind with another formula refused: %s", attn_last_error());
                }
            }
        }
        attn_transformer_free(&t);
    }
    remove(path);
}

/* ---- the transformer ---- */

/* The data of the occurrence-th tensor called name (layer l's, for the per-layer names), or NULL. */
static const attn_float *tf_param(const attn_transformer *m, const char *name, int occurrence)
{
    int i;
    for (i = 0; i < m->p.count; i++)
        if (!strcmp(m->p.name[i], name) && occurrence-- == 0) return m->p.value[i].data;
    return NULL;
}

/* out = Norm(x) of a row of d values, LayerNorm (with b) or RMSNorm, eps 1e-5 (double). */
static void tf_naive_norm(const attn_transformer_config *cf, const double *x, const attn_float *g, const attn_float *b, double *out)
{
    double mu = 0, var = 0;
    int e, d = cf->d, ln = cf->norm == ATTN_NORM_LAYER;
    for (e = 0; e < d && ln; e++) mu += x[e] / d;
    for (e = 0; e < d; e++) var += (x[e] - mu) * (x[e] - mu) / d;
    for (e = 0; e < d; e++) out[e] = (x[e] - mu) / sqrt(var + cf->eps) * g[e] + (ln ? b[e] : 0);
}

/* y [R, out] of one sequence (tokens tok, or dense inputs x [T, in_dim]) by the formulas of the
   attn_transformer comment, for softmax attention, learned or no positions, with or without T5
   biases and QK-norm, in double. */
#define TT 6  /* the reference's largest T */
#define TD 8  /* d, H dk, H dv, mlp, out */
static void naive_transformer(const attn_transformer *m, const int *tok, const attn_float *xin, int T, double *y)
{
    const attn_transformer_config *cf = &m->cfg;
    const attn_float *E = tf_param(m, "E", 0), *P = tf_param(m, "P", 0);
    double x[TT][TD], a[TT][TD], q[TT][TD], k[TT][TD], v[TT][TD], o[TT][TD], u[TD], u2[TD], f[TD];
    double scale = cf->scale ? cf->scale : 1 / sqrt((double)cf->dk);
    int t, e, l, h, j, R = cf->readout ? cf->readout : T, d = cf->d;
    for (t = 0; t < T; t++) {
        double in[TD];
        for (e = 0; e < cf->in_dim; e++) in[e] = xin[t * cf->in_dim + e];
        if (xin) t_linear(x[t], tf_param(m, "Win", 0), tf_param(m, "bin", 0), in, d, cf->in_dim);
        for (e = 0; e < d; e++) x[t][e] = (xin ? x[t][e] : E[tok[t] * d + e]) + (P ? P[t * d + e] : 0);
    }
    for (l = 0; l < cf->layers; l++) {
        for (t = 0; t < T; t++) {
            tf_naive_norm(cf, x[t], tf_param(m, "n1g", l), tf_param(m, "n1b", l), a[t]);
            t_linear(q[t], tf_param(m, "Wq", l), tf_param(m, "bq", l), a[t], cf->heads * cf->dk, d);
            t_linear(k[t], tf_param(m, "Wk", l), tf_param(m, "bk", l), a[t], cf->heads * cf->dk, d);
            t_linear(v[t], tf_param(m, "Wv", l), tf_param(m, "bv", l), a[t], cf->heads * cf->dv, d);
            for (h = 0; cf->qk_norm && h < cf->heads; h++) { /* QK-norm: q, k = RMSNorm(row) gain, eps 1e-6 */
                double sq = 0, sk = 0;
                for (e = 0; e < cf->dk; e++) sq += q[t][h * cf->dk + e] * q[t][h * cf->dk + e] / cf->dk;
                for (e = 0; e < cf->dk; e++) sk += k[t][h * cf->dk + e] * k[t][h * cf->dk + e] / cf->dk;
                for (e = 0; e < cf->dk; e++) {
                    q[t][h * cf->dk + e] *= tf_param(m, "qnorm", l)[e] / sqrt(sq + 1e-6);
                    k[t][h * cf->dk + e] *= tf_param(m, "knorm", l)[e] / sqrt(sk + 1e-6);
                }
            }
        }
        for (t = 0; t < T; t++)
            for (h = 0; h < cf->heads; h++) {
                double s[TT], mx = -1e300, z = 0;
                int n = cf->causal ? t + 1 : T;
                for (j = 0; j < n; j++) {
                    s[j] = 0;
                    for (e = 0; e < cf->dk; e++) s[j] += scale * q[t][h * cf->dk + e] * k[j][h * cf->dk + e];
                    if (cf->t5) s[j] += tf_param(m, "t5", l)[h * cf->max_T + attn_t5_bucket(t, j, cf->max_T)];
                    mx = fmax(mx, s[j]);
                }
                for (j = 0; j < n; j++) z += (s[j] = exp(s[j] - mx));
                for (e = 0; e < cf->dv; e++) {
                    o[t][h * cf->dv + e] = 0;
                    for (j = 0; j < n; j++) o[t][h * cf->dv + e] += s[j] / z * v[j][h * cf->dv + e];
                }
            }
        for (t = 0; t < T; t++) {
            double att[TD], hm[TD], nb[TD], w[TD];
            t_linear(att, tf_param(m, "Wo", l), tf_param(m, "bo", l), o[t], d, cf->heads * cf->dv);
            for (e = 0; e < d; e++) hm[e] = x[t][e] + att[e];
            tf_naive_norm(cf, hm, tf_param(m, "n2g", l), tf_param(m, "n2b", l), nb);
            t_linear(u, tf_param(m, "W1", l), tf_param(m, "b1", l), nb, cf->mlp, d);
            if (cf->glu) t_linear(u2, tf_param(m, "W3", l), tf_param(m, "b3", l), nb, cf->mlp, d);
            for (e = 0; e < cf->mlp; e++) { /* GELU, tanh approximation, of u (or of u2, times u) */
                double z = cf->glu ? u2[e] : u[e], gz = 0.5 * z * (1 + tanh(sqrt(2 / 3.141592653589793) * (z + 0.044715 * z * z * z)));
                u[e] = cf->glu ? u[e] * gz : gz;
            }
            t_linear(w, tf_param(m, "W2", l), tf_param(m, "b2", l), u, d, cf->mlp);
            for (e = 0; e < d; e++) x[t][e] = hm[e] + w[e];
        }
    }
    for (t = T - R; t < T; t++) {
        tf_naive_norm(cf, x[t], tf_param(m, "nfg", 0), tf_param(m, "nfb", 0), f);
        t_linear(y + (size_t)(t - T + R) * cf->out, tf_param(m, "Wout", 0), tf_param(m, "bout", 0), f, cf->out, d);
    }
}

typedef struct {
    attn_transformer m;
    attn_float *y, *cache, *x; /* x: dense inputs, or NULL */
    int *tok, B, T;
    void *work;
    size_t wb;
} tf_ctx;

static void tf_f(void *p)
{
    tf_ctx *c = (tf_ctx *)p;
    attn_status st = attn_transformer_forward(&c->m, c->y, c->cache, attn_transformer_cache_floats(&c->m, c->B, c->T), c->tok, c->x, c->B, c->T, c->work, c->wb);
    if (st != ATTN_OK) CHECK(0, "transformer forward: %s", attn_last_error()); /* counted only when it fails */
}

static void tf_b(void *p, const attn_float *dy)
{
    tf_ctx *c = (tf_ctx *)p;
    attn_status st = attn_transformer_backward(&c->m, dy, c->cache, attn_transformer_cache_floats(&c->m, c->B, c->T), c->tok, c->x, c->B, c->T, c->work, c->wb);
    if (st != ATTN_OK) CHECK(0, "transformer backward: %s", attn_last_error());
}

/* Finite differences through every parameter of m on tokens [B, T] (y [B, R, width], the cache and
   work sized for them). */
static void tf_gradcheck(const char *what, attn_transformer *m, int *tok, int B, int T, attn_float *y,
                         attn_float *cache, void *work, size_t wb, size_t ny)
{
    tf_ctx g;
    t_var tv[1];
    memset(&g, 0, sizeof g);
    g.m = *m; g.B = B; g.T = T; g.tok = tok; g.y = y; g.cache = cache; g.work = work; g.wb = wb;
    tv[0].name = "params"; tv[0].x = m->p.data; tv[0].g = m->p.gdata; tv[0].n = m->p.total;
    t_gradcheck(what, tf_f, tf_b, &g, g.y, ny, tv, 1);
}

/* A small configuration: vocab 5, d 6, 2 heads of dk 4, dv 3, mlp 7, max_T 6, out 4. */
static attn_transformer_config tf_small(void)
{
    attn_transformer_config cf;
    memset(&cf, 0, sizeof cf);
    cf.vocab = 5; cf.d = 6; cf.layers = 2; cf.heads = 2; cf.dk = 4; cf.dv = 3; cf.mlp = 7; cf.max_T = 6; cf.out = 4;
    cf.eps = (attn_float)1e-5; cf.act = ATTN_ACT_GELU_TANH; cf.bias = 1; cf.causal = 1;
    cf.kinds[0] = cf.kinds[1] = ATTN_SOFTMAX;
    return cf;
}

/* y [B, T, out] of m on tokens (work sized here). */
static void tf_run(const attn_transformer *m, attn_float *y, const int *tok, int B, int T)
{
    attn_float *cache = t_alloc(attn_transformer_cache_floats(m, B, T));
    size_t wb = attn_transformer_work_bytes(m, B, T);
    void *work = malloc(wb);
    CHECK(attn_transformer_forward(m, y, cache, attn_transformer_cache_floats(m, B, T), tok, NULL, B, T, work, wb) == ATTN_OK, "forward: %s", attn_last_error());
    free(cache); free(work);
}

/* Decodes tok [T] in calls of sizes[0], sizes[1], ... tokens (the last size repeated) into kv (NULL: a
   fresh cache of T rows; else the caller's, already initialised); the largest difference of the
   logits from the full pass's rows full [T, out], or -1 when a call fails (attn_last_error says why). */
static double t_decode_diff(const attn_transformer *m, attn_transformer_kv *kv, const int *tok, int T,
                            const int *sizes, int ns, const attn_float *full, int out)
{
    size_t kb = attn_transformer_kv_bytes(m, T), db = attn_transformer_decode_work_bytes(m, T, T);
    void *kvm = kv ? NULL : malloc(kb), *dw = malloc(db);
    attn_float *step = t_alloc((size_t)T * out);
    attn_transformer_kv own;
    int i, c, n, ok = dw && (kv || (kvm && attn_transformer_kv_init(&own, m, T, kvm, kb) == ATTN_OK));
    double diff;
    if (!kv) kv = &own;
    for (i = 0, c = 0; i < T && ok; i += n, c++) {
        n = sizes[c < ns ? c : ns - 1];
        if (n > T - i) n = T - i;
        ok = attn_transformer_decode(m, kv, step + (size_t)i * out, tok + i, n, dw, db) == ATTN_OK;
    }
    diff = ok ? t_max_diff(full, step, (size_t)T * out) : -1;
    free(kvm); free(dw); free(step);
    return diff;
}

/* QK-norm in the transformer, declared once in its tensor table: the forward pass against the
   naive reference (each head's q, k rows RMS-normalised and scaled by qnorm, knorm), finite
   differences through every parameter (float64), decoding equal to the full pass with RoPE, a
   checkpoint that keeps it, and a format-2 file from before it (no qk_norm word) still loading. */
static void test_transformer_qk_norm(void)
{
    const char *path = "build/test_qk.ckpt";
    attn_transformer_config cf = tf_small();
    attn_transformer m, back;
    attn_rng r;
    attn_float y[2 * 6 * 4], *cache;
    double ref[6 * 4], worst = 0;
    int tok[12], i;
    size_t wb;
    void *work;
    attn_rng_seed(&r, 71, 0);
    cf.qk_norm = 1;
    CHECK(attn_transformer_init(&m, &cf, &r) == ATTN_OK, "init: %s", attn_last_error());
    CHECK(attn_transformer_layer_named(&m, 1, 0).qnorm && attn_transformer_layer_named(&m, 1, 0).knorm[3] == 1,
          "qnorm, knorm [dk] per layer, initialised to 1");
    for (i = 0; i < (int)m.p.total; i++) m.p.data[i] += (attn_float)(0.2 * attn_rng_normal(&r, 0, 1));
    for (i = 0; i < 12; i++) tok[i] = (int)attn_rng_int(&r, 5);
    cache = t_alloc(attn_transformer_cache_floats(&m, 2, 6));
    work = malloc(wb = attn_transformer_work_bytes(&m, 2, 6));
    CHECK(attn_transformer_forward(&m, y, cache, attn_transformer_cache_floats(&m, 2, 6), tok, NULL, 2, 6, work, wb) == ATTN_OK, "forward: %s", attn_last_error());
    naive_transformer(&m, tok + 6, NULL, 6, ref);
    for (i = 0; i < 6 * 4; i++) { /* (an fmax reduction here crashed aarch64 gcc 12's vectoriser) */
        double e = fabs(ref[i] - y[6 * 4 + i]);
        if (e > worst) worst = e;
    }
    CHECK(worst <= 1e3 * T_EPS, "QK-norm against the naive reference: %.3g", worst);
    if (T_DOUBLE) tf_gradcheck("transformer with QK-norm", &m, tok, 2, 6, y, cache, work, wb, (size_t)2 * 6 * 4);
    attn_transformer_free(&m);
    cf.pos = ATTN_POS_ROPE; cf.kinds[1] = ATTN_EXPRESSIVE; cf.kv_heads = 1;
    CHECK(attn_transformer_init(&m, &cf, &r) == ATTN_OK, "init: %s", attn_last_error());
    for (i = 0; i < (int)m.p.total; i++) m.p.data[i] += (attn_float)(0.2 * attn_rng_normal(&r, 0, 1));
    CHECK(attn_transformer_forward(&m, y, cache, attn_transformer_cache_floats(&m, 1, 6), tok, NULL, 1, 6, work, wb) == ATTN_OK, "forward: %s", attn_last_error());
    {
        static const int calls[] = {3, 1};
        worst = t_decode_diff(&m, NULL, tok, 6, calls, 2, y, 4);
        CHECK(worst >= 0 && worst < (T_DOUBLE ? 1e-12 : 1e-5), "decoding with QK-norm: %.3g (%s)", worst, attn_last_error());
    }
    CHECK(attn_transformer_save(&m, path) == ATTN_OK && attn_transformer_load(&back, path) == ATTN_OK &&
              back.cfg.qk_norm == 1 && t_params_equal(&back.p, &m.p),
          "a QK-norm checkpoint: %s", attn_last_error());
    attn_transformer_free(&back);
    attn_transformer_free(&m);
    free(cache); free(work);
    remove(path);
}

/* Score modifiers in the transformer's configuration: one layer each of ALiBi, RELBIAS (its table,
   bidirectional buckets), the soft cap and temperatures (theirs), causal: the tables where their
   layers have them, ALiBi acting on the logits, finite differences through every parameter, the
   tables included (float64), decoding in calls of 3 and 1 equal to the full pass, a checkpoint that
   keeps the modifiers, their settings and tables and gives the same logits bit for bit, and
   refusals (a modifier on the kernel kind, bad settings, an unknown modifier). The modifiers
   themselves are tested against their formulas in test_attention's test_provided_mods. */
static void test_transformer_modifiers(void)
{
    const char *path = "build/test_mods.ckpt";
    attn_transformer_config cf = tf_small();
    attn_transformer m, back;
    attn_rng r;
    attn_float y[2 * 6 * 4], y2[2 * 6 * 4], *cache;
    int tok[12], i, ok;
    size_t wb;
    void *work;
    double worst;
    attn_rng_seed(&r, 72, 0);
    cf.layers = 4;
    cf.kinds[2] = ATTN_EXPRESSIVE; cf.kinds[3] = ATTN_COG;
    cf.mods[0] = ATTN_MOD_ALIBI; cf.mods[1] = ATTN_MOD_RELBIAS; cf.mods[2] = ATTN_MOD_SOFTCAP;
    cf.mods[3] = ATTN_MOD_TEMPERATURE;
    cf.mod.cap = 3; cf.mod.buckets = 6; cf.mod.max_distance = 5; cf.mod.bidirectional = 1;
    cf.masks[0] = ATTN_MASK_WINDOW; cf.masks[2] = ATTN_MASK_WINDOW; cf.mod.span = 2; /* with ALiBi, soft cap */
    CHECK(attn_transformer_init(&m, &cf, &r) == ATTN_OK, "modifiers: init: %s", attn_last_error());
    CHECK(attn_transformer_layer_named(&m, 1, 0).relbias && attn_transformer_layer_named(&m, 1, 0).relbias[11] == 0 &&
              attn_transformer_layer_named(&m, 3, 0).temperature[1] == 1 && !attn_transformer_layer_named(&m, 0, 0).relbias &&
              !attn_transformer_layer_named(&m, 1, 0).temperature,
          "relbias [H, buckets] from 0 and temperature [H] from 1 where their layers have them");
    for (i = 0; i < (int)m.p.total; i++) m.p.data[i] += (attn_float)(0.3 * attn_rng_normal(&r, 0, 1));
    for (i = 0; i < 12; i++) tok[i] = (int)attn_rng_int(&r, 5);
    cache = t_alloc(attn_transformer_cache_floats(&m, 2, 6));
    work = malloc(wb = attn_transformer_work_bytes(&m, 2, 6));
    CHECK(attn_transformer_forward(&m, y, cache, attn_transformer_cache_floats(&m, 2, 6), tok, NULL, 2, 6, work, wb) == ATTN_OK, "forward: %s", attn_last_error());
    { /* the modifiers act: ALiBi's layer without it gives other logits */
        attn_transformer plain = m;
        plain.cfg.mods[0] = ATTN_MOD_NONE;
        tf_run(&plain, y2, tok, 2, 6);
        CHECK(t_max_diff(y, y2, 2 * 6 * 4) > 1e-3, "modifiers: ALiBi changes the logits");
        plain = m;
        plain.cfg.masks[2] = ATTN_MASK_NONE;
        tf_run(&plain, y2, tok, 2, 6);
        CHECK(t_max_diff(y, y2, 2 * 6 * 4) > 1e-3, "modifiers: the window mask changes the logits");
    }
    { /* a window mask in every layer is the model's window (the same parameters: the same draws) */
        attn_transformer_config ca = cf, cb = cf;
        attn_transformer a, b;
        attn_rng ra, rb;
        int l;
        for (l = 0; l < 4; l++) ca.mods[l] = cb.mods[l] = ATTN_MOD_NONE, ca.masks[l] = ATTN_MASK_WINDOW,
                                cb.masks[l] = ATTN_MASK_NONE;
        cb.window = 2;
        attn_rng_seed(&ra, 9, 0); attn_rng_seed(&rb, 9, 0);
        memset(&a, 0, sizeof a); memset(&b, 0, sizeof b);
        CHECK(attn_transformer_init(&a, &ca, &ra) == ATTN_OK, "window masks: init: %s", attn_last_error());
        if (a.p.data) {
            CHECK(attn_transformer_init(&b, &cb, &rb) == ATTN_OK, "window: init: %s", attn_last_error());
            if (b.p.data) {
                tf_run(&a, y, tok, 2, 6);
                tf_run(&b, y2, tok, 2, 6);
                CHECK(t_max_diff(y, y2, 2 * 6 * 4) < (T_DOUBLE ? 1e-12 : 1e-5) && t_params_equal(&a.p, &b.p),
                      "a window mask in every layer = the model's window: %.3g", t_max_diff(y, y2, 2 * 6 * 4));
                attn_transformer_free(&b);
            }
            attn_transformer_free(&a);
        }
        CHECK(attn_transformer_forward(&m, y, cache, attn_transformer_cache_floats(&m, 2, 6), tok, NULL, 2, 6, work,
                                       wb) == ATTN_OK, "forward: %s", attn_last_error());
    }
    if (T_DOUBLE) tf_gradcheck("transformer with score modifiers", &m, tok, 2, 6, y, cache, work, wb, (size_t)2 * 6 * 4);
    {
        static const int calls[] = {3, 1};
        CHECK(attn_transformer_forward(&m, y, cache, attn_transformer_cache_floats(&m, 1, 6), tok, NULL, 1, 6, work, wb) == ATTN_OK, "forward: %s", attn_last_error());
        worst = t_decode_diff(&m, NULL, tok, 6, calls, 2, y, 4);
        CHECK(worst >= 0 && worst < (T_DOUBLE ? 1e-12 : 1e-5), "decoding with score modifiers: %.3g (%s)", worst,
              attn_last_error());
    }
    ok = attn_transformer_save(&m, path) == ATTN_OK && attn_transformer_load(&back, path) == ATTN_OK;
    CHECK(ok && !memcmp(back.cfg.mods, cf.mods, sizeof cf.mods) && !memcmp(back.cfg.masks, cf.masks, sizeof cf.masks) &&
              back.cfg.mod.span == 2 && back.cfg.mod.cap == 3 && back.cfg.mod.buckets == 6 &&
              back.cfg.mod.max_distance == 5 && back.cfg.mod.bidirectional == 1 && t_params_equal(&back.p, &m.p),
          "a checkpoint with score and mask modifiers: %s", attn_last_error());
    if (ok) {
        tf_run(&back, y2, tok, 1, 6);
        CHECK(!memcmp(y, y2, sizeof(attn_float) * 6 * 4), "the reloaded model's logits, bit for bit");
        attn_transformer_free(&back);
    }
    attn_transformer_free(&m);
    { /* GPT-2's shape but for ALiBi: neither layout has a modifier */
        attn_transformer_config g = tf_small();
        g.out = g.vocab; g.dk = g.dv = 3; g.pos = ATTN_POS_LEARNED; g.mods[1] = ATTN_MOD_ALIBI;
        CHECK(attn_transformer_init(&m, &g, &r) == ATTN_OK, "init: %s", attn_last_error());
        CHECK(attn_transformer_save_hf(&m, "build/no_such_hf_dir") == ATTN_ERR_ARG &&
                  strstr(attn_last_error(), "GPT-2's layout (it has a score or mask modifier)"),
              "the Hugging Face layouts refuse score modifiers: %s", attn_last_error());
        attn_transformer_free(&m);
    }
    /* refusals */
    cf.masks[1] = ATTN_MASK_PREFIX;
    CHECK(attn_transformer_param_count(&cf) == 0 && strstr(attn_last_error(), "causal 0"), "a prefix mask in a "
          "causal model refused: %s", attn_last_error());
    cf.masks[1] = ATTN_MASK_COUNT;
    CHECK(attn_transformer_param_count(&cf) == 0 && strstr(attn_last_error(), "provided mask"), "an unknown mask "
          "refused: %s", attn_last_error());
    cf.masks[1] = ATTN_MASK_WINDOW; cf.mod.span = -1;
    CHECK(attn_transformer_param_count(&cf) == 0 && strstr(attn_last_error(), "span"), "a span of -1 refused: %s",
          attn_last_error());
    cf.masks[1] = ATTN_MASK_NONE; cf.mod.span = 2;
    cf.kinds[0] = ATTN_KERNEL;
    CHECK(attn_transformer_param_count(&cf) == 0 && strstr(attn_last_error(), "modifiers"), "a modifier on kernel refused: %s",
          attn_last_error());
    cf.kinds[0] = ATTN_SOFTMAX; cf.mod.max_distance = 1;
    CHECK(attn_transformer_param_count(&cf) == 0 && strstr(attn_last_error(), "layer 1"), "relbias's bad settings refused: %s",
          attn_last_error());
    cf.mod.max_distance = 5; cf.mod.cap = 0;
    CHECK(attn_transformer_param_count(&cf) == 0 && strstr(attn_last_error(), "cap"), "a soft cap of 0 refused: %s",
          attn_last_error());
    cf.mod.cap = 3; cf.mods[4] = (attn_mod_kind)9;
    CHECK(attn_transformer_param_count(&cf) != 0, "mods beyond the layers are not read");
    cf.mods[3] = (attn_mod_kind)9;
    CHECK(attn_transformer_param_count(&cf) == 0 && strstr(attn_last_error(), "provided"), "an unknown modifier refused: %s",
          attn_last_error());
    free(cache); free(work);
    remove(path);
}

/* Grouped-query attention in the transformer: a model with kv_heads 2 of 4 heads equals the model
   with 4 key and value heads whose Wk, Wv rows repeat each group's (parameters copied by name);
   decoding it with its smaller cache gives the full pass' rows; its checkpoint keeps kv_heads. */
static void test_transformer_gqa(void)
{
    const char *path = "build/test_gqa.ckpt";
    attn_transformer_config cf = tf_small();
    attn_transformer g, f, back;
    attn_rng r;
    attn_float yg[2 * 6 * 4], yf[2 * 6 * 4];
    int tok[12], i, l, h, j;
    double worst = 0;
    attn_rng_seed(&r, 33, 0);
    cf.heads = 4; cf.dk = 2; cf.dv = 3; cf.pos = ATTN_POS_ROPE; cf.kinds[1] = ATTN_EXPRESSIVE; cf.t5 = 1;
    cf.kv_heads = 2;
    CHECK(attn_transformer_init(&g, &cf, &r) == ATTN_OK, "init: %s", attn_last_error());
    cf.kv_heads = 0;
    CHECK(attn_transformer_init(&f, &cf, &r) == ATTN_OK, "init: %s", attn_last_error());
    for (i = 0; i < g.p.count; i++) { /* the same tensors, Wk, bk, Wv, bv repeated per group */
        int rows = g.p.value[i].shape[0], cols = g.p.value[i].ndim > 1 ? g.p.value[i].shape[1] : 1;
        int grouped = !strcmp(g.p.name[i], "Wk") || !strcmp(g.p.name[i], "bk") || !strcmp(g.p.name[i], "Wv") ||
                      !strcmp(g.p.name[i], "bv");
        int per = rows / 2; /* rows per key head */
        for (h = 0; h < (grouped ? 4 : 1); h++)
            for (j = 0; j < (grouped ? per : rows); j++)
                memcpy(f.p.value[i].data + ((size_t)h * per * grouped + j) * cols,
                       g.p.value[i].data + ((size_t)(grouped ? h / 2 * per : 0) + j) * cols, sizeof(attn_float) * cols);
    }
    for (i = 0; i < 12; i++) tok[i] = (int)attn_rng_int(&r, 5);
    tf_run(&g, yg, tok, 2, 6); tf_run(&f, yf, tok, 2, 6);
    worst = t_max_diff(yg, yf, 2 * 6 * 4); /* (an fmax loop here crashed aarch64 gcc 12's vectoriser) */
    CHECK(worst <= 64 * T_EPS, "kv_heads 2 of 4 equals 4 heads with each group's keys and values repeated: %.2e", worst);
    CHECK(attn_transformer_kv_bytes(&g, 6) < attn_transformer_kv_bytes(&f, 6), "grouped-query attention: a smaller cache");
    {
        static const int calls[] = {4, 1};
        worst = t_decode_diff(&g, NULL, tok, 6, calls, 2, yg, 4);
        CHECK(worst >= 0, "decode with kv_heads: %s", attn_last_error());
        CHECK(worst < (sizeof(attn_float) == 4 ? 1e-5 : 1e-12), "decoding with kv_heads differs from the full pass by %.3g", worst);
    }
    CHECK(attn_transformer_save(&g, path) == ATTN_OK && attn_transformer_load(&back, path) == ATTN_OK &&
              back.cfg.kv_heads == 2 && t_params_equal(&back.p, &g.p),
          "a grouped-query checkpoint: %s", attn_last_error());
    attn_transformer_free(&back);
    for (l = 0; l < 1; l++) { /* refusals */
        cf.kv_heads = 3;
        CHECK(attn_transformer_param_count(&cf) == 0 && strstr(attn_last_error(), "divide"), "kv_heads 3 of 4 refused");
        cf.kv_heads = 2; cf.kinds[0] = ATTN_HYLA;
        CHECK(attn_transformer_param_count(&cf) == 0 && strstr(attn_last_error(), "grouped-query"), "kv_heads with HYLA refused");
    }
    attn_transformer_free(&g); attn_transformer_free(&f);
    remove(path);
}

/* BigBird blocks and Linformer in the transformer: an all-visible layout is dense attention; a
   block a row cannot see does not reach it (full and shorter sequences); Linformer with E = F = I
   is dense non-causal attention; checkpoints restore both (the layout from its seed); refusals. */
static void test_transformer_sparse(void)
{
    const char *path = "build/test_sparse.ckpt";
    attn_rng r;
    int v;
    attn_rng_seed(&r, 31, 0);
    for (v = 0; v < 2; v++) { /* causal and not */
        attn_transformer_config cf = tf_small(), cd;
        attn_transformer a, b, back;
        attn_float ya[2 * 12 * 4], yb[2 * 12 * 4], y0[1 * 12 * 4], y1[1 * 12 * 4];
        int tok[2 * 12], i, T;
        double worst = 0;
        cf.max_T = 12; cf.layers = 1; cf.causal = v == 0;
        cf.bigbird_block = 2; cf.bigbird_random = 100; cf.bigbird_seed = 5; /* every block visible */
        cd = cf; cd.bigbird_block = cd.bigbird_random = 0;
        attn_rng_seed(&r, 40 + v, 0);
        CHECK(attn_transformer_init(&a, &cf, &r) == ATTN_OK, "%s", attn_last_error());
        attn_rng_seed(&r, 40 + v, 0);
        CHECK(attn_transformer_init(&b, &cd, &r) == ATTN_OK && t_params_equal(&a.p, &b.p), "the same parameters");
        for (i = 0; i < 24; i++) tok[i] = (int)attn_rng_int(&r, 5);
        tf_run(&a, ya, tok, 2, 12); tf_run(&b, yb, tok, 2, 12);
        CHECK(t_max_diff(ya, yb, 2 * 12 * 4) == 0, "BigBird with every block visible = dense attention (causal %d)", !v);
        attn_transformer_free(&a);
        /* r = 0, 6 blocks of 2: rows 6, 7 (block 3) see blocks 0, 2, 3, 4, 5, not block 1 (tokens 2, 3) */
        cf.bigbird_random = 0; cf.causal = 0;
        CHECK(attn_transformer_init(&a, &cf, &r) == ATTN_OK, "%s", attn_last_error());
        for (T = 12; T >= 8; T -= 4) { /* and T = 8: the layout's first 4 blocks */
            tf_run(&a, y0, tok, 1, T);
            tok[2] = (tok[2] + 1) % 5; tok[3] = (tok[3] + 2) % 5;
            tf_run(&a, y1, tok, 1, T);
            CHECK(t_max_diff(y0 + 6 * 4, y1 + 6 * 4, 2 * 4) == 0 && t_max_diff(y0, y1, 4 * 4) > 0,
                  "BigBird T %d: rows 6, 7 do not see block 1; rows 0 .. 3 do", T);
        }
        CHECK(attn_transformer_save(&a, path) == ATTN_OK && attn_transformer_load(&back, path) == ATTN_OK &&
                  !memcmp(&back.cfg, &a.cfg, sizeof cf),
              "BigBird checkpoint: %s", attn_last_error());
        tf_run(&a, y0, tok, 1, 12); tf_run(&back, y1, tok, 1, 12);
        CHECK(t_max_diff(y0, y1, 12 * 4) == 0, "a loaded BigBird model has the saved layout");
        attn_transformer_free(&back); attn_transformer_free(&a);
        /* Linformer, k = max_T = T, E = F = I: the dense non-causal model (parameters copied by name) */
        cf = tf_small(); cf.max_T = 6; cf.causal = 0; cf.kinds[1] = v ? ATTN_EXPRESSIVE : ATTN_SIGMOID;
        cd = cf; cf.linformer_k = 6;
        CHECK(attn_transformer_init(&a, &cf, &r) == ATTN_OK, "%s", attn_last_error());
        {
            int ia, ib, l, j;
            for (ia = ib = 0; ia < a.p.count; ia++) {
                if (!strcmp(a.p.name[ia], "Elin") || !strcmp(a.p.name[ia], "Flin")) continue;
                memcpy(a.p.value[ia].data, b.p.value[ib].data, sizeof(attn_float) * attn_tensor_numel(&b.p.value[ib]));
                ib++;
            }
            for (l = 0; l < cf.layers; l++) {
                attn_transformer_layer_tensors W = attn_transformer_layer_named(&a, l, 0);
                for (j = 0; j < 36; j++) W.Elin[j] = W.Flin[j] = (attn_float)(j % 7 == 0);
            }
        }
        attn_transformer_free(&b);
        cd.kinds[1] = cf.kinds[1];
        attn_rng_seed(&r, 40 + v, 0);
        CHECK(attn_transformer_init(&b, &cd, &r) == ATTN_OK, "%s", attn_last_error());
        {
            int ia, ib;
            for (ia = ib = 0; ia < a.p.count; ia++) {
                if (!strcmp(a.p.name[ia], "Elin") || !strcmp(a.p.name[ia], "Flin")) continue;
                memcpy(b.p.value[ib].data, a.p.value[ia].data, sizeof(attn_float) * attn_tensor_numel(&b.p.value[ib]));
                ib++;
            }
        }
        tf_run(&a, ya, tok, 2, 6); tf_run(&b, yb, tok, 2, 6);
        for (i = 0; i < 2 * 6 * 4; i++) { /* relative; written out: an fmax loop crashed aarch64 gcc 12 */
            double e = fabs((double)ya[i] - yb[i]) / (1 + fabs((double)yb[i]));
            if (e > worst || e != e) worst = e;
        }
        CHECK(worst <= 16 * T_EPS, "Linformer with E = F = I equals dense non-causal attention (%s): %.2e",
              attn_kind_get(cf.kinds[1])->name, worst);
        CHECK(attn_transformer_save(&a, path) == ATTN_OK && attn_transformer_load(&back, path) == ATTN_OK &&
                  back.cfg.linformer_k == 6 && t_params_equal(&back.p, &a.p),
              "Linformer checkpoint: %s", attn_last_error());
        {
            size_t ww = attn_transformer_weights_work_bytes(&a, 2, 6);
            attn_float *wt = t_alloc(2 * 2 * 36), *cache = t_alloc(attn_transformer_cache_floats(&a, 2, 6));
            void *work = malloc(ww + attn_transformer_work_bytes(&a, 2, 6));
            attn_transformer_forward(&a, ya, cache, attn_transformer_cache_floats(&a, 2, 6), tok, NULL, 2, 6, work, attn_transformer_work_bytes(&a, 2, 6));
            CHECK(attn_transformer_weights(&a, wt, cache, attn_transformer_cache_floats(&a, 2, 6), 2, 6, 0, work, ww) == ATTN_ERR_ARG,
                  "Linformer: the weights over T keys are refused");
            free(wt); free(cache); free(work);
        }
        attn_transformer_free(&back); attn_transformer_free(&a); attn_transformer_free(&b);
    }
    {   /* refusals */
        attn_transformer_config cf = tf_small();
        cf.linformer_k = 3;
        CHECK(attn_transformer_param_count(&cf) == 0 && strstr(attn_last_error(), "not causal"), "Linformer causal refused");
        cf.causal = 0; cf.kinds[0] = ATTN_HYLA; cf.dv = cf.dk;
        CHECK(attn_transformer_param_count(&cf) == 0 && strstr(attn_last_error(), "scored kinds"), "Linformer with HYLA refused");
        cf = tf_small(); cf.bigbird_block = -1;
        CHECK(attn_transformer_param_count(&cf) == 0, "bigbird_block -1 refused");
        cf = tf_small(); cf.bigbird_block = 2; cf.kinds[0] = ATTN_KERNEL;
        CHECK(attn_transformer_param_count(&cf) == 0 && strstr(attn_last_error(), "sparse pattern"), "BigBird with kernel refused");
        cf.kinds[0] = ATTN_SOFTMAX;
        {
            attn_transformer m;
            CHECK(attn_transformer_init(&m, &cf, &r) == ATTN_OK && attn_transformer_kv_bytes(&m, 4) == 0 &&
                      strstr(attn_last_error(), "BigBird"),
                  "BigBird: step-wise decoding refused: %s", attn_last_error());
            attn_transformer_free(&m);
        }
    }
    remove(path);
}

/* Parameter counts against the closed form, and forward against the naive reference. */
static void test_transformer_forward(void)
{
    attn_rng r;
    int variant;
    attn_rng_seed(&r, 11, 0);
    for (variant = 0; variant < 16; variant++) { /* bits: RMSNorm, no positions / no biases, non-causal and read-out 2,
                                                      dense inputs of width 3 and T5 biases */
        tf_ctx c;
        attn_transformer_config cf = tf_small();
        size_t d, want;
        double worst = 0;
        int i, b;
        memset(&c, 0, sizeof c);
        if (variant & 8) { cf.vocab = 0; cf.in_dim = 3; cf.t5 = 1; }
        cf.norm = variant & 1 ? ATTN_NORM_RMS : ATTN_NORM_LAYER;
        cf.glu = variant & 1; /* with RMSNorm, the gated MLP (Llama's) */
        cf.pos = variant & 2 ? ATTN_POS_NONE : ATTN_POS_LEARNED;
        cf.bias = !(variant & 2);
        cf.causal = !(variant & 4);
        cf.readout = variant & 4 ? 2 : 0;
        d = (size_t)cf.d;
        want = (variant & 8 ? 3 * d + (cf.bias ? d : 0) + 2 * 2 * 6 : 5 * d) + (cf.pos == ATTN_POS_LEARNED ? 6 * d : 0) + (variant & 1 ? 1 : 2) * d + 4 * d + (cf.bias ? 4 : 0)
             + 2 * (size_t)(2 * 8 * d + 2 * 6 * d + (cf.glu ? 3 : 2) * 7 * d + (variant & 1 ? 2 : 4) * d + (cf.bias ? 16 + 6 + d + 7 + d : 0) +
                            (cf.glu && cf.bias ? 7 : 0));
        CHECK(attn_transformer_param_count(&cf) == want, "transformer variant %d: %lu parameters, the closed form says %lu", variant,
              (unsigned long)attn_transformer_param_count(&cf), (unsigned long)want);
        CHECK(attn_transformer_init(&c.m, &cf, &r) == ATTN_OK, "init: %s", attn_last_error());
        CHECK(c.m.p.total >= want, "the block holds %lu floats for %lu parameters", (unsigned long)c.m.p.total, (unsigned long)want);
        for (i = 0; i < (int)c.m.p.total; i++) c.m.p.data[i] += (attn_float)(0.2 * attn_rng_normal(&r, 0, 1));
        c.B = 3; c.T = 5;
        c.tok = (int *)malloc(sizeof(int) * (size_t)c.B * c.T);
        for (i = 0; i < c.B * c.T; i++) c.tok[i] = (int)attn_rng_int(&r, 5);
        if (cf.in_dim) {
            c.x = t_alloc((size_t)c.B * c.T * cf.in_dim);
            t_randn(c.x, (size_t)c.B * c.T * cf.in_dim, &r, 1);
        }
        c.y = t_alloc((size_t)c.B * c.T * cf.out);
        c.cache = t_alloc(attn_transformer_cache_floats(&c.m, c.B, c.T));
        c.wb = attn_transformer_work_bytes(&c.m, c.B, c.T);
        c.work = malloc(c.wb);
        if (c.x) { free(c.tok); c.tok = NULL; }
        tf_f(&c);
        for (b = 0; b < c.B; b++) {
            double y[TT * TD];
            int R = cf.readout ? cf.readout : c.T;
            naive_transformer(&c.m, c.x ? NULL : c.tok + b * c.T, c.x ? c.x + b * c.T * cf.in_dim : NULL, c.T, y);
            for (i = 0; i < R * cf.out; i++) worst = fmax(worst, fabs(y[i] - c.y[b * R * cf.out + i]) / (1 + fabs(y[i])));
        }
        CHECK(worst <= 1e3 * T_EPS, "transformer variant %d: forward differs from the naive reference by %.3g", variant, worst);
        free(c.tok); free(c.x); free(c.y); free(c.cache); free(c.work);
        attn_transformer_free(&c.m);
    }
}

/* Backward against finite differences: every parameter, for kinds with and without their own
   parameters (differential, HYLA+), both norms, learned and RoPE positions, with and without
   biases, causal or not, every position or the last two read out. */
static void test_transformer_backward(void)
{
    static const attn_kind kinds[][2] = {{ATTN_SOFTMAX, ATTN_EXPRESSIVE}, {ATTN_DIFFERENTIAL, ATTN_SOFTMAX}, {ATTN_HYLA_PLUS, ATTN_LINEAR_RAW},
                                         {ATTN_COG, ATTN_SOFTMAX}, {ATTN_HYLA, ATTN_LINEAR_RMSHEAD},
                                         {ATTN_SOFTMAX, ATTN_EXPRESSIVE}, {ATTN_SOFTMAX, ATTN_COG}, {ATTN_COG, ATTN_EXPRESSIVE}};
    attn_rng r;
    int k, variant;
    attn_rng_seed(&r, 12, 0);
    for (k = 0; k < 8; k++) /* 5: BigBird blocks of 1 token (T 5 < max_T: the layout's corner); 6: Linformer; 7: MQA */
        for (variant = 0; variant < 3; variant++) {
            tf_ctx c;
            attn_transformer_config cf = tf_small();
            memset(&c, 0, sizeof c);
            if (k == 4) { /* the HYLA paper's model: dense inputs, T5 biases, attention dropout while training */
                cf.vocab = 0; cf.in_dim = 3; cf.t5 = 1; cf.dropout = (attn_float)0.3; cf.dv = cf.dk;
            }
            t_var tv[1];
            char what[128];
            int i;
            /* float64 only (make test always runs that build): in float, differences through two
               blocks are noisy at the 1-2% level, more than the tolerance, whatever the kind */
            if (!T_DOUBLE) continue;
            cf.kinds[0] = kinds[k][0]; cf.kinds[1] = kinds[k][1];
            cf.norm = variant == 1 ? ATTN_NORM_RMS : ATTN_NORM_LAYER;
            cf.pos = variant == 0 ? ATTN_POS_LEARNED : variant == 1 ? ATTN_POS_ROPE : ATTN_POS_NONE;
            cf.bias = variant != 1;
            cf.causal = variant != 2;
            cf.readout = variant == 2 ? 2 : 0;
            cf.act = variant == 1 ? ATTN_ACT_SILU : ATTN_ACT_GELU_TANH;
            cf.glu = variant == 1; /* RMSNorm, RoPE, no biases, SwiGLU, document masking: the Cogformer */
            cf.doc_mask = variant == 1 && cf.vocab > 0; /* token inputs only */
            if (k == 5) { cf.bigbird_block = 1; cf.bigbird_random = 1; cf.bigbird_seed = variant; }
            if (k == 6) { cf.linformer_k = 3; cf.causal = 0; cf.doc_mask = 0; }
            if (k == 7) cf.kv_heads = 1; /* multi-query: one key and value head for the two */
            CHECK(attn_transformer_init(&c.m, &cf, &r) == ATTN_OK, "init %s/%s variant %d: %s", attn_kind_get(cf.kinds[0])->name,
                  attn_kind_get(cf.kinds[1])->name, variant, attn_last_error());
            for (i = 0; i < (int)c.m.p.total; i++) c.m.p.data[i] += (attn_float)(0.2 * attn_rng_normal(&r, 0, 1));
            c.B = 2; c.T = 5;
            c.m.training = k == 4; c.m.seed = 77;
            if (cf.in_dim) {
                c.x = t_alloc((size_t)c.B * c.T * cf.in_dim);
                t_randn(c.x, (size_t)c.B * c.T * cf.in_dim, &r, 1);
            } else {
                c.tok = (int *)malloc(sizeof(int) * (size_t)c.B * c.T);
                for (i = 0; i < c.B * c.T; i++) c.tok[i] = (int)attn_rng_int(&r, (uint32_t)cf.vocab);
            }
            c.y = t_alloc((size_t)c.B * c.T * cf.out);
            c.cache = t_alloc(attn_transformer_cache_floats(&c.m, c.B, c.T));
            c.wb = attn_transformer_work_bytes(&c.m, c.B, c.T);
            c.work = malloc(c.wb);
            tv[0].name = "params"; tv[0].x = c.m.p.data; tv[0].g = c.m.p.gdata; tv[0].n = c.m.p.total;
            snprintf(what, sizeof what, "transformer %s/%s variant %d%s", attn_kind_get(cf.kinds[0])->name, attn_kind_get(cf.kinds[1])->name, variant,
                     k == 5 ? " BigBird" : k == 6 ? " Linformer" : k == 7 ? " multi-query" : "");
            tf_f(&c);
            t_gradcheck(what, tf_f, tf_b, &c, c.y, (size_t)c.B * (cf.readout ? cf.readout : c.T) * cf.out, tv, 1);
            free(c.tok); free(c.x); free(c.y); free(c.cache); free(c.work);
            attn_transformer_free(&c.m);
        }
}

/* The public checker over a whole model (attn_gradcheck_params): the loss sum w . y of a transformer
   passes in float64 (every parameter); a gradient made wrong in one entry per tensor fails it in
   either build; the values come back bit for bit; a NaN loss is -1. */
typedef struct {
    tf_ctx c;
    const attn_float *w; /* dL/dy [B T out] */
    int wrong;           /* add 0.5 to the first gradient entry of every tensor */
} gc_model;

static double gc_model_loss(void *ctx, int backward)
{
    gc_model *g = (gc_model *)ctx;
    size_t i, n = (size_t)g->c.B * g->c.T * g->c.m.cfg.out;
    double L = 0;
    int t;
    tf_f(&g->c);
    for (i = 0; i < n; i++) L += (double)g->w[i] * g->c.y[i];
    if (backward) {
        tf_b(&g->c, g->w);
        for (t = 0; t < g->c.m.p.count && g->wrong; t++) g->c.m.p.gdata[g->c.m.p.offset[t]] += (attn_float)0.5;
    }
    return g->wrong == 2 ? NAN : L;
}

static void test_gradcheck_params(void)
{
    attn_transformer_config cf = tf_small();
    gc_model g;
    attn_rng r;
    attn_float *w, *keep;
    double err = -1;
    int i, res;
    memset(&g, 0, sizeof g);
    attn_rng_seed(&r, 61, 0);
    cf.kinds[1] = ATTN_EXPRESSIVE;
    CHECK(attn_transformer_init(&g.c.m, &cf, &r) == ATTN_OK, "gradcheck model: %s", attn_last_error());
    g.c.B = 2; g.c.T = 5;
    g.c.tok = (int *)malloc(sizeof(int) * 10);
    for (i = 0; i < 10; i++) g.c.tok[i] = (int)attn_rng_int(&r, (uint32_t)cf.vocab);
    g.c.y = t_alloc((size_t)10 * cf.out);
    g.c.cache = t_alloc(attn_transformer_cache_floats(&g.c.m, 2, 5));
    g.c.work = malloc(g.c.wb = attn_transformer_work_bytes(&g.c.m, 2, 5));
    w = t_alloc((size_t)10 * cf.out);
    t_randn(w, (size_t)10 * cf.out, &r, 1);
    g.w = w;
    keep = t_alloc(g.c.m.p.total);
    memcpy(keep, g.c.m.p.data, sizeof(attn_float) * g.c.m.p.total);
    if (T_DOUBLE) {
        res = attn_gradcheck_params(&g.c.m.p, gc_model_loss, &g, 1, 0, 0, 0, &err);
        CHECK(res == 1 && err < 1e-6, "attn_gradcheck_params: a transformer (softmax, EA), every one of its %lu "
              "parameters, largest error %.2g", (unsigned long)g.c.m.p.total, err);
    }
    g.wrong = 1;
    res = attn_gradcheck_params(&g.c.m.p, gc_model_loss, &g, 1, 0, 0, 3, &err);
    CHECK(res == 0 && err > 0.1, "attn_gradcheck_params: a wrong gradient entry per tensor fails (%d, error %.2g)", res, err);
    CHECK(!memcmp(keep, g.c.m.p.data, sizeof(attn_float) * g.c.m.p.total), "attn_gradcheck_params leaves the values bit for bit");
    g.wrong = 2;
    CHECK(attn_gradcheck_params(&g.c.m.p, gc_model_loss, &g, 1, 0, 0, 3, &err) == -1, "attn_gradcheck_params: a NaN loss is -1");
    CHECK(attn_gradcheck_params(NULL, gc_model_loss, &g, 1, 0, 0, 3, &err) == -1, "attn_gradcheck_params: p NULL is -1");
    free(g.c.tok); free(g.c.y); free(g.c.cache); free(g.c.work); free(w); free(keep);
    attn_transformer_free(&g.c.m);
}

/* The HYLA paper's presets (Schug et al. 2025, Table A1 and its code) (dense inputs, T5 biases, GELU, LayerNorm, biases), their
   parameter counts; and flax's LeCun-normal initialisation (truncated, variance 1 / fan_in). */
static void test_transformer_hyla_presets(void)
{
    static const int sraven[3][2] = {{4, 402824}, {8, 803208}, {16, 1603976}};
    attn_transformer_config cf;
    attn_transformer m;
    attn_rng r;
    int i, l;
    memset(&cf, 0, sizeof cf);
    cf.in_dim = 5; cf.d = 128; cf.layers = 2; cf.heads = 8; cf.dk = cf.dv = 2; cf.mlp = 256; cf.max_T = 32; cf.out = 1; cf.readout = 1;
    cf.eps = (attn_float)1e-6; cf.act = ATTN_ACT_GELU_TANH; cf.bias = 1; cf.t5 = 1; cf.dropout = (attn_float)0.1; cf.init = ATTN_INIT_LECUN;
    for (l = 0; l < ATTN_MAX_LAYERS; l++) cf.kinds[l] = ATTN_HYLA;
    CHECK(attn_transformer_param_count(&cf) == 151265, "the fuzzy preset at T = 32: %lu parameters, the HYLA code gives 151,265",
          (unsigned long)attn_transformer_param_count(&cf));
    cf.in_dim = 8; cf.heads = 16; cf.dk = cf.dv = 4; cf.max_T = 36; cf.out = 8; cf.readout = 4;
    for (i = 0; i < 3; i++) {
        cf.layers = sraven[i][0];
        CHECK(attn_transformer_param_count(&cf) == (size_t)sraven[i][1], "SRAVEN width 1, %d layers: %lu parameters, the HYLA code gives %d", cf.layers,
              (unsigned long)attn_transformer_param_count(&cf), sraven[i][1]);
    }
    attn_rng_seed(&r, 15, 0);
    cf.layers = 4;
    CHECK(attn_transformer_init(&m, &cf, &r) == ATTN_OK, "init: %s", attn_last_error());
    {   /* W1 [256, 128]: variance x fan_in near 1, nothing beyond 2 / 0.8796 / sqrt(fan_in) */
        const attn_float *w = NULL;
        double v = 0, mx = 0;
        size_t n = 256 * 128, j;
        for (i = 0; i < m.p.count && !w; i++)
            if (!strcmp(m.p.name[i], "W1")) w = m.p.value[i].data;
        for (j = 0; j < n; j++) { v += (double)w[j] * w[j] / n; mx = fmax(mx, fabs(w[j])); }
        CHECK(fabs(v * 128 - 1) < 0.03 && mx * sqrt(128.0) <= 2 / 0.87962566103423978 + 1e-5,
              "LeCun-normal W1: variance x fan_in %.4f (expected 1), max |w| sqrt(fan_in) %.4f (bound 2.2737)", v * 128, mx * sqrt(128.0));
    }
    attn_transformer_free(&m);
}

/* Document masking with RoPE: two documents packed in one sequence give, row for row, what each
   gives alone (RoPE only sees relative positions, and no row sees the other document). */
static void test_transformer_documents(void)
{
    attn_transformer_config cf = tf_small();
    attn_transformer m;
    attn_rng r;
    int packed[7] = {0, 1, 2, 3, 0, 4, 2}, i, part;
    attn_float yp[7 * 4], ys[4 * 4], *cache;
    void *work;
    size_t wb;
    double worst = 0;
    attn_rng_seed(&r, 17, 0);
    cf.max_T = 8; cf.norm = ATTN_NORM_RMS; cf.pos = ATTN_POS_ROPE; cf.glu = 1; cf.act = ATTN_ACT_SILU; cf.bias = 0;
    cf.doc_mask = 1; cf.bos = 0; cf.kinds[0] = ATTN_COG;
    CHECK(attn_transformer_init(&m, &cf, &r) == ATTN_OK, "init: %s", attn_last_error());
    cache = t_alloc(attn_transformer_cache_floats(&m, 1, 7));
    wb = attn_transformer_work_bytes(&m, 1, 7);
    work = malloc(wb);
    CHECK(attn_transformer_forward(&m, yp, cache, attn_transformer_cache_floats(&m, 1, 7), packed, NULL, 1, 7, work, wb) == ATTN_OK, "packed forward: %s", attn_last_error());
    for (part = 0; part < 2; part++) {
        int start = part ? 4 : 0, len = part ? 3 : 4;
        attn_transformer_forward(&m, ys, cache, attn_transformer_cache_floats(&m, 1, len), packed + start, NULL, 1, len, work, wb);
        for (i = 0; i < len * cf.out; i++) worst = fmax(worst, fabs(ys[i] - yp[start * cf.out + i]) / (1 + fabs(ys[i])));
    }
    CHECK(worst <= 1e2 * T_EPS, "documents packed with doc_mask differ from the documents alone by %.3g", worst);
    free(cache); free(work);
    attn_transformer_free(&m);
}

/* Bad configurations and arguments: an error, nothing written. */
static void test_transformer_bad_input(void)
{
    attn_transformer_config cf = tf_small();
    attn_transformer m;
    attn_float y[4 * 6], cache[4096];
    int tok[6] = {0, 1, 2, 3, 4, 0}, i;
    void *work;
    size_t wb;
    attn_rng r;
    attn_rng_seed(&r, 13, 0);
    cf.layers = 0;
    CHECK(attn_transformer_param_count(&cf) == 0 && attn_transformer_init(&m, &cf, &r) == ATTN_ERR_SHAPE, "0 layers refused");
    cf = tf_small(); cf.kinds[1] = (attn_kind)(ATTN_KIND_COUNT + ATTN_MAX_CUSTOM_KINDS);
    CHECK(attn_transformer_init(&m, &cf, &r) == ATTN_ERR_ARG, "an unknown kind refused");
    cf = tf_small(); cf.kinds[0] = ATTN_DIFFERENTIAL; cf.dk = 3;
    CHECK(attn_transformer_init(&m, &cf, &r) == ATTN_ERR_SHAPE, "differential attention with odd dk refused");
    cf = tf_small(); cf.pos = ATTN_POS_ROPE; cf.kinds[0] = ATTN_DIFFERENTIAL; cf.dk = 6;
    CHECK(attn_transformer_init(&m, &cf, &r) == ATTN_ERR_SHAPE, "RoPE on differential sub-heads of odd width refused");
    cf = tf_small(); cf.eps = 0;
    CHECK(attn_transformer_init(&m, &cf, &r) == ATTN_ERR_ARG, "eps 0 refused");
    cf = tf_small(); cf.in_dim = 3;
    CHECK(attn_transformer_init(&m, &cf, &r) == ATTN_ERR_SHAPE, "both a vocabulary and dense inputs refused");
    cf = tf_small(); cf.kinds[0] = ATTN_KERNEL; cf.dropout = (attn_float)0.1;
    CHECK(attn_transformer_init(&m, &cf, &r) == ATTN_ERR_ARG, "dropout on kernel attention refused");
    cf = tf_small(); cf.readout = 7;
    CHECK(attn_transformer_init(&m, &cf, &r) == ATTN_ERR_SHAPE, "readout > max_T refused");
    cf = tf_small(); cf.readout = 3;
    CHECK(attn_transformer_init(&m, &cf, &r) == ATTN_OK, "init: %s", attn_last_error());
    CHECK(attn_transformer_cache_floats(&m, 1, 6) <= 4096, "the test's cache is large enough");
    wb = attn_transformer_work_bytes(&m, 1, 6);
    work = malloc(wb);
    for (i = 0; i < 24; i++) y[i] = -7;
    tok[2] = 5;
    CHECK(attn_transformer_forward(&m, y, cache, attn_transformer_cache_floats(&m, 1, 6), tok, NULL, 1, 6, work, wb) == ATTN_ERR_ARG, "a token outside the vocabulary refused");
    tok[2] = 2;
    CHECK(attn_transformer_forward(&m, y, cache, attn_transformer_cache_floats(&m, 1, 7), tok, NULL, 1, 7, work, wb) == ATTN_ERR_SHAPE, "T > max_T refused");
    CHECK(attn_transformer_forward(&m, y, cache, attn_transformer_cache_floats(&m, 1, 6), NULL, cache, 1, 6, work, wb) == ATTN_ERR_ARG, "dense inputs to a token model refused");
    CHECK(attn_transformer_forward(&m, y, cache, attn_transformer_cache_floats(&m, 1, 2), tok, NULL, 1, 2, work, wb) == ATTN_ERR_SHAPE, "T < readout refused");
    CHECK(attn_transformer_forward(&m, y, cache, attn_transformer_cache_floats(&m, 1, 6), tok, NULL, 1, 6, work, wb - 1) == ATTN_ERR_ARG, "a short workspace refused");
    for (i = 0; i < 24 && y[i] == -7; i++) {}
    CHECK(i == 24, "refused calls leave y as it was");
    CHECK(attn_transformer_forward(&m, y, cache, attn_transformer_cache_floats(&m, 1, 6), tok, NULL, 1, 6, work, wb) == ATTN_OK, "forward: %s", attn_last_error());
    free(work);
    attn_transformer_free(&m);
}

/* A saved transformer (mixed kinds, RMSNorm, RoPE) loads back with the same configuration and
   bit-identical parameters; a cisformer's record and a missing file are refused. */
static void test_transformer_checkpoint(void)
{
    const char *path = "build/test_transformer.ckpt";
    attn_transformer_config cf = tf_small();
    attn_transformer m, back;
    attn_cisformer cis;
    attn_cisformer_config cc = {0};
    attn_rng r;
    attn_rng_seed(&r, 14, 0);
    cf.layers = 3; cf.kinds[0] = ATTN_DIFFERENTIAL; cf.kinds[1] = ATTN_HYLA_PLUS; cf.kinds[2] = ATTN_EXPRESSIVE;
    cf.norm = ATTN_NORM_RMS; cf.pos = ATTN_POS_ROPE; cf.scale = (attn_float)0.7; cf.readout = 1;
    CHECK(attn_transformer_init(&m, &cf, &r) == ATTN_OK, "init: %s", attn_last_error());
    CHECK(attn_transformer_save(&m, path) == ATTN_OK, "save: %s", attn_last_error());
    CHECK(attn_transformer_load(&back, path) == ATTN_OK, "load: %s", attn_last_error());
    CHECK(!memcmp(&back.cfg, &m.cfg, sizeof cf) && back.p.total == m.p.total && t_params_equal(&back.p, &m.p),
          "the loaded transformer differs from the saved one");
    attn_transformer_free(&back);
    cc.d = 3; cc.ncon = 4; cc.scale = 1;
    CHECK(attn_cisformer_init(&cis, &cc, &r) == ATTN_OK && attn_cisformer_save(&cis, path) == ATTN_OK, "cisformer save: %s", attn_last_error());
    CHECK(attn_transformer_load(&back, path) == ATTN_ERR_FORMAT, "a cisformer's record refused");
    CHECK(attn_transformer_load(&back, "build/no-such-dir/x.ckpt") == ATTN_ERR_IO, "a missing file refused");
    remove(path);
    attn_cisformer_free(&cis);
    attn_transformer_free(&m);
}

/* A sliding window in the transformer (Beltagy et al. 2020): one wider than the sequence is plain
   attention; window 1 with dilation 2 and a global token passes finite differences (float64) and
   survives a checkpoint; decoding with it equals the full pass; bad settings are refused. */
/* Decoding with a window keeps only the window: over 96 tokens (a window of 2 x dilation 2, a global
   token, so 21 rows) the logits of every step equal the full pass' rows, with RoPE, T5 biases and
   document masks, for one token at a time and for calls of 37 tokens (run in chunks); the cache's
   size does not grow with its capacity; a rewind past the dropped rows is refused. */
static void test_transformer_window_cache(void)
{
    enum { T = 96, OUT = 4 };
    attn_rng r;
    int v;
    attn_rng_seed(&r, 23, 0);
    for (v = 0; v < 4; v++) {
        attn_transformer_config c = tf_small();
        attn_transformer m;
        attn_transformer_kv kv;
        attn_float *full = t_alloc(T * OUT), *step = t_alloc(T * OUT), *cache;
        int tok[T], i, n;
        size_t kb, db, wb;
        void *kvm, *dw, *work;
        double diff, tol = sizeof(attn_float) == 4 ? 2e-5 : 1e-12;
        c.max_T = T; c.window = 2; c.dilation = 2; c.global = v != 1;
        c.kinds[0] = v == 2 ? ATTN_COG : ATTN_SOFTMAX; c.kinds[1] = v == 3 ? ATTN_HYLA : ATTN_EXPRESSIVE;
        if (v == 3) c.dv = c.dk;
        c.pos = v == 1 ? ATTN_POS_ROPE : ATTN_POS_LEARNED;
        c.t5 = v >= 2; c.doc_mask = v == 2; c.bos = 0;
        CHECK(attn_transformer_init(&m, &c, &r) == ATTN_OK, "init: %s", attn_last_error());
        for (i = 0; i < T; i++) tok[i] = (int)attn_rng_int(&r, 5);
        cache = t_alloc(attn_transformer_cache_floats(&m, 1, T));
        work = malloc(wb = attn_transformer_work_bytes(&m, 1, T));
        attn_transformer_forward(&m, full, cache, attn_transformer_cache_floats(&m, 1, T), tok, NULL, 1, T, work, wb);
        kb = attn_transformer_kv_bytes(&m, T);
        CHECK(kb && kb == attn_transformer_kv_bytes(&m, T / 2), "the cache's size does not grow with its capacity");
        db = attn_transformer_decode_work_bytes(&m, T, T);
        kvm = malloc(kb); dw = malloc(db);
        for (n = 1; n <= 37; n += 36) { /* a token at a time; calls of 37 tokens */
            CHECK(attn_transformer_kv_init(&kv, &m, T, kvm, kb) == ATTN_OK && kv.rows < T, "kv init: %s (%d rows)",
                  attn_last_error(), kv.rows);
            diff = t_decode_diff(&m, &kv, tok, T, &n, 1, full, OUT);
            CHECK(diff >= 0, "decode: %s", attn_last_error());
            CHECK(diff < tol, "variant %d, %d tokens a call: decoding in a window's cache of %d rows differs from the full "
                  "pass by %.3g", v, n, kv.rows, diff);
        }
        kv.len = T - 3;
        CHECK(attn_transformer_decode(&m, &kv, step, tok, 1, dw, db) == ATTN_OK, "a rewind within the held rows: %s",
              attn_last_error());
        kv.len = 10;
        CHECK(attn_transformer_decode(&m, &kv, step, tok, 1, dw, db) == ATTN_ERR_ARG, "a rewind past the dropped rows refused");
        free(full); free(step); free(cache); free(work); free(kvm); free(dw);
        attn_transformer_free(&m);
    }
}

static void test_transformer_window(void)
{
    attn_transformer_config c = tf_small();
    attn_transformer m, w;
    attn_rng r;
    attn_float y1[2 * 6 * 4], y2[2 * 6 * 4], *cache; /* out 4 */
    int tok[12] = {1, 4, 0, 2, 3, 1, 3, 3, 2, 0, 2, 4}, i;
    void *work;
    size_t wb;
    double diff;
    const char *path = "build/test_window.ckpt";
    attn_rng_seed(&r, 21, 0);
    c.kinds[0] = ATTN_SOFTMAX; c.kinds[1] = ATTN_EXPRESSIVE;
    CHECK(attn_transformer_init(&m, &c, &r) == ATTN_OK, "init: %s", attn_last_error());
    c.window = c.max_T;
    attn_rng_seed(&r, 21, 0);
    CHECK(attn_transformer_init(&w, &c, &r) == ATTN_OK, "init with a window: %s", attn_last_error());
    cache = t_alloc(attn_transformer_cache_floats(&m, 2, 6));
    work = malloc(wb = attn_transformer_work_bytes(&w, 2, 6));
    attn_transformer_forward(&m, y1, cache, attn_transformer_cache_floats(&m, 2, 6), tok, NULL, 2, 6, work, wb);
    attn_transformer_forward(&w, y2, cache, attn_transformer_cache_floats(&w, 2, 6), tok, NULL, 2, 6, work, wb);
    diff = t_max_diff(y1, y2, 2 * 6 * 4);
    CHECK(diff < 1e-5, "a window wider than the sequence is plain attention (differs by %.3g)", diff);
    attn_transformer_free(&w);
    c.window = 1; c.dilation = 2; c.global = 1; /* query i sees i - 2, i, and token 0 */
    CHECK(attn_transformer_init(&w, &c, &r) == ATTN_OK, "init with a dilated window: %s", attn_last_error());
    attn_transformer_forward(&w, y2, cache, attn_transformer_cache_floats(&w, 2, 6), tok, NULL, 2, 6, work, wb);
    diff = t_max_diff(y1, y2, 2 * 6 * 4);
    CHECK(diff > 1e-3, "the dilated window changes the outputs");
    CHECK(attn_transformer_save(&w, path) == ATTN_OK, "save: %s", attn_last_error());
    attn_transformer_free(&m);
    CHECK(attn_transformer_load(&m, path) == ATTN_OK && m.cfg.window == 1 && m.cfg.dilation == 2 && m.cfg.global == 1,
          "the window survives a checkpoint: %s", attn_last_error());
    if (attn_last_status() == ATTN_OK || m.pattern) {
        attn_transformer_forward(&m, y1, cache, attn_transformer_cache_floats(&m, 2, 6), tok, NULL, 2, 6, work, wb);
        CHECK(!memcmp(y1, y2, sizeof y1), "the loaded model gives the same outputs");
        attn_transformer_free(&m);
    }
    if (T_DOUBLE) { /* finite differences through the pattern */
        tf_ctx g;
        t_var tv[1];
        memset(&g, 0, sizeof g);
        g.m = w; g.B = 2; g.T = 6; g.tok = tok; g.y = y2; g.cache = cache; g.work = work; g.wb = wb;
        for (i = 0; i < (int)w.p.total; i++) w.p.data[i] += (attn_float)(0.2 * attn_rng_normal(&r, 0, 1));
        tv[0].name = "params"; tv[0].x = w.p.data; tv[0].g = w.p.gdata; tv[0].n = w.p.total;
        tf_f(&g);
        t_gradcheck("transformer, window 1, dilation 2, one global token", tf_f, tf_b, &g, g.y, (size_t)2 * 6 * 4, tv, 1);
    }
    {   /* decoding with the pattern: rows of the full pass */
        static const int calls[] = {3, 1, 2};
        attn_transformer_forward(&w, y2, cache, attn_transformer_cache_floats(&w, 1, 6), tok, NULL, 1, 6, work, wb);
        diff = t_decode_diff(&w, NULL, tok, 6, calls, 3, y2, 4);
        CHECK(diff >= 0, "decode with a window: %s", attn_last_error());
        CHECK(diff < (sizeof(attn_float) == 4 ? 1e-5 : 1e-12), "decoding with a window differs from the full pass by %.3g", diff);
    }
    attn_transformer_free(&w);
    c.window = 0;
    CHECK(attn_transformer_init(&w, &c, &r) == ATTN_ERR_SHAPE, "dilation and global tokens without a window refused");
    c.window = 2; c.dilation = 1; c.global = 0; c.kinds[1] = ATTN_KERNEL;
    CHECK(attn_transformer_init(&w, &c, &r) != ATTN_OK, "a window on a linear-time kind refused");
    free(cache); free(work);
    remove(path);
}

/* Decoding with a key-value cache: for every kind, with learned positions, RoPE, T5 biases and
   document masks, a prompt and then one token per call give the full forward pass' logits row by
   row (to 1e-5 of the logits' scale in float32, 1e-12 in float64); rewinding the
   cache gives the same rows again; bad calls are refused. Sigmoid's shift -ln Tk counts the keys
   of a call, so a row depends on the sequence's length and decoding refuses it. */
static void test_transformer_decode(void)
{
    enum { T = 9, P = 4, V = 7 };
    static const attn_pos_kind pos[3] = {ATTN_POS_LEARNED, ATTN_POS_ROPE, ATTN_POS_NONE};
    int tok[T] = {1, 4, 0, 2, 6, 1, 0, 5, 3}, k, variant, worst_kind = -1, cases = 0;
    double worst = 0, tol = sizeof(attn_float) == 4 ? 1e-5 : 1e-12;
    for (k = 0; k < ATTN_KIND_COUNT; k++)
        for (variant = 0; variant < 4; variant++) {
            attn_transformer_config c = attn_transformer_config_default();
            attn_transformer m;
            attn_transformer_kv kv;
            attn_rng r;
            attn_float full[T * V], step[T * V], *cache;
            void *work, *kvmem, *dw;
            size_t wb, kb, db;
            int t, i;
            double err = 0, scale = 0;
            c.vocab = c.out = V; c.d = 16; c.layers = 2; c.heads = 2; c.dk = c.dv = 8; c.mlp = 24; c.max_T = 12;
            c.kinds[0] = (attn_kind)k; c.kinds[1] = k ? ATTN_SOFTMAX : ATTN_COG;
            c.pos = pos[variant % 3]; c.t5 = variant >= 1; c.doc_mask = variant == 3; c.bos = 0;
            c.glu = variant == 2; c.norm = variant == 2 ? ATTN_NORM_RMS : ATTN_NORM_LAYER;
            if (attn_kind_get((attn_kind)k)->flags & ATTN_KF_LINEAR_TIME) c.t5 = c.doc_mask = 0; /* not theirs */
            attn_rng_seed(&r, 40 + (uint64_t)k, (uint64_t)variant);
            if (attn_kind_get((attn_kind)k)->score && attn_kind_get((attn_kind)k)->score->offset) {
                if (variant == 0 && attn_transformer_init(&m, &c, &r) == ATTN_OK) {
                    CHECK(attn_transformer_kv_bytes(&m, 10) == 0 && strstr(attn_last_error(), "number of keys"),
                          "decoding a kind whose scores shift with the key count is refused: %s", attn_last_error());
                    attn_transformer_free(&m);
                }
                continue;
            }
            if (attn_transformer_init(&m, &c, &r) != ATTN_OK) {
                CHECK(0, "decode: init %s variant %d: %s", attn_kind_get((attn_kind)k)->name, variant, attn_last_error());
                continue;
            }
            cache = t_alloc(attn_transformer_cache_floats(&m, 1, T));
            work = malloc(wb = attn_transformer_work_bytes(&m, 1, T));
            kvmem = malloc(kb = attn_transformer_kv_bytes(&m, 10));
            dw = malloc(db = attn_transformer_decode_work_bytes(&m, P, 10));
            CHECK(attn_transformer_forward(&m, full, cache, attn_transformer_cache_floats(&m, 1, T), tok, NULL, 1, T, work, wb) == ATTN_OK, "full: %s", attn_last_error());
            CHECK(attn_transformer_kv_init(&kv, &m, 10, kvmem, kb) == ATTN_OK, "kv: %s", attn_last_error());
            CHECK(attn_transformer_decode(&m, &kv, step, tok, P, dw, db) == ATTN_OK, "prefill: %s", attn_last_error());
            for (t = P; t < T; t++)
                CHECK(attn_transformer_decode(&m, &kv, step + t * V, tok + t, 1, dw, db) == ATTN_OK, "step: %s",
                      attn_last_error());
            kv.len = 6; /* rewind to 6 and decode 6, 7 again (a recurrent state refuses to) */
            if (attn_kind_get((attn_kind)k)->flags & ATTN_KF_LINEAR_TIME)
                CHECK(attn_transformer_decode(&m, &kv, step + 6 * V, tok + 6, 2, dw, db) == ATTN_ERR_ARG &&
                          strstr(attn_last_error(), "cannot rewind"), "a recurrent state's rewind refused");
            else
                CHECK(attn_transformer_decode(&m, &kv, step + 6 * V, tok + 6, 2, dw, db) == ATTN_OK && kv.len == 8, "rewind");
            for (i = 0; i < T * V; i++) {
                scale = fmax(scale, fabs((double)full[i]));
                err = fmax(err, fabs((double)full[i] - (double)step[i]));
            }
            err /= scale > 1 ? scale : 1;
            if (err > worst) { worst = err; worst_kind = k * 4 + variant; }
            cases++;
            CHECK(err <= tol, "decode %s variant %d: the rows differ from the full pass by %.3g (relative)",
                  attn_kind_get((attn_kind)k)->name, variant, err);
            if (k == 0 && variant == 0) { /* refusals: the cache full, a token outside the vocabulary, small work */
                int bad = 9;
                kv.len = 9;
                CHECK(attn_transformer_decode(&m, &kv, step, tok, 2, dw, db) == ATTN_ERR_SHAPE, "a full cache refused");
                kv.len = 0;
                CHECK(attn_transformer_decode(&m, &kv, step, &bad, 1, dw, db) == ATTN_ERR_ARG && kv.len == 0,
                      "a token outside the vocabulary refused");
                CHECK(attn_transformer_decode(&m, &kv, step, tok, 1, dw, attn_transformer_decode_work_bytes(&m, 1, 10) - 1) ==
                          ATTN_ERR_ARG, "short work refused");
                CHECK(attn_transformer_kv_bytes(&m, 13) == 0 && attn_transformer_decode_work_bytes(&m, 11, 10) == 0,
                      "sizes beyond max_T or the capacity refused");
            }
            free(cache); free(work); free(kvmem); free(dw);
            attn_transformer_free(&m);
        }
    printf("  decode: %d cases, largest relative difference from the full pass %.2g (%s, variant %d)\n", cases, worst,
           worst_kind >= 0 ? attn_kind_get((attn_kind)(worst_kind / 4))->name : "-", worst_kind % 4);
}

/* attn_transformer_pack: the forward pass and the decoder read the packed weights and give the
   unpacked results (to rounding: the panels' kernels sum in another order), for a decoder (LayerNorm,
   biases, learned positions, edge panels: d 40) and a Llama-like model (RMSNorm, GLU, RoPE, one kv
   head, QK-norm) and an encoder (post-norm); backward refused while packed; weights changed and
   packed again are read; after attn_simd_set to other kernels the weights are read as before. */
static double pack_err(const attn_float *a, const attn_float *b, size_t n)
{
    double scale = 1;
    size_t i;
    for (i = 0; i < n; i++) scale = fabs((double)b[i]) > scale ? fabs((double)b[i]) : scale;
    return t_max_diff(a, b, n) / scale;
}

static void test_transformer_pack(void)
{
    enum { B = 2, T = 11, P = 4 };
    static const char *const isas[] = {"sse2", "avx2", "avx512"};
    int tok[B * T], variant, i, k;
    double tol = sizeof(attn_float) == 4 ? 2e-5 : 1e-12;
    for (i = 0; i < B * T; i++) tok[i] = (i * 7 + 3) % 50;
    for (variant = 0; variant < 3; variant++) {
        attn_transformer_config c = attn_transformer_config_default();
        attn_transformer m;
        attn_transformer_kv kv;
        attn_rng r;
        attn_float *ref, *got, *cache, *dy;
        void *work, *kvmem, *dw;
        size_t wb, kb, db, ny;
        int t, R;
        c.vocab = 50; c.d = 40; c.layers = 2; c.heads = 2; c.dk = 12; c.dv = 12; c.mlp = 72; c.max_T = 16;
        if (variant == 1) {
            c.norm = ATTN_NORM_RMS; c.glu = 1; c.pos = ATTN_POS_ROPE; c.kv_heads = 1; c.qk_norm = 1; c.bias = 0;
            c.out = 50;
        }
        if (variant == 2) c.post_norm = 1, c.causal = 0, c.out = 0;
        c.readout = 0;
        attn_rng_seed(&r, 61, (uint64_t)variant);
        if (attn_transformer_init(&m, &c, &r) != ATTN_OK) {
            CHECK(0, "pack: init variant %d: %s", variant, attn_last_error());
            continue;
        }
        R = T;
        ny = (size_t)B * R * (c.out ? c.out : c.d);
        ref = t_alloc(ny); got = t_alloc(ny); dy = t_alloc(ny);
        cache = t_alloc(attn_transformer_cache_floats(&m, B, T));
        work = malloc(wb = attn_transformer_work_bytes(&m, B, T));
        for (i = 0; i < (int)ny; i++) dy[i] = (attn_float)((i % 5) - 2);
        CHECK(attn_transformer_forward(&m, ref, cache, attn_transformer_cache_floats(&m, B, T), tok, NULL, B, T, work, wb) == ATTN_OK, "pack: %s", attn_last_error());
        CHECK(attn_transformer_pack(&m, 1) == ATTN_OK && m.packed, "pack variant %d: %s", variant, attn_last_error());
        CHECK(attn_transformer_forward(&m, got, cache, attn_transformer_cache_floats(&m, B, T), tok, NULL, B, T, work, wb) == ATTN_OK, "pack: %s", attn_last_error());
        CHECK(pack_err(got, ref, ny) <= tol, "pack variant %d: the forward pass %.3g from the unpacked one", variant,
              pack_err(got, ref, ny));
        CHECK(attn_transformer_backward(&m, dy, cache, attn_transformer_cache_floats(&m, B, T), tok, NULL, B, T, work, wb) == ATTN_ERR_ARG &&
                  strstr(attn_last_error(), "packed"), "pack: backward refused while packed: %s", attn_last_error());
        for (k = 0; k < 3; k++) { /* other kernels: the weights read as before */
            char start[32];
            snprintf(start, sizeof start, "%s", attn_simd_name());
            if (!strcmp(isas[k], start) || attn_simd_set(isas[k]) != 0) continue;
            CHECK(attn_transformer_forward(&m, got, cache, attn_transformer_cache_floats(&m, B, T), tok, NULL, B, T, work, wb) == ATTN_OK &&
                      pack_err(got, ref, ny) <= tol, "pack variant %d under %s: %.3g", variant, isas[k],
                  pack_err(got, ref, ny));
            attn_simd_set(start);
        }
        attn_clear_error();
        if (c.out) { /* the decoder over the packed weights: the full pass' rows */
            kvmem = malloc(kb = attn_transformer_kv_bytes(&m, T));
            dw = malloc(db = attn_transformer_decode_work_bytes(&m, P, T));
            CHECK(attn_transformer_kv_init(&kv, &m, T, kvmem, kb) == ATTN_OK &&
                      attn_transformer_decode(&m, &kv, got, tok, P, dw, db) == ATTN_OK, "pack: prefill: %s",
                  attn_last_error());
            for (t = P; t < T; t++)
                CHECK(attn_transformer_decode(&m, &kv, got + (size_t)t * c.out, tok + t, 1, dw, db) == ATTN_OK,
                      "pack: step: %s", attn_last_error());
            CHECK(pack_err(got, ref, (size_t)T * c.out) <= tol, "pack variant %d: decoding %.3g from the full pass",
                  variant, pack_err(got, ref, (size_t)T * c.out));
            free(kvmem); free(dw);
        }
        m.p.data[m.p.total - 1] += 1; /* a weight changed (the last: the head's or the final norm's), packed again */
        attn_transformer_layer_named(&m, 1, 0).W2[5] += (attn_float)0.5;
        CHECK(attn_transformer_pack(&m, 1) == ATTN_OK, "pack again: %s", attn_last_error());
        CHECK(attn_transformer_forward(&m, got, cache, attn_transformer_cache_floats(&m, B, T), tok, NULL, B, T, work, wb) == ATTN_OK, "pack: %s", attn_last_error());
        CHECK(attn_transformer_pack(&m, 0) == ATTN_OK && !m.packed, "unpack");
        CHECK(attn_transformer_forward(&m, ref, cache, attn_transformer_cache_floats(&m, B, T), tok, NULL, B, T, work, wb) == ATTN_OK &&
                  pack_err(got, ref, ny) <= tol, "pack variant %d: changed weights packed again %.3g", variant,
              pack_err(got, ref, ny));
        CHECK(attn_transformer_backward(&m, dy, cache, attn_transformer_cache_floats(&m, B, T), tok, NULL, B, T, work, wb) == ATTN_OK, "backward unpacked: %s",
              attn_last_error());
        CHECK(attn_transformer_pack(&m, 1) == ATTN_OK, "pack: %s", attn_last_error());
        attn_transformer_free(&m); /* frees the panels too (valgrind) */
        CHECK(!m.packed, "free drops the panels");
        free(ref); free(got); free(dy); free(cache); free(work);
    }
    CHECK(attn_transformer_pack(NULL, 1) == ATTN_ERR_ARG, "pack(NULL) refused");
    attn_clear_error();
}

/* attn_sample: greedy is the argmax; temperature, top-k and top-p draw the renormalised
   distributions (frequencies over 40,000 draws within 4 standard errors of the exact values);
   tokens outside the top-k or the nucleus never come; a seed replays its draws; bad input is -1. */
static void test_sample(void)
{
    const double p[4] = {0.5, 0.3, 0.15, 0.05};
    attn_float logits[4], nanl[4];
    struct { double temp; int k; double top_p; double want[4]; } c[5] = {
        {1, 0, 1, {0.5, 0.3, 0.15, 0.05}},
        {2, 0, 1, {0, 0, 0, 0}}, /* p^(1/2), normalised below */
        {1, 2, 1, {0.625, 0.375, 0, 0}},
        {1, 0, 0.7, {0.625, 0.375, 0, 0}},
        {1, 3, 0.5, {1, 0, 0, 0}},
    };
    int i, j, n = 40000, bad = 0, first[16];
    attn_rng r;
    for (i = 0; i < 4; i++) logits[i] = (attn_float)log(p[i]) + 3, nanl[i] = logits[i];
    {
        double z = 0;
        for (i = 0; i < 4; i++) z += sqrt(p[i]);
        for (i = 0; i < 4; i++) c[1].want[i] = sqrt(p[i]) / z;
    }
    attn_rng_seed(&r, 5, 0);
    CHECK(attn_sample(logits, 4, 0, 0, 1, &r) == 0 && attn_sample(logits, 4, 1.5, 1, 1, &r) == 0, "greedy and top-1 are the argmax");
    for (j = 0; j < 5; j++) {
        int count[4] = {0, 0, 0, 0};
        attn_rng_seed(&r, 6, (uint64_t)j);
        for (i = 0; i < n; i++) {
            int t = attn_sample(logits, 4, c[j].temp, c[j].k, c[j].top_p, &r);
            if (t < 0 || t > 3) { bad++; break; }
            count[t]++;
        }
        for (i = 0; i < 4; i++) {
            double f = count[i] / (double)n, se = sqrt(c[j].want[i] * (1 - c[j].want[i]) / n);
            if (c[j].want[i] == 0 ? count[i] != 0 : fabs(f - c[j].want[i]) > 4 * se + 1e-12) {
                bad++;
                printf("  sample case %d token %d: %.4f, want %.4f\n", j, i, f, c[j].want[i]);
            }
        }
    }
    CHECK(!bad, "the sampler's frequencies are off (%d)", bad);
    attn_rng_seed(&r, 9, 9);
    for (i = 0; i < 16; i++) first[i] = attn_sample(logits, 4, 1, 0, 0.9, &r);
    attn_rng_seed(&r, 9, 9);
    for (i = 0, bad = 0; i < 16; i++) bad += attn_sample(logits, 4, 1, 0, 0.9, &r) != first[i];
    CHECK(!bad, "a seed replays its draws");
    nanl[2] = NAN;
    CHECK(attn_sample(logits, 0, 1, 0, 1, &r) == -1 && attn_sample(logits, 4, -1, 0, 1, &r) == -1 &&
              attn_sample(logits, 4, 1, -1, 1, &r) == -1 && attn_sample(logits, 4, 1, 0, 0, &r) == -1 &&
              attn_sample(logits, 4, 1, 0, 1.5, &r) == -1 && attn_sample(nanl, 4, 1, 0, 1, &r) == -1 &&
              attn_sample(NULL, 4, 1, 0, 1, &r) == -1,
          "bad arguments give -1");
}

/* attn_plot_svg: a file with the title (escaped), one polyline per series and a band polygon,
   non-finite points left out; bad series and an unwritable path refused. */
static void test_plot_svg(void)
{
    const char *path = "build/test_plot.svg";
    double x[4] = {0, 1, 2, 3}, y[4] = {0.1, NAN, 0.5, 0.9}, lo[4] = {0, 0, 0.4, 0.8}, hi[4] = {0.2, 0.3, 0.6, 1}, loss[4] = {2, 1, 0.5, 0.25};
    attn_plot_series s[2];
    attn_plot p;
    char text[8192];
    size_t n;
    FILE *f;
    memset(s, 0, sizeof s);
    memset(&p, 0, sizeof p);
    s[0].label = "a<b"; s[0].x = x; s[0].y = y; s[0].lo = lo; s[0].hi = hi; s[0].n = 4;
    s[1].x = x; s[1].y = loss; s[1].n = 4; s[1].right = 1; s[1].colour = 1;
    p.title = "T & U"; p.xlabel = "epoch"; p.ylabel = "acc"; p.y2label = "loss";
    CHECK(attn_plot_svg(path, &p, s, 2) == ATTN_OK, "plot: %s", attn_last_error());
    f = fopen(path, "rb");
    n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    text[n] = 0;
    CHECK(strstr(text, "T &amp; U") && strstr(text, "a&lt;b") && !strstr(text, "nan") && strstr(text, "<polygon") &&
              strstr(text, "stroke-dasharray") && strstr(text, "</svg>"), "the SVG lacks an element or holds a NaN:\n%s", text);
    { /* round ticks: the right axis over 0 .. 2 (loss), the left over the data 0 .. 1 by 0.2 */
        CHECK(strstr(text, ">0.5</text>") && strstr(text, ">1.5</text>") && strstr(text, ">2</text>") && strstr(text, ">0.8</text>") &&
                  !strstr(text, ">1.62") && !strstr(text, ">0.811"),
              "the ticks are not round numbers:\n%s", text);
        CHECK(strstr(text, "<line x1") && strstr(text, "stroke-width=\"2\"/>"), "the legend lacks a line sample");
    }
    s[0].rgb = "#800000"; s[0].style = ATTN_LINE_DOTTED;
    CHECK(attn_plot_svg(path, &p, s, 2) == ATTN_OK, "a colour and a line style: %s", attn_last_error());
    f = fopen(path, "rb");
    n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    text[n] = 0;
    CHECK(strstr(text, "stroke=\"#800000\" stroke-width=\"2\" stroke-dasharray=\"2,3\""), "the series' own colour and dots");
    s[0].style = (attn_line_style)9;
    CHECK(attn_plot_svg(path, &p, s, 2) == ATTN_ERR_ARG, "an unknown line style refused");
    s[0].style = ATTN_LINE_DEFAULT; s[0].rgb = NULL;
    s[1].x = NULL;
    CHECK(attn_plot_svg(path, &p, s, 2) == ATTN_ERR_ARG, "a series without x refused");
    s[1].x = x; s[1].lo = lo;
    CHECK(attn_plot_svg(path, &p, s, 2) == ATTN_ERR_ARG, "a band without hi refused");
    s[1].lo = NULL;
    CHECK(attn_plot_svg("build/no-such-dir/p.svg", &p, s, 2) == ATTN_ERR_IO, "an unwritable path refused");
    { /* bars: one rect per (series, group) besides the background and the frame, heights to scale */
        const char *groups[3] = {"n 1", "n 2", "n<3"}, *series[2] = {"soft", "cog"};
        double v[6] = {1, 0.5, -0.5, 2, NAN, 0.25};
        int rects = 0;
        char *q;
        CHECK(attn_bars_svg(path, "bars", "ratio", groups, 3, series, 2, v) == ATTN_OK, "bars: %s", attn_last_error());
        f = fopen(path, "rb");
        n = f ? fread(text, 1, sizeof text - 1, f) : 0;
        if (f) fclose(f);
        text[n] = 0;
        for (q = text; (q = strstr(q, "<rect ")) != NULL; q++) rects++; /* a NaN's bar has height 0 */
        CHECK(rects == 6 + 2 && strstr(text, "n&lt;3") && !strstr(text, "nan"), "bars: %d rects (8 expected) or an unescaped label or a NaN", rects);
        CHECK(attn_bars_svg(path, NULL, NULL, groups, 0, series, 2, v) == ATTN_ERR_ARG, "bars: no groups refused");
    }
    remove(path);
}

/* A read-out model's last layer computes only the read-out rows (attn.h's pruning): against the
   same parameters with every position read out (readout 0, nothing pruned), the read-out rows of
   y, every gradient (dy zero on the other rows; attention dropout on, so the masks must agree
   position for position) and the last layer's weights agree up to rounding, and the cache is
   smaller. Softmax and HYLA with dense inputs and T5 biases (the HYLA paper's model), and a causal
   token model with document masking. */
static void test_transformer_pruned(void)
{
    attn_rng r;
    int k;
    attn_rng_seed(&r, 19, 0);
    for (k = 0; k < 3; k++) {
        attn_transformer_config cf = tf_small();
        attn_transformer m[2];
        attn_float *y[2], *cache[2], *dy[2], *w[2], *x = NULL;
        void *work[2], *ww[2];
        size_t wb[2], wwb[2], cf_floats[2], i;
        int tok[3 * 6], B = 3, T = 6, R = 2, v, b, j;
        double ey = 0, eg = 0, ew = 0, gmax = 0;
        if (k < 2) { cf.vocab = 0; cf.in_dim = 3; cf.t5 = 1; cf.causal = 0; cf.dropout = (attn_float)0.3; cf.dv = cf.dk; cf.pos = ATTN_POS_NONE; }
        else { cf.doc_mask = 1; cf.bos = 0; cf.dropout = (attn_float)0.2; }
        cf.kinds[0] = cf.kinds[1] = k == 1 ? ATTN_HYLA : ATTN_SOFTMAX;
        for (v = 0; v < 2; v++) { /* v 0: read out R (pruned), v 1: every position */
            cf.readout = v ? 0 : R;
            CHECK(attn_transformer_init(&m[v], &cf, &r) == ATTN_OK, "init: %s", attn_last_error());
            m[v].training = 1; m[v].seed = 5;
            y[v] = t_alloc((size_t)B * T * cf.out);
            dy[v] = t_alloc((size_t)B * T * cf.out);
            cf_floats[v] = attn_transformer_cache_floats(&m[v], B, T);
            cache[v] = t_alloc(cf_floats[v]);
            wb[v] = attn_transformer_work_bytes(&m[v], B, T);
            work[v] = malloc(wb[v]);
            wwb[v] = attn_transformer_weights_work_bytes(&m[v], B, T);
            ww[v] = malloc(wwb[v]);
            w[v] = t_alloc((size_t)B * cf.heads * T * T);
        }
        for (i = 0; i < m[0].p.total; i++) m[0].p.data[i] += (attn_float)(0.2 * attn_rng_normal(&r, 0, 1));
        memcpy(m[1].p.data, m[0].p.data, sizeof(attn_float) * m[0].p.total);
        if (cf.in_dim) { x = t_alloc((size_t)B * T * cf.in_dim); t_randn(x, (size_t)B * T * cf.in_dim, &r, 1); }
        for (j = 0; j < B * T; j++) tok[j] = j % T == 0 || j % T == 3 ? 0 : 1 + (int)attn_rng_int(&r, 4); /* two documents each */
        t_randn(dy[0], (size_t)B * R * cf.out, &r, 1);
        for (b = 0; b < B; b++) memcpy(dy[1] + ((size_t)b * T + T - R) * cf.out, dy[0] + (size_t)b * R * cf.out, sizeof(attn_float) * R * cf.out);
        for (v = 0; v < 2; v++) {
            CHECK(attn_transformer_forward(&m[v], y[v], cache[v], attn_transformer_cache_floats(&m[v], B, T), x ? NULL : tok, x, B, T, work[v], wb[v]) == ATTN_OK, "forward: %s", attn_last_error());
            attn_params_zero_grad(&m[v].p);
            CHECK(attn_transformer_backward(&m[v], dy[v], cache[v], attn_transformer_cache_floats(&m[v], B, T), x ? NULL : tok, x, B, T, work[v], wb[v]) == ATTN_OK, "backward: %s", attn_last_error());
            CHECK(attn_transformer_weights(&m[v], w[v], cache[v], attn_transformer_cache_floats(&m[v], B, T), B, T, 1, ww[v], wwb[v]) == ATTN_OK, "weights: %s", attn_last_error());
        }
        for (b = 0; b < B; b++)
            for (j = 0; j < R * cf.out; j++) {
                attn_float a = y[0][(size_t)b * R * cf.out + j], c = y[1][((size_t)b * T + T - R) * cf.out + j];
                ey = fmax(ey, fabs(a - c) / (1 + fabs(c)));
            }
        for (i = 0; i < m[0].p.total; i++) gmax = fmax(gmax, fabs(m[1].p.gdata[i]));
        for (i = 0; i < m[0].p.total; i++) eg = fmax(eg, fabs(m[0].p.gdata[i] - m[1].p.gdata[i]) / (1 + gmax));
        for (i = 0; i < (size_t)B * cf.heads * T * T; i++) ew = fmax(ew, fabs(w[0][i] - w[1][i]));
        CHECK(ey <= 100 * T_EPS && eg <= 100 * T_EPS && ew <= 100 * T_EPS && gmax > 0.1,
              "pruned %s (%s): y differs by %.3g, gradients by %.3g (largest %.3g), last layer's weights by %.3g", attn_kind_get(cf.kinds[0])->name,
              k < 2 ? "dense, T5" : "causal, documents", ey, eg, gmax, ew);
        CHECK(cf_floats[0] < cf_floats[1], "the pruned model's cache (%lu floats) is smaller than the full one's (%lu)", (unsigned long)cf_floats[0],
              (unsigned long)cf_floats[1]);
        for (v = 0; v < 2; v++) {
            free(y[v]); free(dy[v]); free(cache[v]); free(work[v]); free(ww[v]); free(w[v]);
            attn_transformer_free(&m[v]);
        }
        free(x);
    }
}

/* attn_transformer_grad's loss for the tests: L = sum y . c over the chunk's outputs, c [B, R, out]. */
typedef struct { const attn_float *c; int per; int calls; } tf_grad_ctx;
static double tf_grad_loss(void *p, int b0, int nb, const attn_float *y, attn_float *dy)
{
    tf_grad_ctx *g = (tf_grad_ctx *)p;
    size_t i, n = (size_t)nb * g->per;
    double sum = 0;
    for (i = 0; i < n; i++) {
        dy[i] = g->c[(size_t)b0 * g->per + i];
        sum += (double)y[i] * dy[i];
    }
    g->calls++;
    return sum;
}

/* attn_transformer_grad in chunks of 1, 2 (a partial last one), the default and the whole batch
   against one forward and backward pass over the batch: the same loss and gradient (bit for bit
   with one chunk), for dense inputs with T5 biases, dropout and a pruned read-out (softmax and
   HYLA), and tokens with documents and a causal mask, with biases and without (as the Cogformer);
   bad arguments refused with the gradient untouched. */
static void test_transformer_grad(void)
{
    static const char *names[4] = {"dense", "tokens", "dense, HYLA", "tokens, no biases"};
    attn_rng r;
    int k;
    attn_rng_seed(&r, 23, 0);
    for (k = 0; k < 4; k++) { /* dense softmax, tokens softmax, dense HYLA, tokens without biases */
        attn_transformer_config cf = tf_small();
        attn_transformer m;
        attn_float *y, *c, *cache, *x = NULL, *ref;
        int tok[5 * 6], B = 5, T = 6, R, j, ci, chunks[4] = {1, 2, 0, 5};
        size_t wb, i;
        void *work;
        double full = 0, total, eg, gmax = 0;
        tf_grad_ctx g;
        if (k != 1 && k != 3) { cf.vocab = 0; cf.in_dim = 3; cf.t5 = 1; cf.causal = 0; cf.dropout = (attn_float)0.3; cf.pos = ATTN_POS_NONE; cf.readout = 2; }
        else { cf.doc_mask = 1; cf.bos = 0; cf.dropout = (attn_float)0.2; cf.bias = k == 1; }
        if (k == 2) { cf.kinds[0] = cf.kinds[1] = ATTN_HYLA; cf.dv = cf.dk; }
        R = cf.readout ? cf.readout : T;
        CHECK(attn_transformer_init(&m, &cf, &r) == ATTN_OK, "init: %s", attn_last_error());
        m.training = 1; m.seed = 7;
        for (i = 0; i < m.p.total; i++) m.p.data[i] += (attn_float)(0.2 * attn_rng_normal(&r, 0, 1));
        if (cf.in_dim) { x = t_alloc((size_t)B * T * cf.in_dim); t_randn(x, (size_t)B * T * cf.in_dim, &r, 1); }
        for (j = 0; j < B * T; j++) tok[j] = j % T == 0 || j % T == 3 ? 0 : 1 + (int)attn_rng_int(&r, 4);
        y = t_alloc((size_t)B * R * cf.out);
        c = t_alloc((size_t)B * R * cf.out);
        ref = t_alloc(m.p.total);
        t_randn(c, (size_t)B * R * cf.out, &r, 1);
        cache = t_alloc(attn_transformer_cache_floats(&m, B, T));
        wb = attn_transformer_work_bytes(&m, B, T);
        work = malloc(wb);
        attn_params_zero_grad(&m.p);
        CHECK(attn_transformer_forward(&m, y, cache, attn_transformer_cache_floats(&m, B, T), x ? NULL : tok, x, B, T, work, wb) == ATTN_OK, "forward: %s", attn_last_error());
        CHECK(attn_transformer_backward(&m, c, cache, attn_transformer_cache_floats(&m, B, T), x ? NULL : tok, x, B, T, work, wb) == ATTN_OK, "backward: %s", attn_last_error());
        for (i = 0; i < (size_t)B * R * cf.out; i++) full += (double)y[i] * c[i];
        memcpy(ref, m.p.gdata, sizeof(attn_float) * m.p.total);
        for (i = 0; i < m.p.total; i++) gmax = fmax(gmax, fabs(ref[i]));
        free(cache); free(work);
        for (ci = 0; ci < 4; ci++) {
            int want = chunks[ci] ? (B + chunks[ci] - 1) / chunks[ci] : 1; /* 512 / T tokens: one chunk */
            wb = attn_transformer_grad_work_bytes(&m, B, T, chunks[ci]);
            work = malloc(wb);
            g.c = c; g.per = R * cf.out; g.calls = 0;
            attn_params_zero_grad(&m.p);
            CHECK(attn_transformer_grad(&m, tf_grad_loss, &g, x ? NULL : tok, x, B, T, chunks[ci], &total, work, wb) == ATTN_OK,
                  "grad: %s", attn_last_error());
            for (i = 0, eg = 0; i < m.p.total; i++) eg = fmax(eg, fabs(m.p.gdata[i] - ref[i]) / (1 + gmax));
            if (want == 1)
                CHECK(eg == 0 && total == full && g.calls == 1, "grad (%s) in one chunk: gradient differs by %.3g, loss %.9g against %.9g, %d calls",
                      names[k], eg, total, full, g.calls);
            else
                /* products of fewer rows take other kernels, rounding differently: softmax within 3 eps in
                   every build; HYLA's normalisation over the heads amplifies it (up to 70 eps: 8.4e-6 in
                   the SSE2 build, 3.3e-6 NEON, 6e-7 AVX-512), hence 500 eps there; a chunk read at the wrong
                   offset is off by about 1. The amplification depends on the draws: with the HYLA case's
                   parameters drawn after a model without biases, the relaxed WebAssembly build (fused
                   multiply-adds where the engine has them) was 857 eps off, so the cases keep their order. */
                CHECK(eg <= (k == 2 ? 500 : 20) * T_EPS && fabs(total - full) <= (k == 2 ? 500 : 20) * T_EPS * (1 + fabs(full)) &&
                      g.calls == want && gmax > 0.1,
                      "grad (%s) in chunks of %d: gradient differs by %.3g (largest %.3g), loss %.9g against %.9g, %d calls of %d",
                      names[k], chunks[ci], eg, gmax, total, full, g.calls, want);
            free(work);
        }
        /* bad arguments: refused, the gradient left as it was */
        wb = attn_transformer_grad_work_bytes(&m, B, T, 2);
        work = malloc(wb);
        CHECK(attn_transformer_grad(&m, NULL, &g, x ? NULL : tok, x, B, T, 2, &total, work, wb) == ATTN_ERR_ARG &&
              strstr(attn_last_error(), "loss") != NULL, "grad without a loss: %s", attn_last_error());
        CHECK(attn_transformer_grad(&m, tf_grad_loss, &g, x ? NULL : tok, x, B, T, -1, &total, work, wb) == ATTN_ERR_ARG &&
              strstr(attn_last_error(), "chunk") != NULL, "grad with chunk -1: %s", attn_last_error());
        CHECK(attn_transformer_grad(&m, tf_grad_loss, &g, x ? NULL : tok, x, B, T, 2, &total, work, wb - 1) == ATTN_ERR_ARG &&
              strstr(attn_last_error(), "attn_transformer_grad_work_bytes") != NULL, "grad with short work: %s", attn_last_error());
        CHECK(attn_transformer_grad(&m, tf_grad_loss, &g, x ? NULL : tok, x, B, T + 1, 2, &total, work, wb) == ATTN_ERR_SHAPE,
              "grad with T > max_T: %s", attn_last_error());
        CHECK(attn_transformer_grad_work_bytes(&m, B, T, -3) == 0 && attn_transformer_grad_work_bytes(NULL, B, T, 0) == 0,
              "grad work bytes of bad arguments are 0");
        if (!x) { /* a bad token in the last chunk: refused before the first chunk's gradient */
            tok[B * T - 1] = 99;
            g.calls = 0;
            CHECK(attn_transformer_grad(&m, tf_grad_loss, &g, tok, NULL, B, T, 2, &total, work, wb) == ATTN_ERR_ARG &&
                  strstr(attn_last_error(), "tokens[29] = 99") != NULL && g.calls == 0, "grad with a bad token: %s", attn_last_error());
            tok[B * T - 1] = 1;
        }
        for (i = 0, eg = 0; i < m.p.total; i++) eg = fmax(eg, fabs(m.p.gdata[i] - ref[i]) / (1 + gmax));
        CHECK(eg == 0, "refused grad calls left the gradient (it moved by %.3g)", eg);
        free(work); free(y); free(c); free(ref); free(x);
        attn_transformer_free(&m);
    }
}

/* attn_transformer_weights: softmax rows sum to 1 with nothing above the diagonal (causal); HYLA's
   code is RMS-normalised over the heads (mean_h a^2 = 1 up to the 1e-6); bad arguments refused. */
static void test_transformer_weights(void)
{
    attn_rng r;
    int k;
    attn_rng_seed(&r, 16, 0);
    for (k = 0; k < 2; k++) {
        attn_transformer_config cf = tf_small();
        attn_transformer m;
        attn_float *y, *cache, *w;
        void *work, *ww;
        size_t wb, wwb;
        int tok[2 * 5], i, j, b, h, bad = 0, B = 2, T = 5;
        double worst = 0;
        if (k) { cf.kinds[0] = cf.kinds[1] = ATTN_HYLA; cf.dv = cf.dk; cf.causal = 0; cf.t5 = 1; }
        CHECK(attn_transformer_init(&m, &cf, &r) == ATTN_OK, "init: %s", attn_last_error());
        for (i = 0; i < B * T; i++) tok[i] = (int)attn_rng_int(&r, 5);
        y = t_alloc((size_t)B * T * cf.out);
        cache = t_alloc(attn_transformer_cache_floats(&m, B, T));
        wb = attn_transformer_work_bytes(&m, B, T);
        work = malloc(wb);
        wwb = attn_transformer_weights_work_bytes(&m, B, T);
        ww = malloc(wwb);
        w = t_alloc((size_t)B * cf.heads * T * T);
        attn_transformer_forward(&m, y, cache, attn_transformer_cache_floats(&m, B, T), tok, NULL, B, T, work, wb);
        CHECK(attn_transformer_weights(&m, w, cache, attn_transformer_cache_floats(&m, B, T), B, T, 1, ww, wwb) == ATTN_OK, "weights: %s", attn_last_error());
        for (b = 0; b < B; b++)
            for (i = 0; i < T; i++) {
                double rs = 0;
                for (j = 0; j < T; j++) {
                    double ms = 0;
                    for (h = 0; h < cf.heads; h++) {
                        attn_float a = w[(((size_t)b * cf.heads + h) * T + i) * T + j];
                        ms += (double)a * a / cf.heads;
                        if (!k) bad += j > i && a != 0;
                        if (!k && h == 0) rs += a;
                    }
                    if (k) worst = fmax(worst, fabs(ms - 1));
                }
                if (!k) worst = fmax(worst, fabs(rs - 1));
            }
        CHECK(!bad && worst < 1e-3, "transformer %s weights: %d entries above the diagonal, worst deviation %.3g", k ? "HYLA" : "softmax", bad, worst);
        CHECK(attn_transformer_weights(&m, w, cache, attn_transformer_cache_floats(&m, B, T), B, T, 2, ww, wwb) == ATTN_ERR_SHAPE, "layer 2 of 2 refused");
        CHECK(attn_transformer_weights(&m, w, cache, attn_transformer_cache_floats(&m, B, T), B, T, 0, ww, wwb - 1) == ATTN_ERR_ARG, "a short workspace refused");
        free(y); free(cache); free(work); free(ww); free(w);
        attn_transformer_free(&m);
    }
}

/* The probe separates separable data (F1 1) and scores a constant guess 0; cosine similarities;
   a heatmap file with one cell per entry. */
static void test_probe_cosine_heatmap(void)
{
    attn_float X[8] = {-2, 1, -1, 0, 1, 0, 2, -1}, M[6] = {1, 0, 0, 1, 1, 1}, S[9];
    int y[4] = {0, 0, 1, 1}, none[4] = {0, 0, 0, 0}, cells = 0;
    double w[3], mu[2], sd[2];
    char text[16384], *q;
    size_t n;
    FILE *f;
    CHECK(attn_probe_fit(w, mu, sd, X, y, 4, 2, 300, 0.5, 0, 0) == ATTN_OK, "probe: %s", attn_last_error());
    CHECK(attn_probe_f1(w, mu, sd, X, y, 4, 2) == 1, "the probe should separate x < 0 from x > 0: F1 %g", attn_probe_f1(w, mu, sd, X, y, 4, 2));
    CHECK(attn_probe_f1(w, mu, sd, X, none, 4, 2) == 0, "F1 with no positives is 0");
    CHECK(attn_probe_fit(w, mu, sd, X, y, 0, 2, 10, 0.5, 0, 0) == ATTN_ERR_ARG, "n = 0 refused");
    { /* balanced: 2 positives among 6 rows fit as 4 positives (each repeated twice) among 8 unweighted */
        attn_float Xb[6 * 2] = {0.3f, 1, -0.2f, 0.5f, 0.1f, -1, -0.4f, 0.2f, 0.8f, -0.3f, -1, 0.6f}, Xr[10 * 2];
        int yb[6] = {1, 0, 0, 1, 0, 0}, yr[10], i, j, m = 0;
        double wb[3], mub[2], sdb[2], wr[3], mur[2], sdr[2], gap = 0;
        for (i = 0; i < 6; i++)
            for (j = 0; j < (yb[i] ? 2 : 1); j++, m++) { Xr[2 * m] = Xb[2 * i]; Xr[2 * m + 1] = Xb[2 * i + 1]; yr[m] = yb[i]; }
        attn_probe_fit(wb, mub, sdb, Xb, yb, 6, 2, 50, 0.5, 1e-2, 1);
        attn_probe_fit(wr, mur, sdr, Xr, yr, 8, 2, 50, 0.5, 1e-2, 0);
        for (i = 0; i < 3; i++) gap = fmax(gap, fabs(wb[i] - wr[i]) + (i < 2 ? fabs(mub[i] - mur[i]) + fabs(sdb[i] - sdr[i]) : 0));
        CHECK(gap < 1e-9, "a balanced probe equals an unweighted one on the minority class repeated to parity (differs by %.2g)", gap);
    }
    attn_cosine_matrix(S, M, 3, 2);
    CHECK(fabs(S[0] - 1) < 1e-6 && fabs(S[1]) < 1e-6 && fabs(S[2] - 0.70710678) < 1e-6 && fabs(S[7] - 0.70710678) < 1e-6,
          "cosine matrix: %g %g %g %g", S[0], S[1], S[2], S[7]);
    CHECK(attn_heatmap_svg("build/test_heat.svg", "S & M", S, 3, 3, NULL, NULL, ATTN_HEAT_SIGNED) == ATTN_OK, "heatmap: %s", attn_last_error());
    f = fopen("build/test_heat.svg", "rb");
    n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    text[n] = 0;
    for (q = text; (q = strstr(q, "</title></rect>")) != NULL; q++) cells++;
    CHECK(cells == 9 && strstr(text, "S &amp; M"), "the heatmap holds %d cells (9 expected) or lacks its title", cells);
    CHECK(strstr(text, ">row</text>") && strstr(text, ">column</text>") && strstr(text, ">2</text>") &&
              strstr(text, ">0</text>") && strstr(text, ">-1</text>"),
          "the heatmap lacks its index axes or its colour bar's labels (1 at the top, 0, -1):\n%s", text);
    CHECK(attn_heatmap_svg("build/test_heat.svg", NULL, S, 0, 3, NULL, NULL, ATTN_HEAT_LOG) == ATTN_ERR_ARG, "0 rows refused");
    remove("build/test_heat.svg");
}

/* The collapse probes: the first n is the reference (1 for both metrics); the ratios are finite
   and positive; the counting task's pair differs by one token; bad arguments refused. */
static void test_collapse_probe(void)
{
    attn_transformer_config cf = tf_small();
    attn_transformer m;
    attn_rng r;
    int prompt[2] = {3, 4}, ns[3] = {1, 2, 3}, task, k, bad = 0;
    double paper[3], code[3];
    attn_rng_seed(&r, 18, 0);
    cf.max_T = 8; cf.norm = ATTN_NORM_RMS; cf.pos = ATTN_POS_ROPE; cf.glu = 1; cf.act = ATTN_ACT_SILU; cf.bias = 0; cf.kinds[1] = ATTN_COG;
    CHECK(attn_transformer_init(&m, &cf, &r) == ATTN_OK, "init: %s", attn_last_error());
    for (task = 0; task < 2; task++) {
        CHECK(attn_collapse_probe(&m, (attn_probe_task)task, prompt, 2, 0, 1, ns, 3, 3, paper, code) == ATTN_OK, "probe: %s", attn_last_error());
        bad += paper[0] != 1 || code[0] != 1;
        for (k = 0; k < 3; k++) bad += !(paper[k] > 0 && paper[k] < 1e6 && code[k] > 0 && code[k] < 1e6);
    }
    CHECK(!bad, "collapse probe: the ratios should start at 1 and stay finite and positive");
    CHECK(attn_collapse_probe(&m, ATTN_PROBE_ZERO, prompt, 2, 0, 1, ns, 3, 4, paper, code) == ATTN_ERR_ARG, "a chunk not dividing d refused");
    ns[2] = 6;
    CHECK(attn_collapse_probe(&m, ATTN_PROBE_ZERO, prompt, 2, 0, 1, ns, 3, 3, paper, code) == ATTN_ERR_SHAPE, "sequences beyond max_T refused");
    attn_transformer_free(&m);
}

/* The thesis' identities (Conti 2024, Sec. 3): the band dimension 100 at n 16, w 3; |A - 0| = n for a
   row-stochastic A; |A - I| = 2 (n - tr A); candidates with unit row sums; Sigma 3's rows are unit
   vectors; the band projection; Min_distance <= the mean, and Sigma 1's equals |A - I| without errors. */
static void test_band_analysis(void)
{
    attn_float A[256], X[256], P[256], Z[256] = {0}, I[256] = {0};
    double mn[3], me[3], tr = 0, off = 0;
    attn_rng r;
    int i, j, f, bad = 0;
    attn_rng_seed(&r, 19, 0);
    CHECK(attn_band_dimension(16, 3) == 100, "band dimension at n 16, w 3: %ld (the thesis: 100)", attn_band_dimension(16, 3));
    for (i = 0; i < 16; i++) {
        double sum = 0;
        for (j = 0; j < 16; j++) sum += A[i * 16 + j] = (attn_float)exp(2 * attn_rng_normal(&r, 0, 1));
        for (j = 0; j < 16; j++) A[i * 16 + j] = (attn_float)(A[i * 16 + j] / sum);
        tr += A[i * 17];
        I[i * 17] = 1;
    }
    CHECK(fabs(attn_l1_distance(A, Z, 16) - 16) < 1e-4, "|A - 0| = %g, expected n = 16", attn_l1_distance(A, Z, 16));
    CHECK(fabs(attn_l1_distance(A, I, 16) - 2 * (16 - tr)) < 1e-4, "|A - I| = %g, expected 2 (n - tr A) = %g", attn_l1_distance(A, I, 16), 2 * (16 - tr));
    for (i = 0; i < 16; i++)
        for (j = 0; j < 16; j++) off += abs(i - j) > 3 ? A[i * 16 + j] : 0;
    CHECK(fabs(attn_band_project(P, A, 16, 3) - off) < 1e-5 && P[0 * 16 + 4] == 0 && P[0 * 16 + 3] == A[3],
          "the band projection keeps |i - j| <= 3 and returns the mass outside");
    for (f = 1; f <= 3; f++)
        for (i = 0; i < 20; i++) {
            attn_sigma_candidate(X, 16, f, 3, 2, 0.2, f == 3 ? 0 : 0.05, 0.05, &r);
            for (j = 0; j < 16; j++) {
                double sum = 0;
                int k, ones = 0;
                for (k = 0; k < 16; k++) { sum += X[j * 16 + k]; ones += X[j * 16 + k] == 1; bad += X[j * 16 + k] < 0; }
                bad += fabs(sum - 1) > 1e-5 && sum != 0;
                if (f == 3) bad += ones != 1;
            }
        }
    CHECK(!bad, "sigma candidates: %d rows without unit sum, negative entries or (family 3) not a unit vector", bad);
    CHECK(attn_sigma_distances(mn, me, A, 16, 3, 2, 30, 0.2, 0, 0, &r) == ATTN_OK, "distances: %s", attn_last_error());
    CHECK(fabs(mn[0] - attn_l1_distance(A, I, 16)) < 1e-4 && mn[1] <= me[1] && mn[2] <= me[2], "Min_distance: sigma 1 %g (|A - I| %g), min <= mean",
          mn[0], attn_l1_distance(A, I, 16));
    CHECK(attn_sigma_candidate(X, 16, 3, 10, 2, 0.2, 0, 0, &r) == ATTN_ERR_ARG, "two blocks of 10 in 16 refused");
}

/* Each model made in the caller's memory (attn_*_init_in) holds the same parameters as one that
   attn_*_init allocates, lies inside the caller's block, and its _free releases nothing of it. */
static void test_models_in_caller_memory(void)
{
    attn_cisformer_config cc = attn_cisformer_config_default();
    attn_transformer_config tc = tf_small();
    attn_seq2seq_config sc = attn_seq2seq_config_default();
    attn_cisformer c1, c2;
    attn_transformer t1, t2;
    attn_seq2seq s1, s2;
    attn_rng r;
    size_t cb, tb, sb;
    unsigned char *mem;
    cc.d = 5; cc.ncon = 4;
    tc.window = 2; tc.global = 1; /* the pattern goes into the block too */
    sc.src_vocab = sc.tgt_vocab = 9; sc.d = 8; sc.heads = 2; sc.dk = sc.dv = 4; sc.mlp = 16;
    cb = attn_cisformer_bytes(&cc); tb = attn_transformer_bytes(&tc); sb = attn_seq2seq_bytes(&sc);
    CHECK(cb && tb && sb, "sizes of valid configurations: %lu %lu %lu", (unsigned long)cb, (unsigned long)tb,
          (unsigned long)sb);
    mem = (unsigned char *)malloc(cb + tb + sb);
    attn_rng_seed(&r, 5, 0);
    CHECK(attn_cisformer_init(&c1, &cc, &r) == ATTN_OK, "%s", attn_last_error());
    attn_rng_seed(&r, 5, 0);
    CHECK(attn_cisformer_init_in(&c2, &cc, &r, mem, cb) == ATTN_OK, "%s", attn_last_error());
    CHECK(t_params_equal(&c1.p, &c2.p) && !c2.p.owned && (unsigned char *)c2.p.data >= mem &&
              (unsigned char *)(c2.p.data + 2 * c2.p.total) <= mem + cb,
          "cisformer in the caller's memory: the same parameters, inside the block");
    attn_rng_seed(&r, 6, 0);
    CHECK(attn_transformer_init(&t1, &tc, &r) == ATTN_OK, "%s", attn_last_error());
    attn_rng_seed(&r, 6, 0);
    CHECK(attn_transformer_init_in(&t2, &tc, &r, mem + cb, tb) == ATTN_OK, "%s", attn_last_error());
    CHECK(t_params_equal(&t1.p, &t2.p) && !t2.p.owned && t2.pattern && (unsigned char *)t2.pattern >= mem + cb &&
              (unsigned char *)t2.pattern + sizeof(int) * tc.heads + tc.max_T <= mem + cb + tb &&
              !memcmp(t1.pattern, t2.pattern, sizeof(int) * tc.heads + tc.max_T),
          "transformer with a window in the caller's memory: the same parameters and pattern, inside the block");
    attn_rng_seed(&r, 7, 0);
    CHECK(attn_seq2seq_init(&s1, &sc, &r) == ATTN_OK, "%s", attn_last_error());
    attn_rng_seed(&r, 7, 0);
    CHECK(attn_seq2seq_init_in(&s2, &sc, &r, mem + cb + tb, sb) == ATTN_OK, "%s", attn_last_error());
    CHECK(t_params_equal(&s1.p, &s2.p) && !s2.p.owned, "encoder-decoder in the caller's memory: the same parameters");
    attn_cisformer_free(&c1); attn_cisformer_free(&c2); /* the second frees nothing: free(mem) below */
    attn_transformer_free(&t1); attn_transformer_free(&t2);
    attn_seq2seq_free(&s1); attn_seq2seq_free(&s2);
    free(mem);
}

/* One named field of a model: NULL, or tensor i's value (and g its gradient) with the field's name.
   Counts the non-NULL fields in *n; returns 0 on a mismatch. */
static int t_named(const attn_params *p, const attn_float *v, const attn_float *g, const char *name, int *n)
{
    int i;
    if (!v) return !g;
    for (i = 0; i < p->count; i++)
        if (p->value[i].data == v) break;
    if (i == p->count || p->grad[i].data != g || strcmp(p->name[i], name)) return 0;
    (*n)++;
    return 1;
}
#define T_NAMED(p, W, G, f, n) t_named(p, (W).f, (G).f, #f, n)

/* The three models' tensors by name: every tensor once, under its checkpoint name, value and
   gradient; out-of-range layers refused. */
static void test_named_tensors(void)
{
    attn_rng r;
    int v;
    attn_rng_seed(&r, 9, 0);
    for (v = 0; v < 4; v++) { /* plain; glu + RMS, no bias; differential + T5 + dense; HYLA+ + window */
        attn_transformer_config cf = tf_small();
        attn_transformer m;
        attn_transformer_tensors M, MG;
        int l, n = 0, ok = 1;
        if (v == 1) { cf.glu = 1; cf.norm = ATTN_NORM_RMS; cf.bias = 0; cf.act = ATTN_ACT_SILU; }
        if (v == 2) { cf.kinds[1] = ATTN_DIFFERENTIAL; cf.t5 = 1; cf.vocab = 0; cf.in_dim = 3; }
        if (v == 3) { cf.kinds[0] = ATTN_HYLA_PLUS; cf.window = 1; cf.pos = ATTN_POS_LEARNED; }
        if (attn_transformer_init(&m, &cf, &r) != ATTN_OK) { CHECK(0, "%s", attn_last_error()); continue; }
        M = attn_transformer_named(&m, 0); MG = attn_transformer_named(&m, 1);
        ok &= T_NAMED(&m.p, M, MG, E, &n) & T_NAMED(&m.p, M, MG, Win, &n) & T_NAMED(&m.p, M, MG, bin, &n) &
              T_NAMED(&m.p, M, MG, P, &n) & T_NAMED(&m.p, M, MG, nfg, &n) & T_NAMED(&m.p, M, MG, nfb, &n) &
              T_NAMED(&m.p, M, MG, Wout, &n) & T_NAMED(&m.p, M, MG, bout, &n);
        for (l = 0; l < cf.layers; l++) {
            attn_transformer_layer_tensors W = attn_transformer_layer_named(&m, l, 0),
                                           G = attn_transformer_layer_named(&m, l, 1);
            ok &= T_NAMED(&m.p, W, G, n1g, &n) & T_NAMED(&m.p, W, G, n1b, &n) & T_NAMED(&m.p, W, G, Wq, &n) &
                  T_NAMED(&m.p, W, G, bq, &n) & T_NAMED(&m.p, W, G, Wk, &n) & T_NAMED(&m.p, W, G, bk, &n) &
                  T_NAMED(&m.p, W, G, Wv, &n) & T_NAMED(&m.p, W, G, bv, &n) & T_NAMED(&m.p, W, G, Wo, &n) &
                  T_NAMED(&m.p, W, G, bo, &n) & T_NAMED(&m.p, W, G, lambda, &n) & T_NAMED(&m.p, W, G, gain, &n) &
                  T_NAMED(&m.p, W, G, w2, &n) & T_NAMED(&m.p, W, G, t5, &n) & T_NAMED(&m.p, W, G, n2g, &n) &
                  T_NAMED(&m.p, W, G, n2b, &n) & T_NAMED(&m.p, W, G, W1, &n) & T_NAMED(&m.p, W, G, b1, &n) &
                  T_NAMED(&m.p, W, G, W3, &n) & T_NAMED(&m.p, W, G, b3, &n) & T_NAMED(&m.p, W, G, W2, &n) &
                  T_NAMED(&m.p, W, G, b2, &n);
        }
        CHECK(ok && n == m.p.count, "transformer %d: every tensor by name (%d named of %d)", v, n, m.p.count);
        CHECK(v != 2 || (attn_transformer_layer_named(&m, 1, 0).lambda && attn_transformer_layer_named(&m, 0, 0).t5 &&
                         !attn_transformer_layer_named(&m, 0, 0).lambda && M.Win && !M.E),
              "transformer: the configuration's tensors are there, the others NULL");
        CHECK(!attn_transformer_layer_named(&m, cf.layers, 0).Wq && attn_last_status() == ATTN_ERR_ARG &&
                  !attn_transformer_layer_named(&m, -1, 1).W1,
              "transformer: a layer out of range gives NULL fields and ATTN_ERR_ARG");
        attn_transformer_free(&m);
    }
    for (v = 0; v < 3; v++) { /* the three per-position vectors */
        attn_cisformer_config cf = attn_cisformer_config_default();
        attn_cisformer m;
        attn_cisformer_tensors W, G;
        int n = 0, ok;
        static const char *vec[3] = {"b", "u", "g"};
        cf.d = 3; cf.ncon = 4; cf.vec = (attn_cis_vec)v;
        if (attn_cisformer_init(&m, &cf, &r) != ATTN_OK) { CHECK(0, "%s", attn_last_error()); continue; }
        W = attn_cisformer_named(&m, 0); G = attn_cisformer_named(&m, 1);
        ok = T_NAMED(&m.p, W, G, Wq, &n) & T_NAMED(&m.p, W, G, Wk, &n) & T_NAMED(&m.p, W, G, Wv, &n) &
             T_NAMED(&m.p, W, G, W1, &n) & T_NAMED(&m.p, W, G, W2, &n) & T_NAMED(&m.p, W, G, R, &n) &
             T_NAMED(&m.p, W, G, r, &n) & t_named(&m.p, W.vec, G.vec, vec[v], &n);
        CHECK(ok && n == m.p.count, "cisformer %d: every tensor by name (%d named of %d)", v, n, m.p.count);
        attn_cisformer_free(&m);
    }
    {
        attn_seq2seq_config cf = attn_seq2seq_config_default();
        attn_seq2seq m;
        attn_seq2seq_tensors M, MG;
        int s, n = 0, ok;
        cf.d = 8; cf.heads = 2; cf.dk = cf.dv = 4; cf.mlp = 16; cf.enc_layers = 2; cf.dec_layers = 2;
        if (attn_seq2seq_init(&m, &cf, &r) == ATTN_OK) {
            M = attn_seq2seq_named(&m, 0); MG = attn_seq2seq_named(&m, 1);
            ok = T_NAMED(&m.p, M, MG, Es, &n) & T_NAMED(&m.p, M, MG, Et, &n) & T_NAMED(&m.p, M, MG, Wout, &n) &
                 T_NAMED(&m.p, M, MG, bout, &n);
            for (s = 0; s < 2 * cf.enc_layers + 3 * cf.dec_layers; s++) {
                attn_seq2seq_sublayer_tensors W = attn_seq2seq_sublayer_named(&m, s, 0),
                                              G = attn_seq2seq_sublayer_named(&m, s, 1);
                int ffn = s < 2 * cf.enc_layers ? s % 2 : (s - 2 * cf.enc_layers) % 3 == 2;
                ok &= T_NAMED(&m.p, W, G, Wq, &n) & T_NAMED(&m.p, W, G, bq, &n) & T_NAMED(&m.p, W, G, Wk, &n) &
                      T_NAMED(&m.p, W, G, bk, &n) & T_NAMED(&m.p, W, G, Wv, &n) & T_NAMED(&m.p, W, G, bv, &n) &
                      T_NAMED(&m.p, W, G, Wo, &n) & T_NAMED(&m.p, W, G, bo, &n) & T_NAMED(&m.p, W, G, W1, &n) &
                      T_NAMED(&m.p, W, G, b1, &n) & T_NAMED(&m.p, W, G, W2, &n) & T_NAMED(&m.p, W, G, b2, &n) &
                      T_NAMED(&m.p, W, G, g, &n) & T_NAMED(&m.p, W, G, b, &n);
                ok &= ffn ? W.W1 && !W.Wq : W.Wq && !W.W1;
            }
            CHECK(ok && n == m.p.count, "encoder-decoder: every tensor by name (%d named of %d)", n, m.p.count);
            CHECK(!attn_seq2seq_sublayer_named(&m, s, 0).g && attn_last_status() == ATTN_ERR_ARG,
                  "encoder-decoder: a sublayer out of range gives NULL fields and ATTN_ERR_ARG");
            attn_seq2seq_free(&m);
        } else {
            CHECK(0, "%s", attn_last_error());
        }
    }
}


/* The encoder options in other company: post-norm blocks with RMSNorm, a gated MLP, an embedding
   norm, a padding mask and a head, against finite differences (float64) and with a padded position
   changing nothing the others compute. */
static void test_transformer_encoder_options(void)
{
    attn_transformer_config cf = tf_small();
    attn_transformer m;
    attn_rng r;
    attn_float y[2 * 6 * 4], y2[2 * 6 * 4], *cache;
    int tok[12] = {1, 3, 4, 2, 0, 0, 2, 2, 1, 4, 3, 0}, i;
    size_t wb;
    void *work;
    cf.causal = 0; cf.post_norm = 1; cf.emb_norm = 1; cf.pad_mask = 1; cf.pad = 0; cf.norm = ATTN_NORM_RMS;
    cf.glu = 1; cf.act = ATTN_ACT_SILU; cf.pos = ATTN_POS_LEARNED;
    attn_rng_seed(&r, 77, 0);
    CHECK(attn_transformer_init(&m, &cf, &r) == ATTN_OK, "init: %s", attn_last_error());
    for (i = 0; i < (int)m.p.total; i++) m.p.data[i] += (attn_float)(0.2 * attn_rng_normal(&r, 0, 1));
    cache = t_alloc(attn_transformer_cache_floats(&m, 2, 6));
    work = malloc(wb = attn_transformer_work_bytes(&m, 2, 6));
    CHECK(attn_transformer_forward(&m, y, cache, attn_transformer_cache_floats(&m, 2, 6), tok, NULL, 2, 6, work, wb) == ATTN_OK, "forward: %s", attn_last_error());
    tok[5] = 0; tok[4] = 0; /* already pad; a third pad changes nothing the first four rows compute */
    tok[3] = 0;
    CHECK(attn_transformer_forward(&m, y2, cache, attn_transformer_cache_floats(&m, 2, 6), tok, NULL, 2, 6, work, wb) == ATTN_OK, "forward: %s", attn_last_error());
    CHECK(memcmp(y + 6 * 4, y2 + 6 * 4, sizeof(attn_float) * 6 * 4) == 0, "a padded row leaves the other sequence alone");
    tok[3] = 2;
    if (T_DOUBLE)
        tf_gradcheck("transformer: post-norm RMSNorm blocks, SwiGLU, embedding norm, padding mask", &m, tok, 2, 6, y,
                     cache, work, wb, (size_t)2 * 6 * 4);
    { /* pad_mask 2: padding is -1 (embedded as pad), and a pad token in the text is a key like any other */
        int tok2[12] = {1, 3, 4, 2, -1, -1, 2, 2, 1, 4, 3, -1}, lit1[12] = {1, 0, 4, 2, 0, 0, 2, 2, 1, 4, 3, 0};
        int lit2[12] = {1, 0, 4, 2, -1, -1, 2, 2, 1, 4, 3, -1};
        attn_float y3[2 * 6 * 4];
        void *work2;
        size_t wb2;
        CHECK(attn_transformer_forward(&m, y, cache, attn_transformer_cache_floats(&m, 2, 6), tok, NULL, 2, 6, work, wb) == ATTN_OK, "forward: %s",
              attn_last_error());
        CHECK(attn_transformer_forward(&m, y3, cache, attn_transformer_cache_floats(&m, 2, 6), lit1, NULL, 2, 6, work, wb) == ATTN_OK, "forward: %s",
              attn_last_error());
        tok[3] = -1;
        CHECK(attn_transformer_forward(&m, y2, cache, attn_transformer_cache_floats(&m, 2, 6), tok, NULL, 2, 6, work, wb) == ATTN_ERR_ARG,
              "pad_mask 1 refuses token -1");
        tok[3] = 2;
        m.cfg.pad_mask = 2;
        work2 = malloc(wb2 = attn_transformer_work_bytes(&m, 2, 6));
        CHECK(wb2 > wb && attn_transformer_forward(&m, y2, cache, attn_transformer_cache_floats(&m, 2, 6), tok2, NULL, 2, 6, work2, wb2) == ATTN_OK &&
                  memcmp(y, y2, sizeof y) == 0,
              "pad_mask 2: padding given as -1 computes what pad_mask 1 computes with pad: %s", attn_last_error());
        CHECK(attn_transformer_forward(&m, y2, cache, attn_transformer_cache_floats(&m, 2, 6), lit2, NULL, 2, 6, work2, wb2) == ATTN_OK &&
                  memcmp(y2, y3, sizeof(attn_float) * 4) != 0 && memcmp(y2 + 24, y3 + 24, sizeof(attn_float) * 24) == 0,
              "pad_mask 2: a pad token in the text is seen (pad_mask 1 hides it), the other sequence unchanged");
        tok2[0] = -2;
        CHECK(attn_transformer_forward(&m, y2, cache, attn_transformer_cache_floats(&m, 2, 6), tok2, NULL, 2, 6, work2, wb2) == ATTN_ERR_ARG,
              "pad_mask 2 refuses token -2");
        tok2[0] = 1;
        if (T_DOUBLE)
            tf_gradcheck("transformer: the padding mask with padding -1 (pad_mask 2)", &m, tok2, 2, 6, y, cache, work2,
                         wb2, (size_t)2 * 6 * 4);
        m.cfg.pad_mask = 3;
        CHECK(attn_transformer_work_bytes(&m, 2, 6) == 0 || attn_transformer_forward(&m, y2, cache, attn_transformer_cache_floats(&m, 2, 6), tok, NULL, 2, 6,
                                                                                    work2, wb2) == ATTN_ERR_ARG,
              "pad_mask 3 is refused");
        m.cfg.pad_mask = 1;
        free(work2);
    }
    free(cache); free(work);
    attn_transformer_free(&m);
}

/* BERT in Hugging Face's layout (tests/data/bert_tiny, written by tests/bert_check.py: a random
   2-layer BERT with the position_ids buffer, and a padded batch's mean-pooled, L2-normalised
   embeddings from an independent numpy model): the encoder options (post-norm blocks, the
   embeddings' norm, the padding mask, no head) and attn_mean_pool against it, each sentence alone
   as in the batch; the options survive a checkpoint; finite differences through all of them
   (float64); decoding refuses the encoder. */
static void test_bert_hf(void)
{
    attn_transformer m, back;
    FILE *f = fopen("tests/data/bert_tiny/embeddings.txt", "r");
    int tok[64], B = 0, T = 0, i, ok, d;
    double want, worst = 0, worst1 = 0;
    attn_float *h = NULL, *e = NULL, *e1 = NULL, *cache = NULL;
    unsigned char mask[64];
    void *work = NULL;
    size_t wb;
    if (!f || fscanf(f, "%d %d", &B, &T) != 2 || B * T > 64) {
        CHECK(0, "bert: tests/data/bert_tiny/embeddings.txt missing or bad");
        if (f) fclose(f);
        return;
    }
    for (i = 0; i < B * T; i++) ok = fscanf(f, "%d", &tok[i]);
    ok = attn_transformer_load_hf(&m, "tests/data/bert_tiny") == ATTN_OK;
    CHECK(ok && m.cfg.post_norm && m.cfg.emb_norm && m.cfg.pad_mask && !m.cfg.out && !m.cfg.causal &&
              m.cfg.act == ATTN_ACT_GELU_ERF,
          "bert: the fixture loads: %s", attn_last_error());
    if (!ok) {
        fclose(f);
        return;
    }
    d = m.cfg.d;
    for (i = 0; i < B * T; i++) mask[i] = tok[i] != m.cfg.pad;
    wb = attn_transformer_work_bytes(&m, B, T);
    h = t_alloc((size_t)B * T * d); e = t_alloc((size_t)B * d); e1 = t_alloc((size_t)d);
    cache = t_alloc(attn_transformer_cache_floats(&m, B, T));
    work = malloc(wb);
    ok = attn_transformer_forward(&m, h, cache, attn_transformer_cache_floats(&m, B, T), tok, NULL, B, T, work, wb) == ATTN_OK &&
         attn_mean_pool(e, h, mask, B, T, d, 1) == ATTN_OK;
    for (i = 0; ok && i < B * d; i++) {
        if (fscanf(f, "%lf", &want) != 1) ok = 0;
        else if (fabs(want - e[i]) > worst) worst = fabs(want - e[i]);
    }
    fclose(f);
    CHECK(ok && worst < 1e3 * T_EPS + 2e-8, "bert: embeddings against the numpy model (to 9 digits): worst %.3g", worst);
    for (i = 0; ok && i < B; i++) { /* each sentence alone, without its padding */
        int n = 0, j;
        while (n < T && tok[i * T + n] != m.cfg.pad) n++;
        ok = attn_transformer_forward(&m, h, cache, attn_transformer_cache_floats(&m, 1, n), tok + i * T, NULL, 1, n, work, wb) == ATTN_OK &&
             attn_mean_pool(e1, h, NULL, 1, n, d, 1) == ATTN_OK;
        for (j = 0; ok && j < d; j++) worst1 = fmax(worst1, fabs((double)e1[j] - e[(size_t)i * d + j]));
    }
    CHECK(ok && worst1 < 64 * T_EPS, "bert: a sentence alone embeds as in the padded batch: %.3g", worst1);
    ok = attn_transformer_save(&m, "build/bert.ckpt") == ATTN_OK && attn_transformer_load(&back, "build/bert.ckpt") == ATTN_OK;
    CHECK(ok && !memcmp(&back.cfg, &m.cfg, sizeof m.cfg) && t_params_equal(&back.p, &m.p),
          "bert: a checkpoint keeps the encoder options: %s", attn_last_error());
    if (ok) attn_transformer_free(&back);
    remove("build/bert.ckpt");
    if (T_DOUBLE) /* finite differences through the encoder options, the padding mask included */
        tf_gradcheck("bert: post-norm encoder, embedding norm, padding mask, no head", &m, tok, B, T, h, cache, work,
                     wb, (size_t)B * T * d);
    CHECK(attn_transformer_kv_bytes(&m, 8) == 0, "bert: decoding refuses a non-causal encoder");
    free(h); free(e); free(e1); free(cache); free(work);
    attn_transformer_free(&m);
}

/* Llama in Hugging Face's layout (tests/data/llama_tiny, written by tests/llama_check.py: a random
   2-layer Llama with grouped-query heads, rope_theta 500, an untied head, the "model." prefix and
   an old rotary_emb.inv_freq buffer, and its logits from an independent numpy model with
   rotate_half's pairs): loaded, its logits against numpy's, decoded with the cache as the full
   pass, a checkpoint keeping rope_theta; rope_scaling and another activation refused. */
/* A Hugging Face fixture of tests/data (DIR/logits.txt: the token ids, then numpy's logits to 9
   digits): loads DIR into *m, runs the tokens, and returns the largest difference of the logits
   from numpy's (-1 when something fails: the model then is not loaded); the tokens in tok [64]
   and *T, the logits in *y (malloc'd) when it does not fail. */
static double hf_fixture(const char *dir, attn_transformer *m, int *tok, int *T, attn_float **y)
{
    char path[256];
    FILE *f;
    attn_float *cache;
    void *work;
    size_t wb;
    double want, worst = 0;
    int i, ok;
    snprintf(path, sizeof path, "%s/logits.txt", dir);
    if (!(f = fopen(path, "r"))) return -1;
    for (*T = 0; *T < 64 && fscanf(f, "%d", &tok[*T]) == 1 && fgetc(f) == ' ';) ++*T;
    ++*T;
    if (attn_transformer_load_hf(m, dir) != ATTN_OK) return fclose(f), -1;
    wb = attn_transformer_work_bytes(m, 1, *T);
    *y = (attn_float *)malloc(sizeof(attn_float) * (size_t)*T * m->cfg.out);
    cache = (attn_float *)malloc(sizeof(attn_float) * attn_transformer_cache_floats(m, 1, *T));
    work = malloc(wb);
    ok = *y && cache && work && attn_transformer_forward(m, *y, cache, attn_transformer_cache_floats(m, 1, *T), tok, NULL, 1, *T, work, wb) == ATTN_OK;
    for (i = 0; ok && i < *T * m->cfg.out; i++) {
        if (fscanf(f, "%lf", &want) != 1) ok = 0;
        else if (fabs(want - (*y)[i]) > worst) worst = fabs(want - (*y)[i]);
    }
    fclose(f); free(cache); free(work);
    if (!ok) free(*y), attn_transformer_free(m);
    return ok ? worst : -1;
}

static void test_llama_hf(void)
{
    attn_transformer m, back;
    attn_float *y;
    int tok[64], T, i, ok;
    double worst = hf_fixture("tests/data/llama_tiny", &m, tok, &T, &y);
    CHECK(worst >= 0 && m.cfg.layers == 2 && m.cfg.heads == 4 && m.cfg.kv_heads == 2 && m.cfg.rope_theta == 500 &&
              m.cfg.norm == ATTN_NORM_RMS && m.cfg.glu && !m.cfg.bias,
          "llama: the fixture loads and runs: %s", attn_last_error());
    if (worst < 0) return;
    CHECK(worst < 1e3 * T_EPS + 2e-8, "llama: logits against the numpy model (to 9 digits): worst %.3g", worst);
    {
        static const int calls[] = {5, 1};
        double diff = t_decode_diff(&m, NULL, tok, T, calls, 2, y, m.cfg.out);
        CHECK(diff >= 0 && diff < (T_DOUBLE ? 1e-12 : 1e-5), "llama: decoding with the cache: %.3g (%s)", diff,
              attn_last_error());
    }
    ok = attn_transformer_save(&m, "build/llama.ckpt") == ATTN_OK && attn_transformer_load(&back, "build/llama.ckpt") == ATTN_OK;
    CHECK(ok && back.cfg.rope_theta == 500 && t_params_equal(&back.p, &m.p), "llama: a checkpoint keeps rope_theta: %s",
          attn_last_error());
    if (ok) attn_transformer_free(&back);
    remove("build/llama.ckpt");
    ok = attn_transformer_save_hf(&m, "build") == ATTN_OK && attn_transformer_load_hf(&back, "build") == ATTN_OK;
    CHECK(ok && t_params_equal(&back.p, &m.p) && !memcmp(&back.cfg, &m.cfg, sizeof m.cfg),
          "llama: saved in Hugging Face's layout and loaded again bit for bit: %s", attn_last_error());
    if (ok) attn_transformer_free(&back);
    m.cfg.causal = 0; /* neither GPT-2's shape nor Llama's: refused, nothing written */
    remove("build/model.safetensors");
    CHECK(attn_transformer_save_hf(&m, "build") == ATTN_ERR_ARG &&
              strstr(attn_last_error(), "nor Llama's (bidirectional attention)") &&
              !fopen("build/model.safetensors", "rb"),
          "llama: a model of neither layout's shape is refused: %s", attn_last_error());
    m.cfg.causal = 1;
    {
        static const char *bad[2] = {"{\"model_type\": \"llama\", \"vocab_size\": 53, \"hidden_size\": 24, \"intermediate_size\": 40, "
                                     "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"max_position_embeddings\": 32, "
                                     "\"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8.0}}",
                                     "{\"model_type\": \"llama\", \"vocab_size\": 53, \"hidden_size\": 24, \"intermediate_size\": 40, "
                                     "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"max_position_embeddings\": 32, "
                                     "\"hidden_act\": \"gelu\"}"};
        for (i = 0; i < 2; i++) {
            FILE *c = fopen("build/config.json", "w");
            if (c) fputs(bad[i], c), fclose(c);
            CHECK(attn_transformer_load_hf(&back, "build") == ATTN_ERR_FORMAT && strstr(attn_last_error(), "rope_scaling"),
                  "llama: a config.json attn.h cannot honour is refused: %s", attn_last_error());
        }
        remove("build/config.json");
    }
    free(y);
    attn_transformer_free(&m);
}

/* GPT-2 in Hugging Face's layout (tests/data/gpt2_tiny, written by tests/gpt2_check.py: a random
   2-layer GPT-2 with the "transformer." prefix and the attn.bias buffer, and its logits from an
   independent numpy model): loaded, its logits against numpy's; saved and loaded again bit for bit;
   a wrong model type, a head count that does not divide the width, a missing tensor and a
   misshapen one refused with what is wrong. */
static void test_gpt2_hf(void) /* the logits file holds 9 digits: 2e-8 at these sizes */
{
    attn_transformer m, back;
    attn_float *y;
    int tok[64], T, i, ok;
    double worst = hf_fixture("tests/data/gpt2_tiny", &m, tok, &T, &y);
    CHECK(worst >= 0 && m.cfg.layers == 2 && m.cfg.heads == 3 && m.cfg.d == 24 && m.cfg.act == ATTN_ACT_GELU_TANH,
          "gpt2: the fixture loads and runs: %s", attn_last_error());
    if (worst < 0) return;
    CHECK(worst < 1e3 * T_EPS + 2e-8, "gpt2: logits against the numpy model (to 9 digits): worst %.3g", worst);
    ok = attn_transformer_save_hf(&m, "build") == ATTN_OK && attn_transformer_load_hf(&back, "build") == ATTN_OK;
    CHECK(ok && t_params_equal(&back.p, &m.p) && !memcmp(&back.cfg, &m.cfg, sizeof m.cfg),
          "gpt2: saved and loaded again bit for bit: %s", attn_last_error());
    if (ok) attn_transformer_free(&back);
    {
        static const char *bad[2] = {"{\"model_type\": \"t5\", \"vocab_size\": 61}",
                                     "{\"model_type\": \"gpt2\", \"vocab_size\": 61, \"n_embd\": 24, \"n_layer\": 2, "
                                     "\"n_head\": 5, \"n_positions\": 20}"};
        static const char *why[2] = {"t5", "heads"};
        for (i = 0; i < 2; i++) {
            FILE *c = fopen("build/config.json", "w");
            if (c) fputs(bad[i], c), fclose(c);
            CHECK(attn_transformer_load_hf(&back, "build") == ATTN_ERR_FORMAT && strstr(attn_last_error(), why[i]),
                  "gpt2: a bad config.json refused: %s", attn_last_error());
        }
    }
    {
        attn_transformer_tensors M = attn_transformer_named(&m, 0);
        attn_tensor t[2] = {{M.E, 2, {61, 24}}, {M.P, 2, {20, 24}}};
        const char *names[2] = {"wte.weight", "wpe.weight"};
        ok = attn_transformer_save_hf(&m, "build") == ATTN_OK && /* a good config.json, then two tensors only */
             attn_safetensors_save("build/model.safetensors", names, t, 2, NULL, 0) == ATTN_OK;
        CHECK(ok && attn_transformer_load_hf(&back, "build") != ATTN_OK && strstr(attn_last_error(), "ln_f.weight"),
              "gpt2: a missing tensor is named: %s", attn_last_error());
        t[1].shape[0] = 19;
        t[1].shape[1] = 24;
        ok = attn_safetensors_save("build/model.safetensors", names, t, 2, NULL, 0) == ATTN_OK;
        CHECK(ok && attn_transformer_load_hf(&back, "build") == ATTN_ERR_SHAPE && strstr(attn_last_error(), "wpe.weight"),
              "gpt2: a misshapen tensor is named: %s", attn_last_error());
    }
    free(y);
    attn_transformer_free(&m);
}

void test_models(void)
{
    test_named_tensors();
    test_models_in_caller_memory();
    test_cisformer_counts();
    test_cisformer_forward_backward();
    test_cisformer_backward_sgd();
    test_cisformer_init();
    test_cisformer_bad_input();
    test_checkpoints();
    test_checkpoint_compat();
    test_transformer_decode();
    test_transformer_pack();
    test_transformer_window();
    test_transformer_window_cache();
    test_sample();
    test_transformer_forward();
    test_transformer_backward();
    test_gradcheck_params();
    test_transformer_hyla_presets();
    test_transformer_bad_input();
    test_transformer_documents();
    test_transformer_checkpoint();
    test_transformer_sparse();
    test_transformer_gqa();
    test_transformer_qk_norm();
    test_transformer_modifiers();
    test_llama_hf();
    test_bert_hf();
    test_transformer_encoder_options();
    test_plot_svg();
    test_transformer_weights();
    test_transformer_pruned();
    test_transformer_grad();
    test_probe_cosine_heatmap();
    test_collapse_probe();
    test_band_analysis();
    test_gpt2_hf();
}
