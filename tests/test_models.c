/* Models: the cisformer's parameter counts (SPEC 4.1's table), its forward pass against a naive
   per-window implementation of the SPEC formulas, its backward pass against finite differences for
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

/* y [d] of one window by SPEC 4.1, position by position, in double. */
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
                q[c][e] += Wq[(c * d + e) * d + k] * xt[c][k];
                kk[c][e] += Wk[(c * d + e) * d + k] * xt[c][k];
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
    attn_cisformer_forward(&c->m, c->y, c->cache, c->tok, c->stride, c->nb, c->work, c->wb);
}

static void cis_b(void *p, const attn_float *dy)
{
    cis_ctx *c = (cis_ctx *)p;
    attn_cisformer_backward(&c->m, dy, c->cache, c->nb, c->work, c->wb);
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
        CHECK(attn_cisformer_param_count(&cf) == (size_t)table[i][2], "cisformer N%d ncon %d: %lu parameters, SPEC says %d", cf.d, cf.ncon,
              (unsigned long)attn_cisformer_param_count(&cf), table[i][2]);
    }
    {
        attn_cisformer_config cf = {0};
        attn_cisformer m;
        cf.d = 16; cf.ncon = 128; cf.kind = ATTN_EXPRESSIVE; cf.scale = 1; cf.vec = ATTN_CIS_LN_GAINS;
        CHECK(attn_cisformer_param_count(&cf) == 393488, "the LN-gains alternative at N16/128: %lu (SPEC 393,488)", (unsigned long)attn_cisformer_param_count(&cf));
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
    for (v = 0; v <= ATTN_CIS_LN_GAINS; v++)
        for (k = 0; k < 3; k++) {
            cis_ctx c;
            attn_cisformer_config cf = {0};
            int len, i, stride;
            double worst = 0;
            char what[96];
            cf.d = 3; cf.ncon = 5; cf.kind = kinds[k]; cf.scale = k == 2 ? 0 : 1; cf.vec = (attn_cis_vec)v;
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
                CHECK(worst <= 1e3 * T_EPS, "cisformer %s vec %d stride %d: forward differs from the naive SPEC 4.1 by %.3g",
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
    CHECK(attn_cisformer_forward(&m, y, cache, tok, 4, 1, work, wb) == ATTN_ERR_ARG && y[0] == 7, "a token out of range refused, nothing written");
    tok[2] = 2;
    CHECK(attn_cisformer_forward(&m, y, cache, tok, 4, 1, work, wb - 1) == ATTN_ERR_NOMEM && y[0] == 7, "a short workspace refused");
    CHECK(attn_cisformer_forward(&m, y, cache, tok, 0, 1, work, wb) == ATTN_ERR_SHAPE, "stride 0 refused");
    CHECK(attn_cisformer_forward(&m, y, cache, tok, 4, 1, work, wb) == ATTN_OK, "a valid call: %s", attn_last_error());
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
    attn_float vals[5] = {1.5f, -2.25f, 0, 3e-8f, 1e20f}, got[5], keep[5] = {9, 9, 9, 9, 9};
    unsigned char rec[256];
    size_t n = attn_checkpoint_bytes(2, 5), i;
    int tok[8] = {0, 1, 2, 3, 0, 1, 2, 3}, bad = 0, e;
    const char *path = "build/test_checkpoint.ckpt";
    FILE *f;
    CHECK(n == 52 + 8 + 5 * sizeof(attn_float) && n <= sizeof rec, "record size %lu", (unsigned long)n);
    CHECK(attn_checkpoint_write(rec, n, "toy", cfgw, 2, vals, 5) == ATTN_OK, "write: %s", attn_last_error());
    CHECK(attn_checkpoint_read(&h, got, 5, rec, n) == ATTN_OK && !strcmp(h.model, "toy") && h.nconfig == 2 && h.config[0] == 3 &&
              h.config[1] == -7 && h.count == 5 && h.float_bytes == (int)sizeof(attn_float) && !memcmp(got, vals, sizeof vals),
          "memory round trip: %s", attn_last_error());
    for (i = 0; i < n; i++) { /* any flipped bit is caught: by a field check or by the hash */
        int b;
        for (b = 0; b < 8; b++) {
            memcpy(got, keep, sizeof keep);
            rec[i] ^= (unsigned char)(1 << b);
            bad += attn_checkpoint_read(&h, got, 5, rec, n) != ATTN_ERR_FORMAT || memcmp(got, keep, sizeof keep) != 0;
            rec[i] ^= (unsigned char)(1 << b);
        }
    }
    CHECK(bad == 0, "%d of %lu single-bit corruptions were not refused", bad, (unsigned long)(8 * n));
    for (i = 0, bad = 0; i < n; i++) bad += attn_checkpoint_read(&h, got, 5, rec, i) != ATTN_ERR_FORMAT;
    CHECK(bad == 0 && memcmp(got, keep, sizeof keep) == 0, "%d truncations were not refused", bad);
    CHECK(attn_checkpoint_read(&h, got, 4, rec, n) == ATTN_ERR_SHAPE && !memcmp(got, keep, sizeof keep), "a destination of the wrong size refused");
    CHECK(attn_checkpoint_write(rec, n - 1, "toy", cfgw, 2, vals, 5) == ATTN_ERR_NOMEM, "a short buffer refused");
    CHECK(attn_checkpoint_write(rec, n, "a-name-of-17-chrs", cfgw, 2, vals, 5) == ATTN_ERR_ARG, "a long model name refused");
    { /* a float64 record (as a double build writes it) reads into this build, rounded */
        static const unsigned char hdr[12] = {'A', 'T', 'T', 'N', 'C', 'K', 'P', 'T', 1, 0, 0, 0};
        unsigned char d64[52 + 8];
        double x = 0.1;
        uint64_t bits, hs = 14695981039346656037ull;
        memset(d64, 0, sizeof d64);
        memcpy(d64, hdr, 12);
        memcpy(d64 + 12, "f64", 3);
        d64[32] = 8; d64[36] = 1; /* float bytes 8, count 1 */
        memcpy(&bits, &x, 8);
        for (e = 0; e < 8; e++) d64[44 + e] = (unsigned char)(bits >> (8 * e));
        for (e = 0; e < 52; e++) hs = (hs ^ d64[e]) * 1099511628211ull;
        for (e = 0; e < 8; e++) d64[52 + e] = (unsigned char)(hs >> (8 * e));
        CHECK(attn_checkpoint_read(&h, got, 1, d64, sizeof d64) == ATTN_OK && got[0] == (attn_float)0.1 && h.float_bytes == 8,
              "a float64 record: %s", attn_last_error());
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
        attn_cisformer_forward(&m, y1, cache, tok, 1, 4, work, wb);
        attn_cisformer_forward(&back, y2, cache, tok, 1, 4, work, wb);
        CHECK(back.cfg.d == 4 && back.cfg.ncon == 5 && back.cfg.kind == ATTN_EXPRESSIVE && back.cfg.scale == 0.75f &&
                  back.cfg.vec == ATTN_CIS_LN_GAINS && back.p.total == m.p.total && !memcmp(back.p.data, m.p.data, sizeof(attn_float) * m.p.total) &&
                  !memcmp(y1, y2, sizeof y1),
              "the loaded cisformer differs from the saved one");
        attn_cisformer_free(&back);
        free(cache); free(work);
    }
    CHECK(attn_checkpoint_save(path, "toy", cfgw, 2, vals, 5) == ATTN_OK && attn_cisformer_load(&back, path) == ATTN_ERR_FORMAT,
          "another model's checkpoint refused");
    f = fopen(path, "wb");
    if (f) { fputs("not a checkpoint", f); fclose(f); }
    CHECK(attn_cisformer_load(&back, path) == ATTN_ERR_FORMAT, "a text file refused");
    CHECK(attn_cisformer_load(&back, "build/no-such-dir/x.ckpt") == ATTN_ERR_IO, "a missing file refused");
    remove(path);
    attn_cisformer_free(&m);
}

void test_models(void)
{
    test_cisformer_counts();
    test_cisformer_forward_backward();
    test_cisformer_init();
    test_cisformer_bad_input();
    test_checkpoints();
}
