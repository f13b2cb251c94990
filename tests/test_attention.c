/* Attention: forward against a naive reference that materialises the scores, backward against
   finite differences, a hand-computed single-query row, identities, thread independence, bad input. */
#include "test.h"
#include <limits.h>

/* The reference: O[B, H, Tq, dv] and A[B, H, Tq, Tk] by the papers' definitions, in double,
   one query row at a time with everything materialised. */
static double naive_phi(double x) { return x > 0 ? x + 1 : exp(x); }
static double naive_relu(double x) { return x > 0 ? x : 0; }

/* Dropout's scale for entry (i, j): the splitmix64 definition in attn.h's desc comment, keyed by
   the query's key position p = i + Tk - Tq (negative when Tq > Tk: two's complement wraps it). */
static double naive_keep(const attn_attention_desc *d, int i, int j)
{
    uint64_t p = (uint64_t)(int64_t)(i + d->Tk - d->Tq);
    uint64_t z = d->dropout_seed + 0x9E3779B97F4A7C15ull * (p * (uint64_t)d->Tk + (uint64_t)j + 1);
    if (d->dropout <= 0) return 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 40) < (1 - (double)d->dropout) * 16777216.0 ? 1 / (1 - (double)d->dropout) : 0;
}

/* Scores s[j] = scale q.k (over columns [c0, c0 + w) of q and k) + bias, and visibility vis[j]
   (causal, key mask, Longformer pattern) of query i, head h, batch b. */
static void naive_scores(const attn_attention_desc *d, const attn_float *Q, const attn_float *K, int b, int h, int i,
                         int c0, int w, double scale, double *s, int *vis)
{
    size_t bh = (size_t)b * d->H + h;
    int j, c;
    for (j = 0; j < d->Tk; j++) {
        s[j] = 0;
        for (c = c0; c < c0 + w; c++) s[j] += (double)Q[(bh * d->Tq + i) * d->dk + c] * K[(bh * d->Tk + j) * d->dk + c];
        s[j] = s[j] * scale + (d->bias ? d->bias[((size_t)h * d->Tq + i) * d->Tk + j] : 0);
        vis[j] = (!d->causal || j <= i + d->Tk - d->Tq) && (!d->key_mask || d->key_mask[b * d->Tk + j]) &&
                 (!d->segment || d->segment[b * d->Tk + i + d->Tk - d->Tq] == d->segment[b * d->Tk + j]);
        if (d->window > 0) { /* Longformer: j = p + m dil, |m| <= w (causal: m <= 0), or global */
            int p = i + d->Tk - d->Tq, dil = d->dilation ? d->dilation[h] : 1, off = j - p;
            int in_window = off % dil == 0 && off / dil >= -d->window && off / dil <= (d->causal ? 0 : d->window);
            int glob = d->global && (d->global[j] || (p >= 0 && p < d->Tk && d->global[p]));
            vis[j] = vis[j] && (in_window || glob);
        }
        if (d->block > 0) {
            int nq = (d->Tq + d->block - 1) / d->block, nk = (d->Tk + d->block - 1) / d->block;
            vis[j] = vis[j] && d->layout[((size_t)h * nq + i / d->block) * nk + j / d->block];
        }
    }
}

/* The weights of one row for the kinds that normalise each head's row on its own. */
static void naive_row(attn_kind kind, const double *s, const int *vis, int Tk, double *a)
{
    double m = 0, sum = 0;
    int j, any = 0, nv = 0;
    for (j = 0; j < Tk; j++)
        if (vis[j]) {
            double x = kind == ATTN_COG ? fabs(s[j]) : s[j];
            if (!any || x > m) m = x;
            any = 1;
            nv++;
        }
    for (j = 0; j < Tk; j++) {
        a[j] = 0;
        if (!vis[j]) continue;
        if (kind == ATTN_EXPRESSIVE) a[j] = s[j] * s[j] / (1 + s[j] * s[j]);
        else a[j] = exp((kind == ATTN_COG ? fabs(s[j]) : s[j]) - m);
        sum += a[j];
    }
    for (j = 0; j < Tk; j++) {
        a[j] = sum < 1e-300 ? 0 : a[j] / sum;
        if (kind == ATTN_COG) a[j] = s[j] > 0 ? a[j] : s[j] < 0 ? -a[j] : 0;
        if (kind == ATTN_CENTERED && vis[j]) a[j] -= 1.0 / nv;
        if (kind == ATTN_SIGMOID) a[j] = vis[j] ? 1 / (1 + exp(-(s[j] - log((double)Tk)))) : 0;
        if (kind == ATTN_LINEAR_RAW) a[j] = vis[j] ? s[j] : 0;
    }
}

#define NT 512 /* the reference's largest Tk */
#define NH 8   /* its largest H (head-mixing kinds) */
#define ND 16  /* its largest dv (head-mixing kinds) */
#define NDV 256 /* the per-head kinds' largest dv */

/* The head-mixing kinds for query i of batch b: a_h (into A), then the value network. */
static void naive_mixing(const attn_attention_desc *d, const attn_float *Q, const attn_float *K, const attn_float *V, int b,
                         int i, double scale, double *O, double *A)
{
    static double s[NH][NT], a[NH][NT], u1[NT][ND], u2[NT][ND];
    static int vis[NH][NT];
    int H = d->H, Tk = d->Tk, dv = d->dv, h, j, e, f;
    int rms = d->kind == ATTN_LINEAR_RMSHEAD || d->kind == ATTN_HYLA || d->kind == ATTN_HYLA_LINEAR || d->kind == ATTN_RMSHEAD_RELU_V || d->kind == ATTN_HYLA_PLUS;
    int relu = d->kind != ATTN_HYLA_LINEAR && d->kind != ATTN_HYLA_LINEAR_NO_RMSHEAD;
#define VAL(h, j, e) ((double)V[((((size_t)b * H + (h)) * Tk + (j)) * dv) + (e)])
    for (h = 0; h < H; h++) {
        naive_scores(d, Q, K, b, h, i, 0, d->dk, scale, s[h], vis[h]);
        if (d->kind == ATTN_SOFTMAX_HYLA) naive_row(ATTN_SOFTMAX, s[h], vis[h], Tk, a[h]);
        else for (j = 0; j < Tk; j++) a[h][j] = vis[h][j] ? s[h][j] : 0;
    }
    for (j = 0; j < Tk && rms; j++) { /* RMSHead: a_hij / sqrt(mean_h a_hij^2 + 1e-6) */
        double ms = 0;
        for (h = 0; h < H; h++) ms += a[h][j] * a[h][j] / H;
        for (h = 0; h < H; h++) a[h][j] /= sqrt(ms + 1e-6);
    }
    for (h = 0; h < H; h++)
        for (j = 0; j < Tk; j++) {
            if (A) A[(((size_t)b * H + h) * d->Tq + i) * Tk + j] = a[h][j];
            a[h][j] *= naive_keep(d, i, j);
        }
    for (j = 0; j < Tk; j++) /* the hypernetwork's layers at (i, j) */
        for (e = 0; e < dv; e++) {
            double u = 0;
            for (h = 0; h < H; h++) u += a[h][j] * VAL(h, j, e);
            u1[j][e] = relu ? naive_relu(u) : u;
        }
    for (j = 0; j < Tk && d->kind == ATTN_HYLA_PLUS; j++)
        for (f = 0; f < dv; f++) {
            double u = 0;
            for (h = 0; h < H; h++)
                for (e = 0; e < dv; e++) u += a[h][j] * d->w2[((size_t)h * dv + f) * dv + e] * u1[j][e];
            u2[j][f] = naive_relu(u);
        }
    for (h = 0; h < H; h++)
        for (e = 0; e < dv; e++) {
            double o = 0;
            for (j = 0; j < Tk; j++) {
                double x = d->kind == ATTN_LINEAR_RMSHEAD ? VAL(h, j, e) : d->kind == ATTN_RMSHEAD_RELU_V ? naive_relu(VAL(h, j, e))
                         : d->kind == ATTN_HYLA_PLUS ? u2[j][e] : u1[j][e];
                o += a[h][j] * x;
            }
            O[(((size_t)b * H + h) * d->Tq + i) * dv + e] = o;
        }
#undef VAL
}

static void naive_attention(const attn_attention_desc *d, const attn_float *Q, const attn_float *K,
                            const attn_float *V, double *O, double *A)
{
    int b, h, i, j, c;
    double scale = d->scale != 0 ? d->scale : 1 / sqrt((double)d->dk);
    if (d->kind == ATTN_KERNEL || d->kind == ATTN_TAYLOR) { /* the quadratic forms (Katharopoulos et al. 2020; the thesis' Taylor form) */
        for (b = 0; b < d->B; b++)
            for (h = 0; h < d->H; h++)
                for (i = 0; i < d->Tq; i++) {
                    size_t bh = (size_t)b * d->H + h;
                    double w[NT], den = 1e-6;
                    for (j = 0; j < d->Tk; j++) {
                        int vis = (!d->causal || j <= i + d->Tk - d->Tq) && (!d->key_mask || d->key_mask[b * d->Tk + j]);
                        w[j] = 0;
                        if (vis && d->kind == ATTN_TAYLOR) { /* 1 + qh . kh */
                            double qq = 0, kk = 0, qk = 0;
                            for (c = 0; c < d->dk; c++) {
                                double q = Q[(bh * d->Tq + i) * d->dk + c], k = K[(bh * d->Tk + j) * d->dk + c];
                                qq += q * q; kk += k * k; qk += q * k;
                            }
                            w[j] = 1 + qk / sqrt(qq * kk);
                        }
                        for (c = 0; c < d->dk && vis && d->kind == ATTN_KERNEL; c++)
                            w[j] += naive_phi(Q[(bh * d->Tq + i) * d->dk + c]) * naive_phi(K[(bh * d->Tk + j) * d->dk + c]);
                        den += w[j];
                    }
                    for (c = 0; c < d->dv; c++) {
                        double o = 0;
                        for (j = 0; j < d->Tk; j++) o += w[j] * V[(bh * d->Tk + j) * d->dv + c];
                        O[(bh * d->Tq + i) * d->dv + c] = o / den;
                    }
                }
        return;
    }
    if (d->kind >= ATTN_LINEAR_RMSHEAD) {
        for (b = 0; b < d->B; b++)
            for (i = 0; i < d->Tq; i++) naive_mixing(d, Q, K, V, b, i, scale, O, A);
        return;
    }
    for (b = 0; b < d->B; b++)
        for (h = 0; h < d->H; h++)
            for (i = 0; i < d->Tq; i++) {
                size_t bh = (size_t)b * d->H + h;
                double s[NT], a[NT], o[NDV];
                int vis[NT];
                if (d->kind == ATTN_DIFFERENTIAL) { /* (A1 - lambda A2), A_m the softmax of sub-head m */
                    int w = d->dk / 2;
                    double a2[NT], sc = d->scale != 0 ? d->scale : 1 / sqrt((double)w), lambda = d->lambda_init;
                    if (d->lambda) {
                        double e1 = 0, e2 = 0;
                        for (c = 0; c < w; c++) { e1 += (double)d->lambda[c] * d->lambda[w + c]; e2 += (double)d->lambda[2 * w + c] * d->lambda[3 * w + c]; }
                        lambda += exp(e1) - exp(e2);
                    }
                    naive_scores(d, Q, K, b, h, i, w, w, sc, s, vis);
                    naive_row(ATTN_SOFTMAX, s, vis, d->Tk, a2);
                    naive_scores(d, Q, K, b, h, i, 0, w, sc, s, vis);
                    naive_row(ATTN_SOFTMAX, s, vis, d->Tk, a);
                    for (j = 0; j < d->Tk; j++) a[j] -= lambda * a2[j];
                } else {
                    naive_scores(d, Q, K, b, h, i, 0, d->dk, scale, s, vis);
                    naive_row(d->kind, s, vis, d->Tk, a);
                }
                if (d->kind == ATTN_CENTERED && d->centered_literal) { /* - 1/p instead of - 1/n */
                    int nv = 0, p = i + d->Tk - d->Tq;
                    for (j = 0; j < d->Tk; j++) nv += vis[j];
                    for (j = 0; j < d->Tk; j++)
                        if (vis[j]) a[j] += 1.0 / nv - 1.0 / (p > 1 ? p : 1);
                }
                for (j = 0; j < d->Tk; j++)
                    if (A) A[(bh * d->Tq + i) * d->Tk + j] = a[j];
                for (c = 0; c < d->dv; c++) {
                    o[c] = 0;
                    for (j = 0; j < d->Tk; j++) o[c] += a[j] * naive_keep(d, i, j) * V[(bh * d->Tk + j) * d->dv + c];
                }
                if (d->kind == ATTN_DIFFERENTIAL) { /* (1 - lambda_init) gain RMSNorm(o), eps 1e-5 */
                    double ms = 0;
                    for (c = 0; c < d->dv; c++) ms += o[c] * o[c] / d->dv;
                    for (c = 0; c < d->dv; c++) o[c] *= (1 - d->lambda_init) * (d->gain ? d->gain[c] : 1) / sqrt(ms + 1e-5);
                }
                for (c = 0; c < d->dv; c++) O[(bh * d->Tq + i) * d->dv + c] = o[c];
            }
}

/* The smallest |score| over the visible entries (the bias included). */
static double min_abs_score(const attn_attention_desc *d, const attn_float *Q, const attn_float *K)
{
    double m = 1e300, scale = d->scale != 0 ? d->scale : 1 / sqrt((double)d->dk);
    int b, h, i, j, c;
    for (b = 0; b < d->B; b++)
        for (h = 0; h < d->H; h++)
            for (i = 0; i < d->Tq; i++)
                for (j = 0; j < d->Tk; j++) {
                    size_t bh = (size_t)b * d->H + h;
                    double s = 0;
                    if ((d->causal && j > i + d->Tk - d->Tq) || (d->key_mask && !d->key_mask[b * d->Tk + j])) continue;
                    for (c = 0; c < d->dk; c++) s += (double)Q[(bh * d->Tq + i) * d->dk + c] * K[(bh * d->Tk + j) * d->dk + c];
                    s = s * scale + (d->bias ? d->bias[((size_t)h * d->Tq + i) * d->Tk + j] : 0);
                    m = fmin(m, fabs(s));
                }
    return m;
}

typedef struct {
    attn_attention_desc d;
    attn_float *Q, *K, *V, *O, *stats, *dQ, *dK, *dV, *bias, *dbias, *dO;
    attn_float *kp, *dkp; /* the kinds' own parameters, one block: lambda, gain, w2 */
    unsigned char *mask;
    void *work;
    size_t work_bytes, nq, nk, nv, no, nl, ng, nw;
} att_ctx;

static void att_setup(att_ctx *c, attn_kind kind, int B, int H, int Tq, int Tk, int dk, int dv, int causal,
                      int with_mask, int with_bias, attn_rng *r)
{
    int i;
    memset(c, 0, sizeof *c);
    if (kind == ATTN_DIFFERENTIAL && dk % 2) dk++; /* two sub-heads */
    c->d.kind = kind; c->d.B = B; c->d.H = H; c->d.Tq = Tq; c->d.Tk = Tk; c->d.dk = dk; c->d.dv = dv;
    c->d.causal = causal;
    c->nl = (size_t)4 * (dk / 2); c->ng = (size_t)dv; c->nw = (size_t)H * dv * dv;
    c->kp = t_alloc(c->nl + c->ng + c->nw); c->dkp = t_alloc(c->nl + c->ng + c->nw);
    t_randn(c->kp, c->nl + c->ng + c->nw, r, 0.4);
    for (i = 0; i < dv; i++) c->kp[c->nl + i] += 1; /* gains near 1 */
    c->d.lambda = c->kp; c->d.gain = c->kp + c->nl; c->d.w2 = c->kp + c->nl + c->ng;
    c->d.lambda_init = attn_diff_lambda_init(1);
    c->nq = (size_t)B * H * Tq * dk; c->nk = (size_t)B * H * Tk * dk; c->nv = (size_t)B * H * Tk * dv; c->no = (size_t)B * H * Tq * dv;
    c->Q = t_alloc(c->nq); c->K = t_alloc(c->nk); c->V = t_alloc(c->nv); c->O = t_alloc(c->no);
    c->dQ = t_alloc(c->nq); c->dK = t_alloc(c->nk); c->dV = t_alloc(c->nv); c->dO = t_alloc(c->no);
    c->stats = t_alloc(attn_attention_stats_floats(&c->d));
    c->bias = t_alloc((size_t)H * Tq * Tk); c->dbias = t_alloc((size_t)H * Tq * Tk);
    c->mask = (unsigned char *)calloc((size_t)B * Tk, 1);
    t_randn(c->Q, c->nq, r, 1); t_randn(c->K, c->nk, r, 1); t_randn(c->V, c->nv, r, 1);
    t_randn(c->bias, (size_t)H * Tq * Tk, r, 0.5);
    for (i = 0; i < B * Tk; i++) c->mask[i] = (unsigned char)(attn_rng_uniform(r) < 0.7);
    if (B > 1) memset(c->mask + Tk, 0, (size_t)Tk); /* batch 1 sees nothing: empty rows */
    if (with_mask) c->d.key_mask = c->mask;
    if (with_bias && kind != ATTN_KERNEL && kind != ATTN_TAYLOR) c->d.bias = c->bias; /* no bias in linear time */
    c->work_bytes = attn_attention_workspace(&c->d);
    c->work = malloc(c->work_bytes);
}

/* Turns on dropout (the workspace grows with it). */
static void att_dropout(att_ctx *c, double p, uint64_t seed)
{
    c->d.dropout = (attn_float)p;
    c->d.dropout_seed = seed;
    free(c->work);
    c->work_bytes = attn_attention_workspace(&c->d);
    c->work = malloc(c->work_bytes);
}

static void att_free(att_ctx *c)
{
    free(c->Q); free(c->K); free(c->V); free(c->O); free(c->dQ); free(c->dK); free(c->dV); free(c->dO);
    free(c->stats); free(c->bias); free(c->dbias); free(c->mask); free(c->work); free(c->kp); free(c->dkp);
}

static void att_f(void *p)
{
    att_ctx *c = (att_ctx *)p;
    attn_attention_forward(&c->d, c->O, c->stats, NULL, c->Q, c->K, c->V, c->work, c->work_bytes);
}

static void att_b(void *p, const attn_float *dO)
{
    att_ctx *c = (att_ctx *)p;
    attn_attention_grads g;
    g.dQ = c->dQ; g.dK = c->dK; g.dV = c->dV; g.dbias = c->d.bias ? c->dbias : NULL;
    g.dlambda = c->dkp; g.dgain = c->dkp + c->nl; g.dw2 = c->dkp + c->nl + c->ng;
    attn_attention_backward(&c->d, &g, dO, c->Q, c->K, c->V, c->O, c->stats, c->work, c->work_bytes);
}

/* forward against the naive reference; returns the worst error relative to max(1, max |O|) */
static double att_forward_error(att_ctx *c)
{
    double *O = (double *)malloc(sizeof(double) * c->no), worst = 0, big = 1;
    size_t k;
    att_f(c);
    naive_attention(&c->d, c->Q, c->K, c->V, O, NULL);
    for (k = 0; k < c->no; k++) {
        worst = fmax(worst, fabs(O[k] - c->O[k]));
        big = fmax(big, fabs(O[k]));
    }
    free(O);
    return worst / big;
}

/* Taylor attention at dk = 1 is skipped on purpose (TAYLOR_DK1 below): x / |x| is then sign(x), the
   weights 1 + qh . kh are exactly 0 or 2, a row can have denominator eps alone (ill-conditioned: the
   rounding of 1 + (-1) decides the output), and the gradient through sign() is 0 almost everywhere. */

/* The kinds whose finite differences are checked in the float64 build only: float's step 1e-2 is
   far coarser than their non-smooth scale. Cog's weights jump where a score crosses 0 (Lv et al. 2024);
   differential attention RMS-normalises a difference of two maps that can be small; RMSHead divides
   by sqrt(mean_h s^2 + 1e-6), a kink of width ~1e-3 where the scores are small, and HYLA's ReLUs
   have kinks. */
static int fd_in_float(attn_kind k) { return T_DOUBLE || (k != ATTN_COG && k < ATTN_DIFFERENTIAL); }

static int has_dropout(attn_kind k) { return k != ATTN_CENTERED && k != ATTN_KERNEL && k != ATTN_TAYLOR; }

static void test_against_reference(void)
{
    static const int shapes[][6] = {{1, 1, 1, 1, 1, 1}, {2, 3, 5, 5, 3, 3}, {1, 2, 17, 5, 8, 3}, {2, 1, 5, 17, 3, 8},
                                    {1, 2, 130, 130, 16, 8}, {2, 1, 70, 200, 8, 16}, {1, 1, 200, 70, 4, 4},
                                    {1, 1, 70, 40, 1100, 3}}; /* the last: keys packed in 2+ depth blocks */
    attn_rng r;
    int k, s, causal, opt;
    attn_rng_seed(&r, 31, 0);
    for (k = 0; k < ATTN_KIND_COUNT; k++)
        for (s = 0; s < (int)(sizeof shapes / sizeof shapes[0]); s++)
            for (causal = 0; causal < 2; causal++)
                for (opt = 0; opt < 3; opt++) { /* opt: 1 key mask + bias, 2 also dropout */
                    att_ctx c;
                    double err;
                    if (k == ATTN_TAYLOR && shapes[s][4] < 2) continue; /* TAYLOR_DK1: see above */
                    if (opt == 2 && !has_dropout((attn_kind)k)) continue;
                    /* the 1100-deep keys (more than any ISA's depth block, 1024 on AVX-512) are for the
                       tiled engine's packing; at such depths float's rounding of the scores alone took a
                       head-mixing kind past the tolerance (1.6e-4 > 1.2e-4 at 800) */
                    if (shapes[s][4] == 1100 && !attn_kind_get((attn_kind)k)->score) continue;
                    att_setup(&c, (attn_kind)k, shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], shapes[s][4], shapes[s][5], causal, opt > 0, opt > 0, &r);
                    if (opt == 2) att_dropout(&c, 0.3, 99);
                    err = att_forward_error(&c);
                    CHECK(err <= 1e3 * T_EPS, "%s forward B%d H%d Tq%d Tk%d dk%d dv%d causal %d mask+bias+dropout %d: max error %.3g vs the naive reference",
                          attn_kind_get((attn_kind)k)->name, shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], shapes[s][4], shapes[s][5], causal, opt, err);
                    att_free(&c);
                }
}

/* Softmax, Cog and EA at the shapes of the fused forward (query tiles of more than 64 rows, values of
   1-4 vectors (O in registers on AVX-512) and of up to 256 values in chunks with a tail (elsewhere),
   any key depth, key counts off the panels, Tq above and below Tk, where causal rows see nothing,
   rows of 300-500 keys, and queries 20 times larger, whose maxima grow past the kernel's slack):
   O against the naive reference, and the stats (max x + log sum e^(x - max x) with x = s or, Cog,
   |s|; EA: sum s^2 / (1 + s^2)) against it in double. */
static void test_fused_forward(void)
{
    static const int shapes[][6] = {{1, 1, 100, 70, 16, 32},  {1, 2, 67, 150, 64, 64}, {2, 1, 90, 90, 20, 48},
                                    {1, 1, 129, 129, 7, 16},  {1, 1, 300, 300, 16, 32}, {1, 1, 80, 500, 8, 16},
                                    {1, 1, 100, 260, 16, 200}, {1, 1, 70, 90, 24, 40}, {1, 1, 70, 90, 12, 256}};
    attn_kind kinds[3] = {ATTN_SOFTMAX, ATTN_COG, ATTN_EXPRESSIVE};
    attn_rng r;
    int k, sh, causal, loud, b, h, i, j;
    size_t q;
    attn_rng_seed(&r, 35, 0);
    for (k = 0; k < 3; k++)
        for (sh = 0; sh < (int)(sizeof shapes / sizeof shapes[0]); sh++)
            for (causal = 0; causal < 2; causal++)
                for (loud = 0; loud < 2; loud++) {
                    att_ctx c;
                    double err, worst = 0, scale;
                    const int *p = shapes[sh];
                    att_setup(&c, kinds[k], p[0], p[1], p[2], p[3], p[4], p[5], causal, 0, 0, &r);
                    for (q = 0; loud && q < c.nq; q++) c.Q[q] *= 20;
                    err = att_forward_error(&c);
                    scale = 1 / sqrt((double)c.d.dk);
                    for (b = 0; b < c.d.B; b++)
                        for (h = 0; h < c.d.H; h++)
                            for (i = 0; i < c.d.Tq; i++) {
                                double s[NT], x, top = -1e300, sum = 0, want;
                                int vis[NT];
                                naive_scores(&c.d, c.Q, c.K, b, h, i, 0, c.d.dk, scale, s, vis);
                                for (j = 0; j < c.d.Tk; j++)
                                    if (vis[j]) top = fmax(top, kinds[k] == ATTN_COG ? fabs(s[j]) : s[j]);
                                for (j = 0; j < c.d.Tk; j++) {
                                    x = kinds[k] == ATTN_COG ? fabs(s[j]) : s[j];
                                    if (vis[j]) sum += kinds[k] == ATTN_EXPRESSIVE ? x * x / (1 + x * x) : exp(x - top);
                                }
                                want = kinds[k] == ATTN_EXPRESSIVE ? sum : sum > 0 ? top + log(sum) : 0;
                                worst = fmax(worst, fabs(want - c.stats[((size_t)b * c.d.H + h) * c.d.Tq + i]) /
                                                        fmax(1, fabs(want)));
                            }
                    CHECK(err <= 1e3 * T_EPS && worst <= 1e2 * T_EPS,
                          "%s Tq%d Tk%d dk%d dv%d causal %d loud %d: O error %.3g, stats error %.3g vs the naive "
                          "reference", attn_kind_get(kinds[k])->name, p[2], p[3], p[4], p[5], causal, loud, err,
                          worst);
                    att_free(&c);
                }
}

/* The backward pass on near-one-hot rows (softmax and Cog, causal with a window of 3, q and k 16 and
   32 times larger than unit normals: most rows put all but 1e-6 of their weight on one key), where
   dA - D cancels for the dominant key: dK against the same formula in double (D = sum A dA), element
   by element (|error| / (|dK| + 1e-6 max |dK|), the maximum over the tensor). The limits are 10 times
   PyTorch 1.13's float32 error on these inputs (softmax 0.0071 and 0.0061, Cog 0.064), but for Cog at
   32 (PyTorch 0.00084; attn.h 0.0099: the stored O's rounding, which PyTorch's D = sum A dA does not
   see, is what remains). With dS from the two dot products (dO . v_j - dO . o) the float builds gave
   0.47, 0.82, 1.3 and 3.8e3. */
static void test_sharp_rows(void)
{
    enum { B = 2, H = 3, T = 13, DK = 8, DV = 5 };
    static attn_float Q[B * H * T * DK], K[B * H * T * DK], V[B * H * T * DV], dO[B * H * T * DV];
    static attn_float O[B * H * T * DV], st[B * H * T], dQ[B * H * T * DK], dK[B * H * T * DK], dV[B * H * T * DV];
    static const struct { attn_kind kind; double gain, limit; } cases[4] = {
        {ATTN_SOFTMAX, 16, 0.071}, {ATTN_SOFTMAX, 32, 0.061}, {ATTN_COG, 16, 0.64}, {ATTN_COG, 32, 0.02}};
    int k, b, h, i, j, c;
    for (k = 0; k < 4; k++) {
        attn_attention_desc d;
        attn_attention_grads g = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
        static double ref[B * H * T * DK];
        double worst = 0, top = 0, scale = 1 / sqrt((double)DK), gain = cases[k].gain;
        attn_rng r;
        size_t wb;
        void *work;
        memset(&d, 0, sizeof d);
        d.kind = cases[k].kind; d.B = B; d.H = H; d.Tq = d.Tk = T; d.dk = DK; d.dv = DV; d.causal = 1;
        d.window = 3;
        attn_rng_seed(&r, 7, 7);
        t_randn(Q, sizeof Q / sizeof Q[0], &r, gain); t_randn(K, sizeof K / sizeof K[0], &r, gain);
        t_randn(V, sizeof V / sizeof V[0], &r, 1); t_randn(dO, sizeof dO / sizeof dO[0], &r, 1);
        wb = attn_attention_workspace(&d);
        work = malloc(wb);
        g.dQ = dQ; g.dK = dK; g.dV = dV; /* the backward pass adds to them */
        memset(dQ, 0, sizeof dQ); memset(dK, 0, sizeof dK); memset(dV, 0, sizeof dV);
        CHECK(work && !attn_attention_forward(&d, O, st, NULL, Q, K, V, work, wb) &&
              !attn_attention_backward(&d, &g, dO, Q, K, V, O, st, work, wb), "sharp rows: %s", attn_last_error());
        memset(ref, 0, sizeof ref);
        for (b = 0; b < B; b++)
            for (h = 0; h < H; h++) {
                size_t bh = (size_t)b * H + h;
                for (i = 0; i < T; i++) { /* dK_j += scale dS_ij q_i, dS from A and dA in double */
                    double s[NT], a[NT], dA[NT], D = 0;
                    int vis[NT];
                    naive_scores(&d, Q, K, b, h, i, 0, DK, scale, s, vis);
                    naive_row(cases[k].kind, s, vis, T, a);
                    for (j = 0; j < T; j++) {
                        for (dA[j] = 0, c = 0; c < DV; c++)
                            dA[j] += (double)dO[(bh * T + i) * DV + c] * V[(bh * T + j) * DV + c];
                        D += a[j] * dA[j];
                    }
                    for (j = 0; j < T; j++) {
                        double ds = fabs(a[j]) * dA[j] - a[j] * D; /* softmax: a (dA - D) */
                        for (c = 0; c < DK; c++) ref[(bh * T + j) * DK + c] += scale * ds * Q[(bh * T + i) * DK + c];
                    }
                }
            }
        for (j = 0; j < B * H * T * DK; j++) top = fmax(top, fabs(ref[j]));
        for (j = 0; j < B * H * T * DK; j++) { /* (an if, not fmax: GCC 12's AArch64 vectoriser crashed on it) */
            double e = fabs((double)dK[j] - ref[j]) / (fabs(ref[j]) + 1e-6 * top);
            if (e > worst) worst = e;
        }
        CHECK(worst <= cases[k].limit, "%s, q and k x %g: dK's worst element error %.3g against double (limit %g)",
              attn_kind_get(cases[k].kind)->name, gain, worst, cases[k].limit);
        free(work);
    }
}

static void test_gradients(void)
{
    static const int shapes[][6] = {{1, 1, 1, 1, 1, 1}, {1, 3, 5, 5, 3, 3}, {1, 1, 17, 5, 8, 3}, {2, 1, 5, 17, 3, 8}, {1, 2, 17, 17, 1, 2}};
    attn_rng r;
    int k, s, causal, opt;
    char what[160];
    attn_rng_seed(&r, 32, 0);
    for (k = 0; k < ATTN_KIND_COUNT; k++) {
        if (!fd_in_float((attn_kind)k)) {
            printf("  skip: %s finite differences need the float64 build (test_double runs them)\n", attn_kind_get((attn_kind)k)->name);
            continue;
        }
        for (s = 0; s < 5; s++)
            for (causal = 0; causal < 2; causal++)
                for (opt = 0; opt < 3; opt++) {
                    att_ctx c;
                    if (k == ATTN_TAYLOR && shapes[s][4] < 2) continue; /* TAYLOR_DK1: see above */
                    if (opt == 2 && !has_dropout((attn_kind)k)) continue;
                    att_setup(&c, (attn_kind)k, shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], shapes[s][4], shapes[s][5], causal, opt > 0, opt > 0, &r);
                    if (opt == 2) att_dropout(&c, 0.3, 7);
                    if (k == ATTN_COG) { /* keep every visible score at |s| >= 1e-3 (Cog's jump at 0) */
                        int tries = 0;
                        while (min_abs_score(&c.d, c.Q, c.K) < 1e-3 && tries++ < 100) { /* both: a key near 0 needs a new K */
                            t_randn(c.Q, c.nq, &r, 1);
                            t_randn(c.K, c.nk, &r, 1);
                        }
                        CHECK(tries <= 100, "could not draw Cog inputs with every |score| >= 1e-3");
                    }
                    {
                        t_var v[5] = {{"Q", c.Q, c.dQ, c.nq}, {"K", c.K, c.dK, c.nk}, {"V", c.V, c.dV, c.nv},
                                      {"kind params", c.kp, c.dkp, c.nl + c.ng + c.nw}, {"bias", c.bias, c.dbias, (size_t)c.d.H * c.d.Tq * c.d.Tk}};
                        int own = k == ATTN_DIFFERENTIAL || k == ATTN_HYLA_PLUS;
                        if (!own) v[3] = v[4];
                        snprintf(what, sizeof what, "%s B%d H%d Tq%d Tk%d dk%d dv%d causal %d mask+bias+dropout %d", attn_kind_get((attn_kind)k)->name,
                                 shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], c.d.dk, shapes[s][5], causal, opt);
                        t_gradcheck(what, att_f, att_b, &c, c.O, c.no, v, 3 + own + (c.d.bias != NULL));
                    }
                    att_free(&c);
                }
    }
}

/* A hand-computed row: q = (1, 0); keys (1, 0), (0, 1), (-2, 0); scale 1. With V = I, O is the row of A. */
static void test_single_query_rows(void)
{
    static const double want[4][3] = {{0.705385, 0.259496, 0.035119},  /* softmax */
                                      {0.384615, 0, 0.615385},         /* EA */
                                      {0.244728, 0, -0.665241},        /* Cog */
                                      {0.372051, -0.073837, -0.298214}}; /* centered, n = 3 */
    attn_float Q[2] = {1, 0}, K[6] = {1, 0, 0, 1, -2, 0}, V[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, O[3], st[1], W[3];
    attn_attention_desc d;
    int k, j;
    void *work;
    memset(&d, 0, sizeof d);
    d.B = d.H = d.Tq = 1; d.Tk = 3; d.dk = 2; d.dv = 3; d.scale = 1;
    for (k = 0; k < 4; k++) { /* the enum order: softmax, ea, cog, centered */
        d.kind = (attn_kind)k;
        work = malloc(attn_attention_workspace(&d));
        attn_attention_forward(&d, O, st, W, Q, K, V, work, attn_attention_workspace(&d));
        for (j = 0; j < 3; j++)
            CHECK(fabs(O[j] - want[k][j]) < 5e-7 && fabs(W[j] - want[k][j]) < 5e-7, "%s single-query row: A[%d] = %.6f (weights %.6f), want %.6f",
                  attn_kind_get((attn_kind)k)->name, j, (double)O[j], (double)W[j], want[k][j]);
        free(work);
    }
}

/* Softmax weights over the exponent range against float64: one query (q = 1, scale 1) over 400 keys
   whose scores run from 0 down to -80 (the exponential clamps below -87), once with every key
   visible (the rows that skip the mask) and once with key 1 masked out (the masked rows). Relative
   error within 4 x 2^-24 plus the rounding of the exponent (s - lse) itself, |s - lse| 2^-23. */
static void test_softmax_exponent_range(void)
{
    enum { N = 400 };
    static attn_float K[N], V[N], W[N];
    unsigned char mask[N];
    attn_float q = 1, O[1], st[1];
    attn_attention_desc d;
    int j, masked;
    void *work;
    memset(&d, 0, sizeof d);
    d.kind = ATTN_SOFTMAX; d.B = d.H = d.Tq = 1; d.Tk = N; d.dk = d.dv = 1; d.scale = 1;
    for (j = 0; j < N; j++) { K[j] = (attn_float)(-80.0 * j / (N - 1)); V[j] = 1; mask[j] = j != 1; }
    work = malloc(attn_attention_workspace(&d));
    for (masked = 0; masked < 2; masked++) {
        double lse = 0, worst = 0, tol = 1;
        int at = 0;
        d.key_mask = masked ? mask : NULL;
        attn_attention_forward(&d, O, st, W, &q, K, V, work, attn_attention_workspace(&d));
        for (j = 0; j < N; j++) lse += masked && j == 1 ? 0 : exp((double)K[j]);
        lse = log(lse);
        for (j = 0; j < N; j++) {
            double want = masked && j == 1 ? 0 : exp((double)K[j] - lse), err, bound;
            bound = T_DOUBLE ? 1e-13 : (4 + fabs((double)K[j] - lse) * 2) * 5.96e-8;
            err = want == 0 ? fabs((double)W[j]) : fabs((double)W[j] - want) / want;
            if (err / bound > worst / tol) { worst = err; tol = bound; at = j; }
        }
        CHECK(worst <= tol, "softmax weights over scores 0 .. -80 (%s): relative error %.3g > %.3g at s = %g",
              masked ? "key 1 masked" : "all keys visible", worst, tol, (double)K[at]);
    }
    free(work);
}

static void test_identities(void)
{
    attn_rng r;
    att_ctx a, b;
    size_t i;
    double diff = 0;
    int same, k;
    attn_rng_seed(&r, 33, 0);
    /* Cog with every score positive is softmax */
    att_setup(&a, ATTN_COG, 2, 2, 9, 11, 4, 3, 1, 0, 0, &r);
    att_setup(&b, ATTN_SOFTMAX, 2, 2, 9, 11, 4, 3, 1, 0, 0, &r);
    for (i = 0; i < a.nq; i++) b.Q[i] = a.Q[i] = (attn_float)fabs(a.Q[i]);
    for (i = 0; i < a.nk; i++) b.K[i] = a.K[i] = (attn_float)fabs(a.K[i]) + (attn_float)0.1;
    memcpy(b.V, a.V, a.nv * sizeof(attn_float));
    att_f(&a);
    att_f(&b);
    for (i = 0; i < a.no; i++) diff = fmax(diff, fabs(a.O[i] - b.O[i]));
    CHECK(diff <= 10 * T_EPS, "Cog with positive scores differs from softmax by %.3g", diff);
    /* EA is invariant to z -> -z */
    a.d.kind = ATTN_EXPRESSIVE;
    att_f(&a);
    memcpy(b.O, a.O, a.no * sizeof(attn_float));
    for (i = 0; i < a.nq; i++) a.Q[i] = -a.Q[i];
    att_f(&a);
    for (diff = 0, i = 0; i < a.no; i++) diff = fmax(diff, fabs(a.O[i] - b.O[i]));
    CHECK(diff == 0, "EA changes by %.3g when every score changes sign", diff);
    att_free(&a);
    att_free(&b);

    for (k = 0; k < ATTN_KIND_COUNT; k++) {
        att_ctx c;
        attn_float *O1, *dQ1, *dK1, *dV1;
        /* a batch element whose keys are all masked: zero output, zero gradient, nothing NaN */
        att_setup(&c, (attn_kind)k, 2, 3, 7, 9, 4, 5, 0, 1, 0, &r);
        t_randn(c.dO, c.no, &r, 1);
        att_f(&c);
        att_b(&c, c.dO);
        for (same = 1, i = c.no / 2; i < c.no; i++) same &= c.O[i] == 0;
        for (i = c.nq / 2; i < c.nq; i++) same &= c.dQ[i] == 0;
        for (i = c.nk / 2; i < c.nk; i++) same &= c.dK[i] == 0;
        for (i = 0; i < c.no / 2; i++) same &= !t_isnan(c.O[i]);
        CHECK(same, "%s: a fully masked batch element must give zero output and zero gradients", attn_kind_get((attn_kind)k)->name);
        /* the same bits with 1 and 2 threads, forward and backward */
        O1 = t_alloc(c.no); dQ1 = t_alloc(c.nq); dK1 = t_alloc(c.nk); dV1 = t_alloc(c.nv);
        memset(c.dQ, 0, c.nq * sizeof(attn_float)); memset(c.dK, 0, c.nk * sizeof(attn_float)); memset(c.dV, 0, c.nv * sizeof(attn_float));
        attn_set_threads(1);
        att_f(&c);
        att_b(&c, c.dO);
        memcpy(O1, c.O, c.no * sizeof(attn_float)); memcpy(dQ1, c.dQ, c.nq * sizeof(attn_float));
        memcpy(dK1, c.dK, c.nk * sizeof(attn_float)); memcpy(dV1, c.dV, c.nv * sizeof(attn_float));
        memset(c.dQ, 0, c.nq * sizeof(attn_float)); memset(c.dK, 0, c.nk * sizeof(attn_float)); memset(c.dV, 0, c.nv * sizeof(attn_float));
        attn_set_threads(2);
        free(c.work);
        c.work_bytes = attn_attention_workspace(&c.d);
        c.work = malloc(c.work_bytes);
        att_f(&c);
        att_b(&c, c.dO);
        attn_set_threads(0);
        same = !memcmp(O1, c.O, c.no * sizeof(attn_float)) && !memcmp(dQ1, c.dQ, c.nq * sizeof(attn_float)) &&
               !memcmp(dK1, c.dK, c.nk * sizeof(attn_float)) && !memcmp(dV1, c.dV, c.nv * sizeof(attn_float));
        CHECK(same, "%s: results differ between 1 and 2 threads", attn_kind_get((attn_kind)k)->name);
        free(O1); free(dQ1); free(dK1); free(dV1);
        att_free(&c);
    }
}

/* Logits of size 1e3 and 1e4: finite outputs, softmax rows that still sum to 1. */
static void test_stability(void)
{
    attn_rng r;
    int k, big;
    attn_rng_seed(&r, 34, 0);
    for (k = 0; k < ATTN_KIND_COUNT; k++)
        for (big = 0; big < 2; big++) {
            att_ctx c;
            attn_float *W;
            size_t i, row;
            int ok = 1;
            att_setup(&c, (attn_kind)k, 1, 2, 20, 20, 4, 3, 1, 0, 0, &r);
            c.d.scale = (attn_float)(big ? 1e4 : 1e3);
            W = t_alloc((size_t)2 * 20 * 20);
            attn_attention_forward(&c.d, c.O, c.stats, k == ATTN_KERNEL || k == ATTN_TAYLOR ? NULL : W, c.Q, c.K, c.V, c.work, c.work_bytes);
            for (i = 0; i < c.no; i++) ok &= !t_isnan(c.O[i]) && fabs(c.O[i]) < 1e30;
            for (row = 0; k == ATTN_SOFTMAX && row < 40; row++) {
                double s = 0;
                for (i = 0; i < 20; i++) s += W[row * 20 + i];
                ok &= fabs(s - 1) < 1e-5;
            }
            CHECK(ok, "%s with scores of size %g: non-finite output or rows not summing to 1", attn_kind_get((attn_kind)k)->name, (double)c.d.scale);
            free(W);
            att_free(&c);
        }
}

static void test_bad_input(void)
{
    attn_rng r;
    att_ctx c;
    attn_attention_desc d;
    attn_float keep[8];
    attn_rng_seed(&r, 35, 0);
    att_setup(&c, ATTN_SOFTMAX, 1, 1, 4, 4, 2, 2, 0, 0, 0, &r);
    memcpy(keep, c.O, sizeof keep);
    d = c.d;
    d.Tq = 0;
    CHECK(attn_attention_forward(&d, c.O, c.stats, NULL, c.Q, c.K, c.V, c.work, c.work_bytes) == ATTN_ERR_SHAPE && !memcmp(keep, c.O, sizeof keep), "Tq = 0");
    d = c.d;
    d.kind = (attn_kind)77;
    CHECK(attn_attention_forward(&d, c.O, c.stats, NULL, c.Q, c.K, c.V, c.work, c.work_bytes) == ATTN_ERR_ARG, "unknown kind");
    CHECK(attn_attention_forward(NULL, c.O, c.stats, NULL, c.Q, c.K, c.V, c.work, c.work_bytes) == ATTN_ERR_ARG, "NULL descriptor");
    CHECK(attn_attention_forward(&c.d, c.O, c.stats, NULL, NULL, c.K, c.V, c.work, c.work_bytes) == ATTN_ERR_ARG && !memcmp(keep, c.O, sizeof keep), "NULL Q");
    CHECK(attn_attention_forward(&c.d, c.O, c.stats, NULL, c.Q, c.K, c.V, c.work, 16) == ATTN_ERR_ARG && !memcmp(keep, c.O, sizeof keep), "workspace too small");
    {
        attn_attention_grads g = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
        g.dQ = c.dQ; g.dV = c.dV;
        CHECK(attn_attention_backward(&c.d, &g, c.dO, c.Q, c.K, c.V, c.O, c.stats, c.work, c.work_bytes) == ATTN_ERR_ARG, "NULL dK");
        CHECK(attn_attention_backward(&c.d, NULL, c.dO, c.Q, c.K, c.V, c.O, c.stats, c.work, c.work_bytes) == ATTN_ERR_ARG, "NULL gradients");
    }
    d = c.d;
    d.kind = ATTN_KERNEL;
    d.bias = c.bias;
    CHECK(attn_attention_forward(&d, c.O, c.stats, NULL, c.Q, c.K, c.V, c.work, c.work_bytes) == ATTN_ERR_ARG && !memcmp(keep, c.O, sizeof keep),
          "kernel attention with a bias must be refused");
    d = c.d;
    d.window = -1;
    CHECK(attn_attention_forward(&d, c.O, c.stats, NULL, c.Q, c.K, c.V, c.work, c.work_bytes) == ATTN_ERR_ARG && !memcmp(keep, c.O, sizeof keep),
          "a negative window must be refused");
    d = c.d;
    d.kind = ATTN_TAYLOR;
    d.window = 3;
    CHECK(attn_attention_forward(&d, c.O, c.stats, NULL, c.Q, c.K, c.V, c.work, c.work_bytes) == ATTN_ERR_ARG, "a pattern on a linear-time kind must be refused");
    d = c.d;
    d.kind = ATTN_DIFFERENTIAL;
    d.dk = 1;
    CHECK(attn_attention_forward(&d, c.O, c.stats, NULL, c.Q, c.K, c.V, c.work, c.work_bytes) == ATTN_ERR_SHAPE && !memcmp(keep, c.O, sizeof keep),
          "differential attention with an odd dk must be refused");
    CHECK(attn_kind_from_name("cog") == ATTN_COG && attn_kind_from_name("nope") == -1 && attn_kind_get((attn_kind)-1) == NULL, "kind table lookups");
    att_free(&c);
}

static void test_layer(void);
static void test_layer_fused(void);

/* Sliding window, dilation and global tokens (Beltagy et al. 2020): against the naive reference, finite
   differences, and the identity "a window covering everything is plain attention". */
/* Whether attention with desc `changed` gives the very bits of a's own descriptor (both run in a's
   buffers; a's descriptor is restored). */
static int att_same_bits(att_ctx *a, const attn_attention_desc *changed)
{
    attn_attention_desc keep = a->d;
    attn_float *O1 = t_alloc(a->no);
    int same;
    att_f(a);
    memcpy(O1, a->O, a->no * sizeof(attn_float));
    a->d = *changed;
    att_f(a);
    same = !memcmp(O1, a->O, a->no * sizeof(attn_float));
    a->d = keep;
    free(O1);
    return same;
}

static void test_patterns(void)
{
    static const int dil[3] = {1, 2, 3};
    attn_rng r;
    int k, causal, g;
    attn_rng_seed(&r, 37, 0);
    for (k = 0; k < ATTN_KIND_COUNT; k++)
        for (causal = 0; causal < 2; causal++)
            for (g = 0; g < 2 && k != ATTN_KERNEL && k != ATTN_TAYLOR; g++) {
                att_ctx c;
                unsigned char glob[200] = {0};
                char what[128];
                double err;
                glob[3] = glob[150] = 1;
                att_setup(&c, (attn_kind)k, 1, 3, 180, 190, 4, 3, causal, 1, 1, &r); /* T > 64: several tiles, some skipped */
                c.d.window = 5;
                c.d.dilation = dil;
                c.d.global = g ? glob : NULL;
                err = att_forward_error(&c);
                CHECK(err <= 1e3 * T_EPS, "%s window 5 dilation 1/2/3 causal %d global %d: max error %.3g vs the naive reference",
                      attn_kind_get((attn_kind)k)->name, causal, g, err);
                att_free(&c);
                if (!fd_in_float((attn_kind)k) || (k == ATTN_EXPRESSIVE && !T_DOUBLE)) {
                    /* Cog and the others: as in test_gradients. EA: a row of this pattern sees <= 5 keys, so N can be
                       small and the gradient ~ 1/N; float's step 1e-2 is too coarse there. The
                       float64 build checks both at 1e-6. */
                    if (causal == 0 && g == 0) printf("  skip: %s pattern finite differences need the float64 build\n", attn_kind_get((attn_kind)k)->name);
                    continue;
                }
                att_setup(&c, (attn_kind)k, 1, 2, 9, 11, 3, 2, causal, 1, 1, &r);
                c.d.window = 2;
                c.d.dilation = dil + 1;
                c.d.global = g ? glob : NULL;
                if (k == ATTN_COG) while (min_abs_score(&c.d, c.Q, c.K) < 1e-3) t_randn(c.Q, c.nq, &r, 1);
                {
                    t_var v[4] = {{"Q", c.Q, c.dQ, c.nq}, {"K", c.K, c.dK, c.nk}, {"V", c.V, c.dV, c.nv}, {"bias", c.bias, c.dbias, (size_t)2 * 9 * 11}};
                    snprintf(what, sizeof what, "%s window 2 dilation 2/3 causal %d global %d", attn_kind_get((attn_kind)k)->name, causal, g);
                    t_gradcheck(what, att_f, att_b, &c, c.O, c.no, v, 4);
                }
                att_free(&c);
            }
    { /* a window that covers every key is plain (causal) softmax, bit for bit */
        att_ctx a;
        attn_attention_desc w;
        attn_rng_seed(&r, 38, 0);
        att_setup(&a, ATTN_SOFTMAX, 2, 2, 70, 70, 4, 3, 1, 1, 0, &r);
        w = a.d;
        w.window = 70;
        CHECK(att_same_bits(&a, &w), "a window >= T must equal plain causal softmax");
        att_free(&a);
    }
}

/* Segment ids (documents packed in one sequence, as the Cog paper's code trains): every kind but the linear-time ones
   against the reference and finite differences, causal or not, with a key mask; a single segment
   equals no segments bit for bit. */
static void test_segments(void)
{
    static const int seg[2 * 9] = {0, 0, 0, 4, 4, 7, 7, 7, 7, 1, 1, 1, 1, 1, 2, 2, 3, 3};
    attn_rng r;
    int k, causal;
    attn_rng_seed(&r, 41, 0);
    for (k = 0; k < ATTN_KIND_COUNT; k++)
        for (causal = 0; causal < 2 && k != ATTN_KERNEL && k != ATTN_TAYLOR; causal++) {
            att_ctx c;
            char what[128];
            double err;
            att_setup(&c, (attn_kind)k, 2, 2, 9, 9, 4, 4, causal, 1, 1, &r);
            c.d.segment = seg;
            err = att_forward_error(&c);
            CHECK(err <= 1e3 * T_EPS, "%s with segments, causal %d: max error %.3g vs the naive reference", attn_kind_get((attn_kind)k)->name, causal, err);
            if (fd_in_float((attn_kind)k)) {
                t_var v[4] = {{"Q", c.Q, c.dQ, c.nq}, {"K", c.K, c.dK, c.nk}, {"V", c.V, c.dV, c.nv}, {"bias", c.bias, c.dbias, (size_t)2 * 9 * 9}};
                if (k == ATTN_COG) while (min_abs_score(&c.d, c.Q, c.K) < 1e-3) t_randn(c.Q, c.nq, &r, 1);
                snprintf(what, sizeof what, "%s with segments, causal %d", attn_kind_get((attn_kind)k)->name, causal);
                t_gradcheck(what, att_f, att_b, &c, c.O, c.no, v, 4);
            }
            att_free(&c);
        }
    {
        static const int one[2 * 70] = {0};
        att_ctx a;
        attn_attention_desc w;
        att_setup(&a, ATTN_SOFTMAX, 2, 2, 70, 70, 4, 3, 1, 1, 0, &r);
        w = a.d;
        w.segment = one;
        CHECK(att_same_bits(&a, &w), "a single segment must equal no segments");
        att_free(&a);
        att_setup(&a, ATTN_KERNEL, 2, 2, 9, 9, 4, 4, 1, 0, 0, &r);
        a.d.segment = seg;
        CHECK(attn_attention_forward(&a.d, a.O, a.stats, NULL, a.Q, a.K, a.V, a.work, a.work_bytes) == ATTN_ERR_ARG, "segments refused for kernel attention");
        att_free(&a);
    }
}

/* Documents packed in one row skip each other's key tiles (segment ranges that do not meet), and a
   tile inside one document drops the per-key test: documents of 100, 120 and 100 tokens packed in
   T = 320 give what each gives alone, forward and backward, in the tiled engine's kinds (sigmoid's
   shift depends on Tk: not this test), causal or not. */
#define SG_T 320
#define SG_H 2
#define SG_D 16
static int sg_run(attn_kind kind, int causal, int T, const int *seg, const attn_score_mod *mod,
                  const attn_float *Q, const attn_float *K, const attn_float *V, const attn_float *dO, attn_float *O,
                  attn_float *dQ, attn_float *dK, attn_float *dV)
{
    attn_attention_desc d;
    attn_attention_grads g;
    attn_float *st;
    size_t n = (size_t)SG_H * T * SG_D, wb;
    void *w;
    attn_status s;
    memset(&d, 0, sizeof d);
    memset(&g, 0, sizeof g);
    d.kind = kind; d.B = 1; d.H = SG_H; d.Tq = d.Tk = T; d.dk = d.dv = SG_D; d.causal = causal;
    if (mod) d.mod = mod;
    else d.segment = seg;
    g.dQ = dQ; g.dK = dK; g.dV = dV;
    memset(dQ, 0, n * sizeof *dQ); memset(dK, 0, n * sizeof *dK); memset(dV, 0, n * sizeof *dV);
    st = (attn_float *)malloc(attn_attention_stats_floats(&d) * sizeof *st);
    w = malloc(wb = attn_attention_workspace(&d));
    s = st && w ? attn_attention_forward(&d, O, st, NULL, Q, K, V, w, wb) : ATTN_ERR_NOMEM;
    if (s == ATTN_OK) s = attn_attention_backward(&d, &g, dO, Q, K, V, O, st, w, wb);
    free(st); free(w);
    return s == ATTN_OK;
}

/* The same documents as a mask modifier (ctx: each position's document) and its block function,
   which answers from the ranges of the block's documents as the segments' skipping does. */
static int sg_mask(void *ctx, int b, int h, int p, int j)
{
    const int *seg = (const int *)ctx;
    (void)b; (void)h;
    return seg[p] == seg[j];
}
static int sg_block(void *ctx, int b, int h, int p0, int p1, int j0, int j1)
{
    const int *seg = (const int *)ctx; /* documents in order: a range's first and last are its ends */
    (void)b; (void)h;
    if (seg[p1] < seg[j0] || seg[j1] < seg[p0]) return ATTN_BLOCK_EMPTY;
    return seg[p0] == seg[p1] && seg[j0] == seg[j1] && seg[p0] == seg[j0] ? ATTN_BLOCK_FULL : ATTN_BLOCK_PARTIAL;
}

static void test_segment_tiles(void)
{
    static const int start[4] = {0, 100, 220, SG_T};
    static const attn_kind kinds[5] = {ATTN_SOFTMAX, ATTN_EXPRESSIVE, ATTN_COG, ATTN_CENTERED, ATTN_LINEAR_RAW};
    enum { N = SG_H * SG_T * SG_D };
    static attn_float X[4][N], Y[4][N], Z[4][N];
    static int seg[SG_T];
    attn_score_mod docs = {NULL, NULL, sg_mask, seg, NULL, sg_block}, pred = {NULL, NULL, sg_mask, seg, NULL, NULL};
    attn_block_mask bm;
    attn_rng r;
    int k, causal, doc, h, i, c, ok = 1, same = 1, same_bm = 1;
    double worst = 0, worst_bm = 0;
    attn_rng_seed(&r, 77, 0);
    for (i = 0; i < 4; i++) t_randn(X[i], N, &r, 1); /* Q, K, V, dO */
    for (doc = 0; doc < 3; doc++)
        for (i = start[doc]; i < start[doc + 1]; i++) seg[i] = 10 * doc + 3;
    ok &= attn_block_mask_build(&bm, &pred, 1, 1, SG_T, SG_T, 16) == ATTN_OK;
    for (k = 0; k < 5; k++)
        for (causal = 0; causal < 2; causal++) {
            ok &= sg_run(kinds[k], causal, SG_T, seg, NULL, X[0], X[1], X[2], X[3], Y[0], Y[1], Y[2], Y[3]);
            ok &= sg_run(kinds[k], causal, SG_T, NULL, &docs, X[0], X[1], X[2], X[3], Z[0], Z[1], Z[2], Z[3]);
            for (i = 0; i < 4; i++) same &= !memcmp(Y[i], Z[i], sizeof Y[i]);
            ok &= sg_run(kinds[k], causal, SG_T, NULL, &bm.fn, X[0], X[1], X[2], X[3], Z[0], Z[1], Z[2], Z[3]);
            for (i = 0; i < 4; i++) {
                same_bm &= !memcmp(Y[i], Z[i], sizeof Y[i]);
                for (c = 0; c < N; c++) /* (no fmax: see below) */
                    if (fabs(Y[i][c] - Z[i][c]) / (1 + fabs(Y[i][c])) > worst_bm)
                        worst_bm = fabs(Y[i][c] - Z[i][c]) / (1 + fabs(Y[i][c]));
            }
            for (doc = 0; doc < 3; doc++) { /* each document alone: its rows, head by head, at offset 0 */
                int n = start[doc + 1] - start[doc];
                double big = 0, diff = 0;
                static attn_float in[4][N];
                for (i = 0; i < 4; i++)
                    for (h = 0; h < SG_H; h++)
                        memcpy(in[i] + (size_t)h * n * SG_D, X[i] + ((size_t)h * SG_T + start[doc]) * SG_D,
                               sizeof(attn_float) * (size_t)n * SG_D);
                ok &= sg_run(kinds[k], causal, n, seg + start[doc], NULL, in[0], in[1], in[2], in[3], Z[0], Z[1],
                             Z[2], Z[3]);
                for (i = 0; i < 4; i++)
                    for (h = 0; h < SG_H; h++)
                        for (c = 0; c < n * SG_D; c++) {
                            double a = Y[i][((size_t)h * SG_T + start[doc]) * SG_D + c], b = Z[i][(size_t)h * n * SG_D + c];
                            if (fabs(b) > big) big = fabs(b); /* (no fmax: aarch64 gcc 12's vectoriser) */
                            if (fabs(a - b) > diff) diff = fabs(a - b);
                        }
                if (diff / (1 + big) > worst) worst = diff / (1 + big);
            }
        }
    CHECK(ok && worst <= 64 * T_EPS, "packed documents skip each other's tiles: each as alone (worst %.3g)", worst);
    CHECK(ok && same, "packed documents: a mask modifier with its block function = the segments, bit for bit");
#ifdef __FAST_MATH__ /* the table's 16 x 16 blocks send some tiles down the per-key path, whose sums -ffast-math */
    same_bm |= worst_bm <= 64 * T_EPS; /* may round otherwise than the segments' exact ranges' path */
#endif
    CHECK(ok && same_bm, "packed documents: the mask alone through attn_block_mask = the segments, bit for bit "
          "(-ffast-math: within rounding; %.3g)", worst_bm);
    attn_block_mask_free(&bm);
    { /* the weights, which the forward recomputes tile by tile over all keys: 0 across documents */
        static attn_float W[SG_H * SG_T * SG_T], st[SG_H * SG_T];
        attn_attention_desc d;
        size_t wb;
        void *w;
        int j, zero = 1;
        memset(&d, 0, sizeof d);
        d.kind = ATTN_SOFTMAX; d.B = 1; d.H = SG_H; d.Tq = d.Tk = SG_T; d.dk = d.dv = SG_D; d.segment = seg;
        w = malloc(wb = attn_attention_workspace(&d));
        ok = w && attn_attention_forward(&d, Y[0], st, W, X[0], X[1], X[2], w, wb) == ATTN_OK;
        for (h = 0; h < SG_H; h++)
            for (i = 0; i < SG_T; i++)
                for (j = 0; j < SG_T; j++) zero &= seg[i] == seg[j] || W[((size_t)h * SG_T + i) * SG_T + j] == 0;
        CHECK(ok && zero, "packed documents: no weight across documents");
        free(w);
    }
}

/* A head-dependent mask (head h sees keys within 24 (h + 1) of the query, and key 0) without a block
   function: through attn_block_mask it skips tiles (fewer mask calls) and gives what the mask alone
   gives; the table's states; a block mask built for another shape or without a mask is refused. */
static long bmk_calls;
static int bmk_mask(void *ctx, int b, int h, int p, int j)
{
    (void)ctx; (void)b;
    bmk_calls++;
    return j == 0 || abs(p - j) <= 24 * (h + 1);
}

static void test_block_mask(void)
{
    enum { N = SG_H * SG_T * SG_D };
    static attn_float X[4][N], Y[4][N], Z[4][N];
    attn_score_mod win = {NULL, NULL, bmk_mask, NULL, NULL, NULL};
    attn_block_mask bm, one;
    attn_attention_desc d;
    attn_rng r;
    long alone, tabled;
    int i, c, ok, threads = attn_get_threads(), states = 1;
    double diff = 0, big = 0;
    attn_rng_seed(&r, 78, 0);
    for (i = 0; i < 4; i++) t_randn(X[i], N, &r, 1);
    attn_set_threads(1); /* the call counts */
    ok = attn_block_mask_build(&bm, &win, 1, SG_H, SG_T, SG_T, 16) == ATTN_OK;
    for (i = 0; ok && i < SG_T / 16; i++) /* head 0 (reach 24), block row i: the diagonal block full, */
        for (c = 0; c < SG_T / 16; c++) { /* 1-2 blocks away partial, further empty but key 0's block */
            int far = abs(i - c), want = !far ? ATTN_BLOCK_FULL : far <= 2 || c == 0 ? ATTN_BLOCK_PARTIAL
                                                                                     : ATTN_BLOCK_EMPTY;
            states &= bm.state[i * bm.nk + c] == want;
        }
    CHECK(ok && states, "attn_block_mask: empty, partial and full blocks of a window mask as they are");
    bmk_calls = 0;
    ok &= sg_run(ATTN_SOFTMAX, 0, SG_T, NULL, &win, X[0], X[1], X[2], X[3], Y[0], Y[1], Y[2], Y[3]);
    alone = bmk_calls, bmk_calls = 0;
    ok &= sg_run(ATTN_SOFTMAX, 0, SG_T, NULL, &bm.fn, X[0], X[1], X[2], X[3], Z[0], Z[1], Z[2], Z[3]);
    tabled = bmk_calls;
    attn_set_threads(threads);
    for (i = 0; i < 4; i++)
        for (c = 0; c < N; c++) {
            if (fabs(Y[i][c]) > big) big = fabs(Y[i][c]);
            if (fabs(Y[i][c] - Z[i][c]) > diff) diff = fabs(Y[i][c] - Z[i][c]);
        }
    CHECK(ok && diff / (1 + big) <= 64 * T_EPS && tabled < alone,
          "a head-dependent mask through attn_block_mask: the mask's result (%.3g), %ld mask calls instead of %ld",
          diff / (1 + big), tabled, alone);
    ok = attn_block_mask_build(&one, &win, 1, 1, SG_T, SG_T - 1, 16) == ATTN_OK;
    memset(&d, 0, sizeof d);
    d.kind = ATTN_SOFTMAX; d.B = 1; d.H = SG_H; d.Tq = d.Tk = SG_T; d.dk = d.dv = SG_D; d.mod = &one.fn;
    CHECK(ok && attn_attention_forward(&d, Z[0], NULL, NULL, X[0], X[1], X[2], NULL, 0) == ATTN_ERR_SHAPE &&
          strstr(attn_last_error(), "block mask was built"), "a block mask built for another Tk is refused");
    attn_block_mask_free(&one);
    win.mask = NULL;
    CHECK(attn_block_mask_build(&one, &win, 1, 1, 8, 8, 4) == ATTN_ERR_ARG && !one.state,
          "attn_block_mask_build without a mask is refused");
    attn_block_mask_free(&bm);
}

/* BigBird (Zaheer et al. 2020): the builders' layouts, then attention through them against the reference
   and finite differences, and an all-ones layout equal to plain attention bit for bit. */
static void test_bigbird(void)
{
    static unsigned char L[2 * 200 * 200];
    attn_rng r, lr;
    int h, i, j, k, ok, causal;
    attn_rng_seed(&r, 40, 0);
    attn_rng_seed(&lr, 40, 1);
    /* blocks: nb = 9, r = 3 */
    CHECK(attn_bigbird_blocks(L, 2, 9, 3, &lr) == ATTN_OK, "attn_bigbird_blocks");
    for (ok = 1, h = 0; h < 2; h++)
        for (i = 0; i < 9; i++) {
            const unsigned char *row = L + ((size_t)h * 9 + i) * 9;
            int n = 0;
            for (j = 0; j < 9; j++) n += row[j];
            if (i == 0 || i == 8) ok &= n == 9;                                   /* global rows */
            else ok &= n == 3 + 2 + 3 - (i == 1 || i == 7) && row[0] && row[8] && row[i - 1] && row[i] && row[i + 1];
        }
    CHECK(ok, "BigBird blocks: global rows see 9, block 1 and 7 see {0, i, i+1 or i-1, 8} + 3, the others 3 + 2 + 3");
    CHECK(attn_bigbird_blocks(L, 1, 4, 3, &lr) == ATTN_OK && L[1 * 4 + 3] && L[2 * 4 + 0], "BigBird blocks: nb = 4 has no room for random blocks");
    /* tokens: T = 20, g = 2, w = 4, r = 2 */
    CHECK(attn_bigbird_tokens(L, 2, 20, 2, 4, 2, &lr) == ATTN_OK, "attn_bigbird_tokens");
    for (ok = 1, h = 0; h < 2; h++)
        for (i = 2; i < 20; i++) {
            const unsigned char *row = L + ((size_t)h * 20 + i) * 20;
            int n = 0, win = 0;
            for (j = 0; j < 20; j++) { n += row[j]; win += j >= 2 && j >= i - 2 && j <= i + 2; }
            ok &= row[0] && row[1] && row[i] && n == 2 + win + 2;
        }
    CHECK(ok, "BigBird tokens: each row sees the 2 globals, its window and exactly 2 random keys");
    CHECK(attn_bigbird_tokens(L, 1, 4, 0, 1, -1, &lr) == ATTN_ERR_SHAPE, "BigBird tokens: r < 0 must be refused");
    for (k = 0; k < ATTN_KIND_COUNT; k++)
        for (causal = 0; causal < 2; causal++) {
            att_ctx c;
            double err;
            char what[128];
            if (k == ATTN_KERNEL || k == ATTN_TAYLOR) continue;
            attn_bigbird_blocks(L, 2, 10, 2, &lr); /* T = 160 in blocks of 16: several 64-tiles, some skipped */
            att_setup(&c, (attn_kind)k, 2, 2, 160, 160, 4, 3, causal, 1, 1, &r);
            c.d.block = 16;
            c.d.layout = L;
            err = att_forward_error(&c);
            CHECK(err <= 1e3 * T_EPS, "%s BigBird blocks causal %d: max error %.3g vs the naive reference", attn_kind_get((attn_kind)k)->name, causal, err);
            att_free(&c);
            if (!fd_in_float((attn_kind)k) || (k == ATTN_EXPRESSIVE && !T_DOUBLE)) continue; /* as in test_patterns */
            attn_bigbird_tokens(L, 2, 12, 1, 2, 2, &lr);
            att_setup(&c, (attn_kind)k, 1, 2, 12, 12, 3, 2, causal, 1, 1, &r);
            c.d.block = 1;
            c.d.layout = L;
            if (k == ATTN_COG) while (min_abs_score(&c.d, c.Q, c.K) < 1e-3) t_randn(c.Q, c.nq, &r, 1);
            {
                t_var v[4] = {{"Q", c.Q, c.dQ, c.nq}, {"K", c.K, c.dK, c.nk}, {"V", c.V, c.dV, c.nv}, {"bias", c.bias, c.dbias, (size_t)2 * 12 * 12}};
                snprintf(what, sizeof what, "%s BigBird tokens causal %d", attn_kind_get((attn_kind)k)->name, causal);
                t_gradcheck(what, att_f, att_b, &c, c.O, c.no, v, 4);
            }
            att_free(&c);
        }
    { /* an all-ones layout is plain attention, bit for bit */
        att_ctx a;
        attn_attention_desc w;
        att_setup(&a, ATTN_SOFTMAX, 1, 2, 100, 100, 4, 3, 1, 0, 0, &r);
        memset(L, 1, (size_t)2 * 4 * 4);
        w = a.d;
        w.block = 32;
        w.layout = L;
        CHECK(att_same_bits(&a, &w), "an all-ones block layout must equal plain attention");
        att_free(&a);
    }
}

/* The centered_literal option: against the reference, finite differences, and a causal row p >= 1
   without masks summing to 1 - (p + 1) / p = -1/p. */
static void test_centered_literal(void)
{
    attn_rng r;
    int causal, opt, ok = 1;
    attn_float W[2 * 9 * 9];
    attn_rng_seed(&r, 41, 0);
    for (causal = 0; causal < 2; causal++)
        for (opt = 0; opt < 2; opt++) {
            att_ctx c;
            double err;
            char what[96];
            att_setup(&c, ATTN_CENTERED, 2, 2, 70, 75, 4, 3, causal, opt, opt, &r);
            c.d.centered_literal = 1;
            err = att_forward_error(&c);
            CHECK(err <= 1e3 * T_EPS, "centered_literal causal %d mask+bias %d: max error %.3g vs the naive reference", causal, opt, err);
            att_free(&c);
            att_setup(&c, ATTN_CENTERED, 1, 2, 6, 7, 3, 2, causal, opt, opt, &r);
            c.d.centered_literal = 1;
            {
                t_var v[4] = {{"Q", c.Q, c.dQ, c.nq}, {"K", c.K, c.dK, c.nk}, {"V", c.V, c.dV, c.nv}, {"bias", c.bias, c.dbias, (size_t)2 * 6 * 7}};
                snprintf(what, sizeof what, "centered_literal causal %d mask+bias %d", causal, opt);
                t_gradcheck(what, att_f, att_b, &c, c.O, c.no, v, opt ? 4 : 3);
            }
            att_free(&c);
        }
    {
        att_ctx c;
        int i, j;
        att_setup(&c, ATTN_CENTERED, 1, 2, 9, 9, 4, 3, 1, 0, 0, &r);
        c.d.centered_literal = 1;
        attn_attention_forward(&c.d, c.O, c.stats, W, c.Q, c.K, c.V, c.work, c.work_bytes);
        for (i = 0; i < 18; i++) {
            double sum = 0;
            for (j = 0; j < 9; j++) sum += W[i * 9 + j];
            ok &= fabs(sum - (i % 9 == 0 ? 0 : -1.0 / (i % 9))) < 1e-5;
        }
        CHECK(ok, "centered_literal rows must sum to -1/p (0 at p = 0)");
        att_free(&c);
    }
}

static void test_linformer(void);
static void test_layer_global(void);
static void test_segments(void);

/* Grouped- and multi-query attention against the naive reference of repeating each key and value
   head over its group of query heads: the same outputs and dQ bit for bit, and dK, dV the sums of
   the group's (every scored kind, causal and not, with dropout, 1 and 2 key heads for 4 query heads). */
static void test_grouped_query(void)
{
    static const attn_kind kinds[6] = {ATTN_SOFTMAX, ATTN_EXPRESSIVE, ATTN_COG, ATTN_CENTERED, ATTN_SIGMOID, ATTN_LINEAR_RAW};
    enum { B = 2, H = 4, T = 7, DK = 5, DV = 3 };
    int k, kvh, causal, bad = 0, cases = 0;
    double worst = 0;
    attn_rng r;
    attn_rng_seed(&r, 88, 0);
    for (k = 0; k < 6; k++)
        for (kvh = 1; kvh <= 2; kvh++)
            for (causal = 0; causal < 2; causal++) {
                attn_attention_desc d, f;
                attn_attention_grads g, gf;
                attn_float Q[B * H * T * DK], K[B * 2 * T * DK], V[B * 2 * T * DV], Kf[B * H * T * DK], Vf[B * H * T * DV];
                attn_float O[B * H * T * DV], Of[B * H * T * DV], st[B * H * T], stf[B * H * T], dO[B * H * T * DV];
                attn_float dQ[B * H * T * DK], dQf[B * H * T * DK], dK[B * 2 * T * DK], dKf[B * H * T * DK], dV[B * 2 * T * DV],
                    dVf[B * H * T * DV];
                void *work;
                size_t wb;
                int b, h, i;
                memset(&d, 0, sizeof d);
                d.kind = kinds[k]; d.B = B; d.H = H; d.Tq = d.Tk = T; d.dk = DK; d.dv = DV; d.causal = causal;
                d.dropout = k == 0 ? (attn_float)0.25 : 0; d.dropout_seed = 5;
                f = d;
                d.kv_heads = kvh;
                t_randn(Q, sizeof Q / sizeof *Q, &r, 1);
                t_randn(K, (size_t)B * kvh * T * DK, &r, 1);
                t_randn(V, (size_t)B * kvh * T * DV, &r, 1);
                t_randn(dO, sizeof dO / sizeof *dO, &r, 1);
                for (b = 0; b < B; b++) /* the reference's heads: each key head repeated over its group */
                    for (h = 0; h < H; h++) {
                        int g2 = b * kvh + h / (H / kvh);
                        memcpy(Kf + ((size_t)b * H + h) * T * DK, K + (size_t)g2 * T * DK, sizeof(attn_float) * T * DK);
                        memcpy(Vf + ((size_t)b * H + h) * T * DV, V + (size_t)g2 * T * DV, sizeof(attn_float) * T * DV);
                    }
                wb = attn_attention_workspace(&d) > attn_attention_workspace(&f) ? attn_attention_workspace(&d) : attn_attention_workspace(&f);
                work = malloc(wb);
                if (attn_attention_forward(&d, O, st, NULL, Q, K, V, work, wb) != ATTN_OK ||
                    attn_attention_forward(&f, Of, stf, NULL, Q, Kf, Vf, work, wb) != ATTN_OK) {
                    CHECK(0, "grouped forward: %s", attn_last_error());
                    free(work);
                    continue;
                }
                bad += memcmp(O, Of, sizeof O) != 0;
                memset(&g, 0, sizeof g); memset(&gf, 0, sizeof gf);
                memset(dQ, 0, sizeof dQ); memset(dQf, 0, sizeof dQf); memset(dK, 0, sizeof dK); memset(dKf, 0, sizeof dKf);
                memset(dV, 0, sizeof dV); memset(dVf, 0, sizeof dVf);
                g.dQ = dQ; g.dK = dK; g.dV = dV; gf.dQ = dQf; gf.dK = dKf; gf.dV = dVf;
                CHECK(attn_attention_backward(&d, &g, dO, Q, K, V, O, st, work, wb) == ATTN_OK &&
                          attn_attention_backward(&f, &gf, dO, Q, Kf, Vf, Of, stf, work, wb) == ATTN_OK,
                      "grouped backward: %s", attn_last_error());
                bad += memcmp(dQ, dQf, sizeof dQ) != 0;
                for (b = 0; b < B; b++) /* dK, dV of a key head: the sum of its group's */
                    for (h = 0; h < H; h++) {
                        int g2 = b * kvh + h / (H / kvh);
                        for (i = 0; i < T * DK; i++) dK[(size_t)g2 * T * DK + i] -= dKf[((size_t)b * H + h) * T * DK + i];
                        for (i = 0; i < T * DV; i++) dV[(size_t)g2 * T * DV + i] -= dVf[((size_t)b * H + h) * T * DV + i];
                    }
                for (i = 0; i < B * kvh * T * DK; i++) worst = fmax(worst, fabs((double)dK[i]));
                for (i = 0; i < B * kvh * T * DV; i++) worst = fmax(worst, fabs((double)dV[i]));
                cases++;
                free(work);
            }
    CHECK(!bad && worst < 1e3 * T_EPS, "grouped-query attention: %d outputs or dQ differ from the repeated heads; dK, dV off by %.3g",
          bad, worst);
    printf("  grouped-query attention: %d cases, outputs and dQ bitwise, dK and dV within %.2g\n", cases, worst);
    {   /* refusals: a group that does not divide H, a kind with sub-heads or head mixing */
        attn_attention_desc d;
        memset(&d, 0, sizeof d);
        d.kind = ATTN_SOFTMAX; d.B = 1; d.H = 4; d.Tq = d.Tk = 3; d.dk = d.dv = 4; d.kv_heads = 3;
        CHECK(attn_attention_workspace(&d) == 0, "kv_heads 3 for 4 heads refused");
        d.kv_heads = 2; d.kind = ATTN_HYLA;
        CHECK(attn_attention_workspace(&d) == 0, "grouped-query HYLA refused");
    }
}


/* K and V read from a cache (kv_rows > Tk): every kind, causal or not, with and without a key mask,
   with grouped-query heads where the kind takes them, gives bit for bit what compact K, V give,
   whatever the rows after Tk hold (NaN here); a NaN in a read row follows the NaN rule as a compact
   call does; backward refuses a cache. */
static void test_kv_rows(void)
{
    enum { B = 2, H = 2, TQ = 3, TK = 6, R = 9, DK = 4, DV = 3 };
    int k, causal, masked, nan, cases = 0, bad = 0;
    attn_rng r;
    attn_rng_seed(&r, 1234, 0);
    for (k = 0; k < ATTN_KIND_COUNT; k++)
        for (causal = 0; causal < 2; causal++)
            for (masked = 0; masked < 2; masked++)
                for (nan = 0; nan < 2; nan++) {
                    att_ctx c;
                    attn_attention_desc d;
                    attn_float *Kc, *Vc, *O2, *st2;
                    size_t nst, wb, s, KH;
                    void *work;
                    att_setup(&c, (attn_kind)k, B, H, TQ, TK, DK, DV, causal, masked, 0, &r);
                    d = c.d;
                    if (attn_kind_get((attn_kind)k)->score && !(attn_kind_get((attn_kind)k)->flags &
                        (ATTN_KF_SUBHEADS | ATTN_KF_MIXES_HEADS | ATTN_KF_PARAMS)))
                        c.d.kv_heads = d.kv_heads = 1; /* the first key head of each batch serves both */
                    KH = (size_t)(d.kv_heads ? d.kv_heads : H);
                    if (nan) c.K[(size_t)TK * c.d.dk + 1] = NAN; /* head slice 1, row 0 */
                    d.kv_rows = R;
                    Kc = t_alloc(B * KH * R * c.d.dk); Vc = t_alloc(B * KH * R * DV);
                    for (s = 0; s < B * KH * R * c.d.dk; s++) Kc[s] = NAN;
                    for (s = 0; s < B * KH * R * DV; s++) Vc[s] = NAN;
                    for (s = 0; s < B * KH; s++) {
                        memcpy(Kc + s * R * c.d.dk, c.K + s * TK * c.d.dk, sizeof(attn_float) * TK * c.d.dk);
                        memcpy(Vc + s * R * DV, c.V + s * TK * DV, sizeof(attn_float) * TK * DV);
                    }
                    nst = attn_attention_stats_floats(&c.d);
                    O2 = t_alloc(c.no); st2 = t_alloc(nst);
                    wb = attn_attention_workspace(&d) + attn_attention_workspace(&c.d);
                    work = malloc(wb);
                    if (attn_attention_forward(&c.d, c.O, c.stats, NULL, c.Q, c.K, c.V, work, wb) != ATTN_OK ||
                        attn_attention_forward(&d, O2, st2, NULL, c.Q, Kc, Vc, work, wb) != ATTN_OK)
                        CHECK(0, "kv_rows %s: %s", attn_kind_get((attn_kind)k)->name, attn_last_error());
                    else
                        bad += memcmp(c.O, O2, sizeof(attn_float) * c.no) != 0 ||
                               memcmp(c.stats, st2, sizeof(attn_float) * nst) != 0;
                    cases++;
                    if (k == 0 && !nan) {
                        attn_attention_grads g;
                        memset(&g, 0, sizeof g);
                        g.dQ = c.dQ; g.dK = Kc; g.dV = Vc;
                        CHECK(attn_attention_backward(&d, &g, c.dO, c.Q, Kc, Vc, O2, st2, work, wb) == ATTN_ERR_ARG,
                              "backward refuses kv_rows");
                        d.kv_rows = TK - 1;
                        CHECK(attn_attention_workspace(&d) == 0, "kv_rows < Tk refused");
                    }
                    free(Kc); free(Vc); free(O2); free(st2); free(work);
                    att_free(&c);
                }
    CHECK(!bad, "kv_rows: %d of %d calls differ from compact K, V", bad, cases);
    printf("  K, V from a cache (kv_rows): %d calls bit for bit as compact ones\n", cases);
}

/* The modifiers' context: ALiBi's slopes per head, a soft cap, documents and a prefix length. */
typedef struct {
    attn_float slope[4], cap;
    const int *seg; /* [B, T] */
    int T, prefix;
} md_ctx;
static void md_alibi(void *c, int b, int h, int p, int j0, int n, attn_float *s)
{
    int k;
    (void)b;
    for (k = 0; k < n; k++) s[k] -= ((md_ctx *)c)->slope[h] * (attn_float)(p - j0 - k);
}
static void md_cap(void *c, int b, int h, int p, int j0, int n, attn_float *s)
{
    attn_float cap = ((md_ctx *)c)->cap;
    int k;
    (void)b; (void)h; (void)p; (void)j0;
    for (k = 0; k < n; k++) s[k] = cap * (attn_float)tanh(s[k] / cap);
}
static void md_cap_vjp(void *c, int b, int h, int p, int j0, int n, const attn_float *s, attn_float *ds)
{
    attn_float cap = ((md_ctx *)c)->cap;
    int k;
    (void)b; (void)h; (void)p; (void)j0;
    for (k = 0; k < n; k++) {
        double t = tanh(s[k] / cap);
        ds[k] *= (attn_float)(1 - t * t);
    }
}
static int md_docs(void *c, int b, int h, int p, int j)
{
    const md_ctx *m = (const md_ctx *)c;
    (void)h;
    return m->seg[b * m->T + p] == m->seg[b * m->T + j];
}
static int md_prefix(void *c, int b, int h, int p, int j)
{
    (void)b; (void)h;
    return j <= p || j < ((const md_ctx *)c)->prefix;
}

/* One forward and backward call of d on fixed inputs (B 2, H 3, T 37, dk = dv = 6, a width the fused
   forward does not take: bit-for-bit comparisons with a bias, which it does not take either) into O,
   dQ, dK, dV. */
enum { MD_B = 2, MD_H = 3, MD_T = 37, MD_D = 6, MD_N = MD_B * MD_H * MD_T * MD_D }; /* dv 6: the tiled engine */
static int md_run(const attn_attention_desc *d, attn_float *O, attn_float *dQ, attn_float *dK, attn_float *dV)
{
    static attn_float Q[MD_N], K[MD_N], V[MD_N], dO[MD_N], st[MD_B * MD_H * MD_T];
    attn_attention_grads g;
    attn_rng r;
    size_t wb = attn_attention_workspace(d);
    void *work = malloc(wb + 1);
    int ok;
    attn_rng_seed(&r, 5, 1);
    t_randn(Q, MD_N, &r, 1); t_randn(K, MD_N, &r, 1); t_randn(V, MD_N, &r, 1); t_randn(dO, MD_N, &r, 1);
    memset(&g, 0, sizeof g);
    memset(dQ, 0, sizeof(attn_float) * MD_N); memset(dK, 0, sizeof(attn_float) * MD_N);
    memset(dV, 0, sizeof(attn_float) * MD_N);
    g.dQ = dQ; g.dK = dK; g.dV = dV;
    ok = work && wb && attn_attention_forward(d, O, st, NULL, Q, K, V, work, wb) == ATTN_OK &&
         attn_attention_backward(d, &g, dO, Q, K, V, O, st, work, wb) == ATTN_OK;
    free(work);
    return ok;
}

/* Score and mask modifiers: ALiBi as a score modifier equals ALiBi as a materialised bias, and a
   document mask equals the descriptor's segments, bit for bit, forward and backward, in every kind of
   the tiled engine, causal or not; a soft cap against the formula; the backward passes (ALiBi, the
   soft cap's vjp, a prefix-LM mask) against finite differences; the other engines refuse. */
static void test_modifiers(void)
{
    static const attn_kind kinds[6] = {ATTN_SOFTMAX, ATTN_EXPRESSIVE, ATTN_COG, ATTN_CENTERED, ATTN_SIGMOID,
                                       ATTN_LINEAR_RAW};
    static attn_float O1[MD_N], O2[MD_N], a1[MD_N], a2[MD_N], b1[MD_N], b2[MD_N], c1[MD_N], c2[MD_N];
    static attn_float bias[MD_H * MD_T * MD_T];
    static int seg[MD_B * MD_T];
    attn_score_mod alibi = {md_alibi, NULL, NULL, NULL, NULL, NULL}, docs = {NULL, NULL, md_docs, NULL, NULL, NULL};
    attn_score_mod cap = {md_cap, md_cap_vjp, NULL, NULL, NULL, NULL};
    attn_score_mod prefix = {NULL, NULL, md_prefix, NULL, NULL, NULL};
    md_ctx c = {{(attn_float)0.5, (attn_float)0.25, (attn_float)0.125, 0}, 2, seg, MD_T, 5};
    attn_attention_desc d, e;
    int k, causal, h, i, j, same = 1, ran = 0;
    double err;
    alibi.ctx = docs.ctx = cap.ctx = prefix.ctx = &c;
    for (h = 0; h < MD_H; h++)
        for (i = 0; i < MD_T; i++)
            for (j = 0; j < MD_T; j++) bias[(h * MD_T + i) * MD_T + j] = -(c.slope[h] * (attn_float)(i - j));
    for (i = 0; i < MD_B * MD_T; i++) seg[i] = (i % MD_T) / (i < MD_T ? 9 : 14); /* documents of 9 and 14 */
    for (k = 0; k < 6; k++)
        for (causal = 0; causal < 2; causal++) {
            memset(&d, 0, sizeof d);
            d.kind = kinds[k]; d.B = MD_B; d.H = MD_H; d.Tq = d.Tk = MD_T; d.dk = d.dv = MD_D; d.causal = causal;
            e = d;
            d.mod = &alibi;
            e.bias = bias;
            if (!md_run(&d, O1, a1, b1, c1) || !md_run(&e, O2, a2, b2, c2)) {
                CHECK(0, "modifiers: %s: %s", attn_kind_get(kinds[k])->name, attn_last_error());
                continue;
            }
            same &= !memcmp(O1, O2, sizeof O1) && !memcmp(a1, a2, sizeof a1) && !memcmp(b1, b2, sizeof b1) &&
                    !memcmp(c1, c2, sizeof c1);
            d.mod = &docs;
            e.bias = NULL;
            e.segment = seg;
            same &= md_run(&d, O1, a1, b1, c1) && md_run(&e, O2, a2, b2, c2) && !memcmp(O1, O2, sizeof O1) &&
                    !memcmp(a1, a2, sizeof a1) && !memcmp(b1, b2, sizeof b1) && !memcmp(c1, c2, sizeof c1);
            ran++;
        }
    CHECK(same && ran == 12, "modifiers: ALiBi (score) = ALiBi (bias), documents (mask) = segments, bit for bit (%d calls)",
          4 * ran);
    /* the soft cap: O = softmax(cap tanh(s / cap)) V, against the formula in double */
    memset(&d, 0, sizeof d);
    d.kind = ATTN_SOFTMAX; d.B = MD_B; d.H = MD_H; d.Tq = d.Tk = MD_T; d.dk = d.dv = MD_D; d.causal = 1;
    d.scale = 2; /* scores large enough for the cap to bite */
    d.mod = &cap;
    {
        static attn_float Q[MD_N], K[MD_N], V[MD_N], st[MD_B * MD_H * MD_T];
        attn_rng r;
        size_t wb = attn_attention_workspace(&d);
        void *work = malloc(wb);
        double worst = 0;
        int bh, e2;
        attn_rng_seed(&r, 5, 1);
        t_randn(Q, MD_N, &r, 1); t_randn(K, MD_N, &r, 1); t_randn(V, MD_N, &r, 1);
        CHECK(work && attn_attention_forward(&d, O1, st, NULL, Q, K, V, work, wb) == ATTN_OK, "soft cap: %s", attn_last_error());
        for (bh = 0; bh < MD_B * MD_H; bh++)
            for (i = 0; i < MD_T; i++) {
                double w[MD_T], m = -1e300, z = 0;
                for (j = 0; j <= i; j++) {
                    double s = 0;
                    for (e2 = 0; e2 < MD_D; e2++) s += (double)Q[(bh * MD_T + i) * MD_D + e2] * K[(bh * MD_T + j) * MD_D + e2];
                    w[j] = 2 * tanh(2 * s / 2);
                    m = w[j] > m ? w[j] : m;
                }
                for (j = 0; j <= i; j++) z += w[j] = exp(w[j] - m);
                for (e2 = 0; e2 < MD_D; e2++) {
                    double o = 0;
                    for (j = 0; j <= i; j++) o += w[j] / z * V[(bh * MD_T + j) * MD_D + e2];
                    err = fabs(o - O1[(bh * MD_T + i) * MD_D + e2]);
                    worst = err > worst ? err : worst;
                }
            }
        CHECK(worst < 1e4 * T_EPS, "soft cap against the formula: worst error %.3g", worst);
        free(work);
    }
    /* the backward passes against finite differences */
    {
        const attn_score_mod *mods[3] = {&alibi, &cap, &prefix};
        for (k = 0; k < 3; k++) {
            memset(&d, 0, sizeof d);
            d.kind = k == 2 ? ATTN_EXPRESSIVE : ATTN_SOFTMAX; d.B = 1; d.H = 2; d.Tq = d.Tk = 9; d.dk = d.dv = 4;
            d.causal = k < 2;
            d.mod = mods[k];
            CHECK(attn_gradcheck_attention(&d, 3, 0, 0, 0, &err) == 1, "modifier %d: the backward pass against finite "
                  "differences (worst %.3g)", k, err);
        }
    }
    /* the engines that cannot take them refuse */
    {
        static const attn_kind other[3] = {ATTN_KERNEL, ATTN_HYLA, ATTN_DIFFERENTIAL};
        for (k = 0; k < 3; k++) {
            memset(&d, 0, sizeof d);
            d.kind = other[k]; d.B = 1; d.H = 2; d.Tq = d.Tk = 9; d.dk = d.dv = 4; d.mod = &alibi;
            CHECK(attn_attention_workspace(&d) == 0 && attn_last_status() == ATTN_ERR_ARG && strstr(attn_last_error(), "modifiers"),
                  "%s with a modifier is refused", attn_kind_get(other[k])->name);
        }
        d.kind = ATTN_SOFTMAX;
        CHECK(attn_linformer_forward(&d, 4, 9, NULL, NULL, NULL, NULL, attn_linformer_cache_floats(&d, 4), NULL, NULL, NULL, NULL, 0) == ATTN_ERR_ARG &&
                  strstr(attn_last_error(), "modifiers"), "Linformer with a modifier is refused: %s", attn_last_error());
    }
}

/* The descriptor's masks written as mask modifiers: each predicate reads the same pattern the
   descriptor's fields give (the causal limit, a window with per-head dilation and global tokens, a
   block layout), as a user would write it. */
typedef struct {
    int window;
    const int *dilation;          /* [H] */
    const unsigned char *global;  /* [T] */
    const unsigned char *layout;  /* [H, nb, nb] */
    int block, nb;
} mp_ctx;
/* The worst |x - y| / (1 + |y|) over MD_N floats, above w. (Not a max reduction the compiler can
   vectorise: GCC 12 for AArch64 stops with an internal error on one at -O2.) */
static double md_rel(double w, const attn_float *x, const attn_float *y)
{
    int i;
    for (i = 0; i < MD_N; i++) {
        double e = fabs((double)x[i] - y[i]) / (1 + fabs((double)y[i]));
        if (e > w || e != e) w = e;
    }
    return w;
}
static int mp_causal(void *c, int b, int h, int p, int j)
{
    (void)c; (void)b; (void)h;
    return j <= p;
}
static int mp_window(void *c, int b, int h, int p, int j)
{
    const mp_ctx *m = (const mp_ctx *)c;
    int dil = m->dilation[h], r = j - p;
    (void)b;
    if (m->global[p] || m->global[j]) return 1;
    return r % dil == 0 && r / dil >= -m->window && r / dil <= m->window;
}
static int mp_layout(void *c, int b, int h, int p, int j)
{
    const mp_ctx *m = (const mp_ctx *)c;
    (void)b;
    return m->layout[((size_t)h * m->nb + p / m->block) * m->nb + j / m->block] != 0;
}

/* Causal attention, a dilated window with global tokens (Longformer), BigBird's block and token
   layouts, each as a mask modifier, equal the descriptor's causal, window / dilation / global and
   block / layout fields bit for bit (causal: to rounding), forward and backward, in the six kinds of
   the tiled engine (the window causal or not); the backward passes of the predicates against finite differences. */
static void test_mask_patterns(void)
{
    static const attn_kind kinds[6] = {ATTN_SOFTMAX, ATTN_EXPRESSIVE, ATTN_COG, ATTN_CENTERED, ATTN_SIGMOID,
                                       ATTN_LINEAR_RAW};
    static attn_float O1[MD_N], O2[MD_N], a1[MD_N], a2[MD_N], b1[MD_N], b2[MD_N], c1[MD_N], c2[MD_N];
    static unsigned char blocks[MD_H * 10 * 10], tokens[MD_H * MD_T * MD_T], global[MD_T];
    static const int dil[MD_H] = {1, 2, 3};
    mp_ctx cb = {3, dil, global, blocks, 4, 10}, ct = {3, dil, global, tokens, 1, MD_T};
    attn_score_mod causal = {NULL, NULL, mp_causal, NULL, NULL, NULL}, win = {NULL, NULL, mp_window, &cb, NULL, NULL};
    attn_score_mod bb = {NULL, NULL, mp_layout, &cb, NULL, NULL}, bt = {NULL, NULL, mp_layout, &ct, NULL, NULL};
    attn_attention_desc d, e;
    attn_rng r;
    int k, m, pairs = 0, same = 1;
    double err, worst = 0;
    attn_rng_seed(&r, 31, 4);
    global[0] = global[20] = 1;
    CHECK(attn_bigbird_blocks(blocks, MD_H, 10, 2, &r) == ATTN_OK &&
          attn_bigbird_tokens(tokens, MD_H, MD_T, 2, 6, 3, &r) == ATTN_OK, "mask patterns: %s", attn_last_error());
    for (k = 0; k < 6; k++)
        for (m = 0; m < 5; m++) {
            memset(&d, 0, sizeof d);
            d.kind = kinds[k]; d.B = MD_B; d.H = MD_H; d.Tq = d.Tk = MD_T; d.dk = d.dv = MD_D;
            e = d;
            if (m == 0) { d.mod = &causal; e.causal = 1; }
            if (m == 1 || m == 2) {
                d.causal = e.causal = m == 2;
                d.mod = &win;
                e.window = 3; e.dilation = dil; e.global = global;
            }
            if (m == 3) { d.mod = &bb; e.block = 4; e.layout = blocks; }
            if (m == 4) { d.mod = &bt; e.block = 1; e.layout = tokens; }
            if (!md_run(&d, O1, a1, b1, c1) || !md_run(&e, O2, a2, b2, c2)) {
                CHECK(0, "mask patterns: %s: %s", attn_kind_get(kinds[k])->name, attn_last_error());
                continue;
            }
            if (m == 0) /* the causal limit's own tile loops sum in another order */
                worst = md_rel(md_rel(md_rel(md_rel(worst, O1, O2), a1, a2), b1, b2), c1, c2);
            else
                same &= !memcmp(O1, O2, sizeof O1) && !memcmp(a1, a2, sizeof a1) && !memcmp(b1, b2, sizeof b1) &&
                        !memcmp(c1, c2, sizeof c1);
            pairs++;
        }
    CHECK(same && pairs == 30, "mask modifiers = the descriptor's dilated window + globals, BigBird blocks and tokens, "
          "bit for bit, forward and backward (%d pairs of calls)", pairs);
    CHECK(worst <= 64 * T_EPS, "a causal mask modifier = the causal descriptor to rounding, forward and backward "
          "(worst %.3g relative)", worst);
    {
        const attn_score_mod *mods[3] = {&win, &bb, &bt};
        for (m = 0; m < 3; m++) {
            memset(&d, 0, sizeof d);
            d.kind = m == 1 ? ATTN_EXPRESSIVE : ATTN_SOFTMAX; d.B = 1; d.H = 3; d.Tq = d.Tk = 9; d.dk = d.dv = 4;
            d.mod = mods[m];
            CHECK(attn_gradcheck_attention(&d, 3, 0, 0, 0, &err) == 1, "mask pattern %d: the backward pass against "
                  "finite differences (worst %.3g)", m, err);
        }
    }
}

/* The documented T5 bucket of rel = j - p among nb buckets up to md (bidirectional: half each way),
   in double, as the test's own reading of the formula. */
static int pm_bucket(int rel, int nb, int md, int bidir)
{
    int off = 0, n, me, b;
    if (bidir) {
        nb /= 2;
        off = rel > 0 ? nb : 0;
        n = rel < 0 ? -rel : rel;
    } else
        n = rel < 0 ? -rel : 0;
    me = nb / 2;
    if (n < me) return off + n;
    b = me + (int)(log((double)n / me + 1.1920928955078125e-7) / log((double)md / me) * (nb - me));
    return off + (b < nb - 1 ? b : nb - 1);
}

/* L = sum wo . O and its gradient w.r.t. a modifier's parameters w [n] by central differences (h) and by
   backward (dw), for d with d->mod = &m->fn; returns the worst |fd - dw| / max(1, |fd| + |dw|). */
static double pm_param_check(attn_attention_desc *d, attn_mod *m, attn_float *w, int n, double h)
{
    static attn_float Q[MD_N], K[MD_N], V[MD_N], O[MD_N], wo[MD_N], dQ[MD_N], dK[MD_N], dV[MD_N];
    static attn_float st[MD_B * MD_H * MD_T], dw[64];
    size_t no = (size_t)d->B * d->H * d->Tq * d->dv, wb, e;
    void *work;
    attn_attention_grads g;
    attn_rng r;
    double worst = 0;
    int i, s;
    attn_rng_seed(&r, 9, 2);
    t_randn(Q, MD_N, &r, 1); t_randn(K, MD_N, &r, 1); t_randn(V, MD_N, &r, 1); t_randn(wo, MD_N, &r, 1);
    memset(&g, 0, sizeof g);
    g.dQ = dQ; g.dK = dK; g.dV = dV;
    memset(dw, 0, sizeof dw);
    attn_mod_init(m, &m->cfg, w, dw); /* with dw the workspace holds the unchanged scores */
    work = malloc(wb = attn_attention_workspace(d));
    if (!work || n > 64 || attn_attention_forward(d, O, st, NULL, Q, K, V, work, wb) != ATTN_OK ||
        attn_attention_backward(d, &g, wo, Q, K, V, O, st, work, wb) != ATTN_OK)
        return free(work), 1e9;
    for (i = 0; i < n; i++) {
        attn_float keep = w[i];
        double L[2] = {0, 0}, fd;
        for (s = 0; s < 2; s++) {
            w[i] = keep + (attn_float)(s ? -h : h);
            attn_attention_forward(d, O, st, NULL, Q, K, V, work, wb);
            for (e = 0; e < no; e++) L[s] += (double)wo[e] * O[e];
        }
        w[i] = keep;
        fd = (L[0] - L[1]) / (2 * h);
        fd = fabs(fd - dw[i]) / fmax(1, fabs(fd) + fabs((double)dw[i]));
        if (fd > worst) worst = fd; /* (not an fmax reduction: aarch64 gcc 12's vectoriser crashes on it) */
    }
    free(work);
    return worst;
}

/* The provided modifiers: ALiBi (H 3, the slopes' rule off a power of two; H 2) and RELBIAS
   (unidirectional as attn_t5_bias_forward's table, and bidirectional) equal the same terms added as a
   materialised bias, bit for bit, forward and backward, in softmax, ea and cog; RELBIAS's dw equals
   attn_t5_bias_backward of dbias; the soft cap against the test's formula; RELBIAS's and the
   temperatures' dw against finite differences, the same bits with 1 and 2 threads; names; refusals. */
static void test_provided_mods(void)
{
    static attn_float O1[MD_N], O2[MD_N], a1[MD_N], a2[MD_N], b1[MD_N], b2[MD_N], c1[MD_N], c2[MD_N];
    static attn_float bias[MD_H * MD_T * MD_T], dbias[MD_H * MD_T * MD_T], table[MD_H * MD_T], dt[MD_H * MD_T],
        dw[MD_H * MD_T];
    static const attn_kind kinds[3] = {ATTN_SOFTMAX, ATTN_EXPRESSIVE, ATTN_COG};
    static const double slopes3[3] = {0.0625, 0.00390625, 0.25};
    attn_mod m;
    attn_mod_config c;
    attn_attention_desc d, e;
    attn_rng r;
    int v, k, h, i, j, same = 1, ran = 0;
    double err, dwerr = 0;
    attn_rng_seed(&r, 77, 0);
    t_randn(table, MD_H * MD_T, &r, 0.5);
    for (v = 0; v < 4; v++) { /* ALiBi H 3, ALiBi H 2, RELBIAS as T5's table (H 3), RELBIAS bidirectional */
        int H = v == 1 ? 2 : 3, nb = v == 2 ? MD_T : 8, md = v == 2 ? MD_T : 20;
        memset(&c, 0, sizeof c);
        c.kind = v < 2 ? ATTN_MOD_ALIBI : ATTN_MOD_RELBIAS; c.H = H;
        c.buckets = nb; c.max_distance = md; c.bidirectional = v == 3;
        CHECK(attn_mod_init(&m, &c, table, dw) == ATTN_OK, "attn_mod_init %d: %s", v, attn_last_error());
        for (h = 0; h < H; h++)
            for (i = 0; i < MD_T; i++)
                for (j = 0; j < MD_T; j++)
                    bias[(h * MD_T + i) * MD_T + j] =
                        v == 0   ? -(attn_float)slopes3[h] * (attn_float)(i - j)
                        : v == 1 ? -(attn_float)pow(2, -4.0 * (h + 1)) * (attn_float)(i - j)
                                 : table[h * nb + pm_bucket(j - i, nb, md, v == 3)];
        if (v == 2) { /* the library's own T5 table gives the same bias */
            attn_t5_bias_forward(dbias, table, H, MD_T, MD_T, MD_T);
            same &= !memcmp(dbias, bias, sizeof(attn_float) * H * MD_T * MD_T);
        }
        for (k = 0; k < 3; k++) {
            attn_attention_grads g;
            static attn_float Q[MD_N], K[MD_N], V[MD_N], dO[MD_N], st[MD_B * MD_H * MD_T];
            size_t wb;
            void *work;
            memset(&d, 0, sizeof d);
            d.kind = kinds[k]; d.B = MD_B; d.H = H; d.Tq = d.Tk = MD_T; d.dk = d.dv = MD_D; d.causal = v < 3;
            e = d;
            d.mod = &m.fn;
            e.bias = bias;
            if (!md_run(&e, O2, a2, b2, c2)) { CHECK(0, "provided modifiers: %s", attn_last_error()); continue; }
            /* md_run's inputs again, with dw and dbias */
            wb = attn_attention_workspace(&d);
            work = malloc(wb);
            attn_rng_seed(&r, 5, 1);
            t_randn(Q, MD_N, &r, 1); t_randn(K, MD_N, &r, 1); t_randn(V, MD_N, &r, 1); t_randn(dO, MD_N, &r, 1);
            memset(&g, 0, sizeof g);
            memset(a1, 0, sizeof a1); memset(b1, 0, sizeof b1); memset(c1, 0, sizeof c1);
            memset(dw, 0, sizeof dw);
            g.dQ = a1; g.dK = b1; g.dV = c1;
            same &= work && attn_attention_forward(&d, O1, st, NULL, Q, K, V, work, wb) == ATTN_OK &&
                    attn_attention_backward(&d, &g, dO, Q, K, V, O1, st, work, wb) == ATTN_OK;
            same &= !memcmp(O1, O2, sizeof O1) && !memcmp(a1, a2, sizeof a1) && !memcmp(b1, b2, sizeof b1) &&
                    !memcmp(c1, c2, sizeof c1);
            if (v >= 2) { /* dw against the materialised path's dbias, gathered */
                memset(dbias, 0, sizeof dbias);
                memset(dt, 0, sizeof dt);
                g.dbias = dbias;
                attn_attention_backward(&e, &g, dO, Q, K, V, O2, st, work, wb);
                for (h = 0; h < H; h++)
                    for (i = 0; i < MD_T; i++)
                        for (j = 0; j < MD_T; j++)
                            dt[h * nb + pm_bucket(j - i, nb, md, v == 3)] += dbias[(h * MD_T + i) * MD_T + j];
                for (i = 0; i < H * nb; i++)
                    if (fabs((double)dt[i] - dw[i]) / fmax(1, fabs((double)dt[i])) > dwerr)
                        dwerr = fabs((double)dt[i] - dw[i]) / fmax(1, fabs((double)dt[i]));
            }
            free(work);
            ran++;
        }
    }
    CHECK(same && ran == 12, "provided ALiBi and RELBIAS = the same bias materialised, bit for bit (%d kinds x variants)",
          ran);
    CHECK(dwerr < 1e2 * T_EPS, "RELBIAS's dw = its materialised bias's gradient gathered by bucket: %.3g", dwerr);
    /* soft cap: the provided one against the test's (libm tanh), and its backward */
    memset(&c, 0, sizeof c);
    c.kind = ATTN_MOD_SOFTCAP; c.H = MD_H; c.cap = 2;
    CHECK(attn_mod_init(&m, &c, NULL, NULL) == ATTN_OK, "softcap: %s", attn_last_error());
    {
        md_ctx mc;
        attn_score_mod cap = {md_cap, md_cap_vjp, NULL, NULL, NULL, NULL};
        double worst = 0;
        memset(&mc, 0, sizeof mc);
        mc.cap = 2;
        cap.ctx = &mc;
        memset(&d, 0, sizeof d);
        d.kind = ATTN_SOFTMAX; d.B = MD_B; d.H = MD_H; d.Tq = d.Tk = MD_T; d.dk = d.dv = MD_D; d.causal = 1; d.scale = 2;
        e = d;
        d.mod = &m.fn; e.mod = &cap;
        md_run(&d, O1, a1, b1, c1);
        md_run(&e, O2, a2, b2, c2);
        for (i = 0; i < MD_N; i++) {
            double e = fabs((double)O1[i] - O2[i]), f = fabs((double)a1[i] - a2[i]) / fmax(1, fabs((double)a2[i]));
            if (e > worst) worst = e;
            if (f > worst) worst = f;
        }
        CHECK(worst < 1e2 * T_EPS, "provided soft cap = the formula's, forward and dQ: %.3g", worst);
        d.B = 1; d.Tq = d.Tk = 9; d.dk = d.dv = 4;
        CHECK(attn_gradcheck_attention(&d, 3, 0, 0, 0, &err) == 1, "provided soft cap: backward against finite "
              "differences (worst %.3g)", err);
    }
    /* the learned ones' dw against finite differences; the same bits on 1 and 2 threads */
    for (v = 0; v < 2; v++) {
        static attn_float w[64], dws[2][64];
        double hh = sizeof(attn_float) == 4 ? 1e-2 : 1e-6, tol = sizeof(attn_float) == 4 ? 1e-2 : 1e-6;
        int np, t;
        memset(&c, 0, sizeof c);
        c.kind = v ? ATTN_MOD_TEMPERATURE : ATTN_MOD_RELBIAS; c.H = 2; c.buckets = 8; c.max_distance = 12;
        c.bidirectional = 1;
        np = (int)attn_mod_params(&c);
        t_randn(w, np, &r, 0.5);
        for (i = 0; v && i < np; i++) w[i] += 1; /* temperatures near 1 */
        attn_mod_init(&m, &c, w, NULL);
        memset(&d, 0, sizeof d);
        d.kind = v ? ATTN_SOFTMAX : ATTN_EXPRESSIVE; d.B = 2; d.H = 2; d.Tq = 11; d.Tk = 13; d.dk = d.dv = 4;
        d.mod = &m.fn;
        err = pm_param_check(&d, &m, w, np, hh);
        CHECK(err <= tol, "%s: dw against finite differences (worst %.3g)", attn_mod_name(c.kind), err);
        printf("  %s: dw against finite differences, worst %.3g (RELBIAS's dw against its bias's: %.3g)\n",
               attn_mod_name(c.kind), err, dwerr);
        for (t = 0; t < 2; t++) {
            attn_set_threads(t + 1);
            pm_param_check(&d, &m, w, 0, hh);
            memcpy(dws[t], m.dw, sizeof(attn_float) * np);
        }
        attn_set_threads(0);
        CHECK(!memcmp(dws[0], dws[1], sizeof(attn_float) * np), "%s: dw the same on 1 and 2 threads",
              attn_mod_name(c.kind));
    }
    /* names and refusals */
    for (same = 1, k = 0; k < ATTN_MOD_COUNT; k++)
        same &= attn_mod_from_name(attn_mod_name((attn_mod_kind)k)) == k;
    CHECK(same && attn_mod_from_name("rope") == -1 && attn_mod_name(ATTN_MOD_COUNT) == NULL, "modifier names");
    {
        static const struct { attn_mod_kind kind; int H; double cap; int nb, md, bidir; const char *what; } bad[] = {
            {ATTN_MOD_COUNT, 2, 0, 0, 0, 0, "not a provided"}, {ATTN_MOD_ALIBI, 0, 0, 0, 0, 0, "H = 0"},
            {ATTN_MOD_SOFTCAP, 2, 0, 0, 0, 0, "cap = 0"}, {ATTN_MOD_SOFTCAP, 2, -1, 0, 0, 0, "cap = -1"},
            {ATTN_MOD_RELBIAS, 2, 0, 1, 4, 0, "buckets"}, {ATTN_MOD_RELBIAS, 2, 0, 3, 4, 1, "buckets"},
            {ATTN_MOD_RELBIAS, 2, 0, 8, 4, 0, "max_distance = 4"},
            {ATTN_MOD_RELBIAS, 2, 0, 8, ATTN_MOD_MAX_DISTANCE + 1, 0, "max_distance"}};
        int refused = 0;
        for (k = 0; k < (int)(sizeof bad / sizeof *bad); k++) {
            memset(&c, 0, sizeof c);
            c.kind = bad[k].kind; c.H = bad[k].H; c.cap = (attn_float)bad[k].cap; c.buckets = bad[k].nb;
            c.max_distance = bad[k].md; c.bidirectional = bad[k].bidir;
            refused += attn_mod_init(&m, &c, table, NULL) != ATTN_OK && strstr(attn_last_error(), bad[k].what);
        }
        memset(&c, 0, sizeof c);
        c.kind = ATTN_MOD_TEMPERATURE; c.H = 2;
        refused += attn_mod_init(&m, &c, NULL, NULL) == ATTN_ERR_ARG && strstr(attn_last_error(), "parameters");
        refused += attn_mod_init(NULL, &c, table, NULL) == ATTN_ERR_ARG;
        CHECK(refused == (int)(sizeof bad / sizeof *bad) + 2, "bad modifier configurations refused (%d)", refused);
    }
}

/* The worst relative difference (to the larger of 1 and |b|) between a [n] and b. */
static double pm_diff(const attn_float *a, const attn_float *b, int n)
{
    double worst = 0;
    int i;
    for (i = 0; i < n; i++) {
        double e = fabs((double)a[i] - b[i]) / fmax(1, fabs((double)b[i]));
        if (e > worst) worst = e;
    }
    return worst;
}

/* The provided masks: their block answers exact on a 24 x 24 grid's blocks; WINDOW = the descriptor's
   window and PREFIX = a user's prefix mask, and with ALiBi each = itself without block answers (asked
   key by key), forward and backward, in softmax, EA and Cog, causal or not (PREFIX: not causal),
   within rounding; the backward with a soft cap against finite differences; names and refusals. */
static void test_provided_masks(void)
{
    static attn_float O1[MD_N], O2[MD_N], a1[MD_N], a2[MD_N], b1[MD_N], b2[MD_N], c1[MD_N], c2[MD_N];
    static const attn_kind kinds[3] = {ATTN_SOFTMAX, ATTN_EXPRESSIVE, ATTN_COG};
    md_ctx ctx = {{0}, 0, NULL, MD_T, 0};
    attn_score_mod prefix = {NULL, NULL, md_prefix, NULL, NULL, NULL};
    attn_mod m;
    attn_mod_config c;
    attn_attention_desc d, e;
    double worst = 0, err;
    int v, k, causal, alibi, p0, p1, j0, j1, p, j, exact = 1, blocks = 0, ran = 0, refused = 0;
    for (v = ATTN_MASK_WINDOW; v < ATTN_MASK_COUNT; v++)
        for (k = 0; k < 3; k++) { /* span 0, 3, 7 */
            memset(&c, 0, sizeof c);
            c.mask = (attn_mask_kind)v; c.span = 3 * k + (k > 1); c.H = 1;
            attn_mod_init(&m, &c, NULL, NULL);
            for (p0 = 0; p0 < 24; p0 += 3)
                for (p1 = p0; p1 < 24; p1 += 4)
                    for (j0 = 0; j0 < 24; j0 += 3)
                        for (j1 = j0; j1 < 24; j1 += 5) {
                            int seen = 0, want;
                            for (p = p0; p <= p1; p++)
                                for (j = j0; j <= j1; j++) seen |= m.fn.mask(m.fn.ctx, 0, 0, p, j) ? 2 : 1;
                            want = seen == 2 ? ATTN_BLOCK_FULL : seen == 1 ? ATTN_BLOCK_EMPTY : ATTN_BLOCK_PARTIAL;
                            exact &= m.fn.block(m.fn.ctx, 0, 0, p0, p1, j0, j1) == want;
                            blocks++;
                        }
        }
    memset(&c, 0, sizeof c);
    c.mask = ATTN_MASK_WINDOW; c.span = INT_MAX; c.H = 1; /* every key: no overflow (UBSan) */
    attn_mod_init(&m, &c, NULL, NULL);
    exact &= m.fn.block(m.fn.ctx, 0, 0, 5, 9, 0, 30) == ATTN_BLOCK_FULL && m.fn.mask(m.fn.ctx, 0, 0, 0, 30);
    CHECK(exact, "the provided masks' block answers are exact (%d blocks, and a span of INT_MAX)", blocks);
    for (v = ATTN_MASK_WINDOW; v < ATTN_MASK_COUNT; v++)
        for (alibi = 0; alibi < 2; alibi++)
            for (k = 0; k < 3; k++)
                for (causal = 0; causal < 2 - (v == ATTN_MASK_PREFIX); causal++) {
                    memset(&c, 0, sizeof c);
                    c.kind = alibi ? ATTN_MOD_ALIBI : ATTN_MOD_NONE; c.H = MD_H; c.mask = (attn_mask_kind)v; c.span = 5;
                    attn_mod_init(&m, &c, NULL, NULL);
                    memset(&d, 0, sizeof d);
                    d.kind = kinds[k]; d.B = MD_B; d.H = MD_H; d.Tq = d.Tk = MD_T; d.dk = d.dv = MD_D;
                    d.causal = causal;
                    e = d;
                    d.mod = &m.fn;
                    if (v == ATTN_MASK_WINDOW) e.window = 5;
                    else ctx.prefix = 5, prefix.ctx = &ctx, e.mod = &prefix;
                    if (alibi) { /* the other side: the same without its block answers (asked key by key) */
                        static attn_mod am;
                        am = m;
                        am.fn.ctx = &am;
                        am.fn.block = NULL;
                        e = d;
                        e.mod = &am.fn;
                    }
                    if (!md_run(&d, O1, a1, b1, c1) || !md_run(&e, O2, a2, b2, c2)) {
                        CHECK(0, "provided masks: %s: %s", attn_kind_get(kinds[k])->name, attn_last_error());
                        continue;
                    }
                    err = fmax(fmax(pm_diff(O1, O2, MD_N), pm_diff(a1, a2, MD_N)), fmax(pm_diff(b1, b2, MD_N),
                                                                                       pm_diff(c1, c2, MD_N)));
                    if (err > worst) worst = err;
                    ran++;
                }
    CHECK(ran == 18 && worst < 1e2 * T_EPS, "provided masks = the window, a user's prefix mask: %.3g (%d calls)",
          worst, ran);
    for (v = ATTN_MASK_WINDOW; v < ATTN_MASK_COUNT; v++) {
        memset(&c, 0, sizeof c);
        c.kind = ATTN_MOD_SOFTCAP; c.cap = 2; c.H = 2; c.mask = (attn_mask_kind)v; c.span = 3;
        attn_mod_init(&m, &c, NULL, NULL);
        memset(&d, 0, sizeof d);
        d.kind = ATTN_SOFTMAX; d.B = 1; d.H = 2; d.Tq = d.Tk = 9; d.dk = d.dv = 4; d.causal = v == ATTN_MASK_WINDOW;
        d.scale = 2;
        d.mod = &m.fn;
        CHECK(attn_gradcheck_attention(&d, 3, 0, 0, 0, &err) == 1, "%s mask with a soft cap: the backward against "
              "finite differences (worst %.3g)", attn_mask_name((attn_mask_kind)v), err);
    }
    for (k = 0, exact = 1; k < ATTN_MASK_COUNT; k++)
        exact &= attn_mask_from_name(attn_mask_name((attn_mask_kind)k)) == k;
    CHECK(exact && attn_mask_from_name("alibi") == -1 && attn_mask_name(ATTN_MASK_COUNT) == NULL, "mask names");
    memset(&c, 0, sizeof c);
    c.H = 2; c.mask = ATTN_MASK_COUNT;
    refused += attn_mod_init(&m, &c, NULL, NULL) == ATTN_ERR_ARG && strstr(attn_last_error(), "provided mask");
    c.mask = ATTN_MASK_WINDOW; c.span = -1;
    refused += attn_mod_init(&m, &c, NULL, NULL) == ATTN_ERR_ARG && strstr(attn_last_error(), "span");
    CHECK(refused == 2, "bad masks refused (%d)", refused);
    { /* a modifier made for fewer heads than the call has (its table would be read past its end) */
        static attn_float w[2 * 8];
        attn_block_mask bm;
        memset(&c, 0, sizeof c);
        c.kind = ATTN_MOD_RELBIAS; c.H = 2; c.buckets = 8; c.max_distance = 12; c.mask = ATTN_MASK_WINDOW; c.span = 3;
        attn_mod_init(&m, &c, w, NULL);
        memset(&d, 0, sizeof d);
        d.kind = ATTN_SOFTMAX; d.B = 1; d.H = 3; d.Tq = d.Tk = 9; d.dk = d.dv = 4; d.mod = &m.fn;
        refused = attn_attention_workspace(&d) == 0 && strstr(attn_last_error(), "H = 2 heads");
        if (attn_block_mask_build(&bm, &m.fn, 1, 1, 9, 9, 4) == ATTN_OK) {
            d.mod = &bm.fn;
            refused += attn_attention_workspace(&d) == 0 && strstr(attn_last_error(), "H = 2 heads");
            d.H = 2;
            refused += attn_attention_workspace(&d) > 0;
            attn_block_mask_free(&bm);
        }
        CHECK(refused == 3, "a modifier for 2 heads refused on 3, alone and through a block table (%d)", refused);
    }
}

/* The worst relative difference between O [n] and stats [ns] and O2, s2 (the larger of 1 and |O2|). */
static double fused_diff(const attn_float *O, const attn_float *st, const attn_float *O2, const attn_float *s2,
                         size_t n, size_t ns)
{
    double worst = 0;
    size_t i;
    for (i = 0; i < n + ns; i++) { /* (an if, not fmax: see above) */
        double x = i < n ? O[i] : st[i - n], y = i < n ? O2[i] : s2[i - n], e = fabs(x - y) / fmax(1, fabs(y));
        if (e > worst) worst = e;
    }
    return worst;
}

/* d's forward (fused where it can) into O, st against the tiled engine's (the same call with the
   zero bias [H, Tq, Tk], which the fused kernel does not take) into O2, s2: fused_diff, or -1 with a
   failed check when a call fails. */
static double fused_vs_tiled(const attn_attention_desc *d, const attn_float *zero, const attn_float *Q,
                             const attn_float *K, const attn_float *V, attn_float *O, attn_float *st, attn_float *O2,
                             attn_float *s2)
{
    attn_attention_desc e = *d;
    size_t wb, wb2, ns = (size_t)d->B * d->H * d->Tq;
    double worst = -1;
    void *work;
    e.bias = zero;
    wb = attn_attention_workspace(d);
    wb2 = attn_attention_workspace(&e);
    work = malloc(wb > wb2 ? wb : wb2);
    if (!work || attn_attention_forward(d, O, st, NULL, Q, K, V, work, wb > wb2 ? wb : wb2) != ATTN_OK ||
        attn_attention_forward(&e, O2, s2, NULL, Q, K, V, work, wb > wb2 ? wb : wb2) != ATTN_OK)
        CHECK(0, "%s against the tiled engine: %s", attn_kind_get(d->kind)->name, attn_last_error());
    else
        worst = fused_diff(O, st, O2, s2, ns * d->dv, ns);
    free(work);
    return worst;
}

/* The fused forward with a score modifier, at shapes every SIMD ISA fuses (dk = dv = 32), against the
   tiled engine's (the same call with a zero bias, which the fused kernel does not take): O and the
   stats within rounding, for the four provided modifiers in softmax, Cog and EA, causal or not. */
static void test_fused_mods(void)
{
    enum { B = 1, H = 2, T = 70, D = 32, N = B * H * T * D };
    static const attn_kind kinds[3] = {ATTN_SOFTMAX, ATTN_COG, ATTN_EXPRESSIVE};
    static attn_float Q[N], K[N], V[N], O1[N], O2[N], s1[B * H * T], s2[B * H * T], zero[H * T * T], w[64];
    attn_attention_desc d;
    attn_mod_config c;
    attn_mod m;
    attn_rng r;
    double worst = 0, err;
    int k, v, causal, i, calls = 0;
    attn_rng_seed(&r, 31, 0);
    t_randn(Q, N, &r, 1); t_randn(K, N, &r, 1); t_randn(V, N, &r, 1); t_randn(w, 64, &r, 0.5);
    for (i = 0; i < H; i++) w[i] += 1; /* temperatures near 1 */
    for (k = 0; k < 3; k++)
        for (v = ATTN_MOD_ALIBI; v < ATTN_MOD_COUNT; v++)
            for (causal = 0; causal < 2; causal++) {
                memset(&c, 0, sizeof c);
                c.kind = (attn_mod_kind)v; c.H = H; c.cap = 2; c.buckets = 16; c.max_distance = 40;
                attn_mod_init(&m, &c, w, NULL);
                memset(&d, 0, sizeof d);
                d.kind = kinds[k]; d.B = B; d.H = H; d.Tq = d.Tk = T; d.dk = d.dv = D; d.causal = causal;
                d.mod = &m.fn;
                if ((err = fused_vs_tiled(&d, zero, Q, K, V, O1, s1, O2, s2)) < 0) continue;
                if (err > worst) worst = err;
                calls++;
            }
    CHECK(calls == 24 && worst < 1e2 * T_EPS, "score modifiers in the fused forward = in the tiled one: %.3g (%d calls)",
          worst, calls);
}

/* The fused forward under masks, at shapes every SIMD ISA fuses (dk = dv = 32, T 200: groups of keys
   skipped, partial and full), against the tiled engine's (the same call with a zero bias): O and the
   stats within rounding, in softmax, Cog and EA, causal or not, for a key mask, segments, a dilated
   window with global tokens, a block layout, a head-dependent mask modifier alone (the tiled path) and its
   block table, and segments with a score modifier (ALiBi). */
static int fm_mask(void *ctx, int b, int h, int p, int j)
{
    (void)ctx;
    return (p + j + b) % 5 != 0 && abs(p - j) < 40 + 30 * h;
}

static void test_fused_masks(void)
{
    enum { B = 2, H = 2, T = 200, D = 32, N = B * H * T * D, M = 7 };
    static const attn_kind kinds[3] = {ATTN_SOFTMAX, ATTN_COG, ATTN_EXPRESSIVE};
    static attn_float Q[N], K[N], V[N], O1[N], O2[N], s1[B * H * T], s2[B * H * T], zero[H * T * T];
    static unsigned char keys[B * T], glob[T], layout[H * 13 * 13];
    static int seg[B * T], dil[H] = {1, 3};
    attn_score_mod win = {NULL, NULL, fm_mask, NULL, NULL, NULL};
    attn_block_mask bm;
    attn_attention_desc d;
    attn_mod alibi;
    attn_mod_config ac;
    attn_rng r;
    double worst = 0, err;
    int k, m, causal, i, calls = 0;
    attn_rng_seed(&r, 32, 0);
    t_randn(Q, N, &r, 1); t_randn(K, N, &r, 1); t_randn(V, N, &r, 1);
    for (i = 0; i < B * T; i++) {
        keys[i] = (unsigned char)(i % T < 150 || i % 7 == 0); /* keys past 150 mostly hidden */
        seg[i] = i % T / 70;                                  /* three documents */
    }
    for (i = 0; i < T; i++) glob[i] = (unsigned char)(i == 3 || i == 120);
    for (i = 0; i < H * 13 * 13; i++) layout[i] = (unsigned char)((i * 7) % 5 < 2 || i % 14 == 0);
    memset(&ac, 0, sizeof ac);
    ac.kind = ATTN_MOD_ALIBI; ac.H = H;
    attn_mod_init(&alibi, &ac, NULL, NULL);
    CHECK(attn_block_mask_build(&bm, &win, B, H, T, T, 16) == ATTN_OK, "fused masks: the block table");
    for (k = 0; k < 3; k++)
        for (m = 0; m < M; m++)
            for (causal = 0; causal < 2; causal++) {
                memset(&d, 0, sizeof d);
                d.kind = kinds[k]; d.B = B; d.H = H; d.Tq = d.Tk = T; d.dk = d.dv = D; d.causal = causal;
                if (m == 0) d.key_mask = keys;
                if (m == 1) d.segment = seg;
                if (m == 2) { d.window = 20; d.dilation = dil; d.global = glob; }
                if (m == 3) { d.block = 16; d.layout = layout; }
                if (m == 4) d.mod = &win;
                if (m == 5) d.mod = &bm.fn;
                if (m == 6) { d.mod = &alibi.fn; d.segment = seg; }
                if ((err = fused_vs_tiled(&d, zero, Q, K, V, O1, s1, O2, s2)) < 0) continue;
                if (err > worst) worst = err;
                calls++;
            }
    CHECK(calls == 3 * M * 2 && worst < 1e2 * T_EPS, "masks in the fused forward = in the tiled one: %.3g (%d calls)",
          worst, calls);
    attn_block_mask_free(&bm);
}

/* A registered kind with an exponent of its own (x = 2 s: softmax at twice the scale) takes the
   fused forward: against the tiled engine's (a zero bias) and against built-in softmax at twice the
   scale, causal or not, alone, under segments and with ALiBi (dk = dv = 32, T 200). */
static void hot_exponent(size_t n, const attn_float *s, const attn_float *vis, attn_float *x)
{
    size_t i;
    for (i = 0; i < n; i++) x[i] = !vis || vis[i] != 0 ? 2 * s[i] : (attn_float)-3e38;
}
static void hot_vjp(size_t n, const attn_float *s, const attn_float *a, const attn_float *vis, attn_float *ds,
                    attn_float D, attn_float inv)
{
    size_t i;
    (void)s; (void)vis; (void)inv;
    for (i = 0; i < n; i++) ds[i] = 2 * a[i] * (ds[i] - D);
}

static void test_fused_user_kind(void)
{
    enum { B = 1, H = 2, T = 200, D = 32, N = B * H * T * D };
    static const attn_score_row hot_row = {ATTN_STAT_LSE, NULL, NULL, hot_exponent, NULL, hot_vjp};
    static attn_float Q[N], K[N], V[N], O[3][N], st[3][B * H * T], zero[H * T * T];
    static unsigned char work[1 << 22];
    static int seg[T];
    attn_kind_info info = {ATTN_SOFTMAX, "test_hot", NULL, "softmax(2 s)", NULL, NULL, NULL, 0, &hot_row, NULL, NULL};
    attn_kind hot = attn_kind_from_name("test_hot") >= 0 ? (attn_kind)attn_kind_from_name("test_hot")
                                                          : attn_kind_register(&info);
    attn_mod alibi;
    attn_mod_config ac;
    attn_rng r;
    double worst = 0, err;
    int m, causal, i, calls = 0;
    attn_rng_seed(&r, 33, 0);
    t_randn(Q, N, &r, 1); t_randn(K, N, &r, 1); t_randn(V, N, &r, 1);
    for (i = 0; i < T; i++) seg[i] = i / 70;
    memset(&ac, 0, sizeof ac);
    ac.kind = ATTN_MOD_ALIBI; ac.H = H;
    attn_mod_init(&alibi, &ac, NULL, NULL);
    for (m = 0; m < 3; m++)
        for (causal = 0; causal < 2; causal++) {
            attn_attention_desc d;
            memset(&d, 0, sizeof d);
            d.kind = hot; d.B = B; d.H = H; d.Tq = d.Tk = T; d.dk = d.dv = D; d.causal = causal;
            d.scale = (attn_float)0.2;
            if (m == 1) d.segment = seg;
            if (m == 2) d.mod = &alibi.fn;
            if ((err = fused_vs_tiled(&d, zero, Q, K, V, O[0], st[0], O[1], st[1])) < 0) continue;
            if (err > worst) worst = err;
            if (m < 2) { /* softmax at twice the scale (not with ALiBi: 2 (s + m)) */
                d.kind = ATTN_SOFTMAX; d.scale = (attn_float)0.4;
                if (attn_attention_workspace(&d) > sizeof work ||
                    attn_attention_forward(&d, O[2], st[2], NULL, Q, K, V, work, sizeof work) != ATTN_OK)
                    continue;
                err = fused_diff(O[0], st[0], O[2], st[2], N, B * H * T);
                if (err > worst) worst = err;
            }
            calls++;
        }
    CHECK((int)hot >= ATTN_KIND_COUNT && calls == 6 && worst < 1e2 * T_EPS,
          "a registered kind's exponent in the fused forward = the tiled engine's = softmax at twice the scale: %.3g", worst);
}

/* The layer's step over a cache against its full pass, for every kind the step takes: causal
   self-attention in calls of 3, 1 and 2 rows gives the full pass' rows, with RoPE (variant 0), a
   window with a different dilation per head, a global token and ALiBi slopes per head (variant 1,
   the kinds with a pattern; the modifier for the tiled engine's; QK-norm in variant 0), grouped-query heads (variant 2,
   where the kind takes them); the linear-time kinds also from a recurrent state (rows = 0).
   Cross-attention over a source added once gives the forward with m. Per-head settings are what a
   head-at-a-time decoder got wrong. */
static void test_layer_step(void)
{
    enum { T = 6, C = 5, H = 2, DK = 4, DV = 3, CAP = 8, TS = 5 };
    static const int calls[3] = {3, 1, 2};
    static const int dil[H] = {1, 2};
    static const unsigned char glob[CAP] = {1, 0, 0, 0, 0, 0, 0, 0};
    double tol = sizeof(attn_float) == 4 ? 2e-5 : 1e-12, worst = 0;
    int k, variant, rec, cross, cases = 0, refused = 0, shifted = 0;
    attn_rng r;
    md_ctx mc;
    attn_score_mod mod;
    memset(&mc, 0, sizeof mc);
    mc.slope[0] = (attn_float)0.5; mc.slope[1] = (attn_float)0.125;
    memset(&mod, 0, sizeof mod);
    mod.score = md_alibi; mod.ctx = &mc;
    attn_rng_seed(&r, 4242, 0);
    for (k = 0; k < ATTN_KIND_COUNT; k++)
        for (variant = 0; variant < 3; variant++)
            for (cross = 0; cross < 2; cross++)
                for (rec = 0; rec < 2; rec++) {
                    const attn_kind_info *ki = attn_kind_get((attn_kind)k);
                    int linear = (ki->flags & ATTN_KF_LINEAR_TIME) != 0, t, n, c2, Tq = cross ? 3 : T;
                    int tiled = ki->score && !(ki->flags & (ATTN_KF_SUBHEADS | ATTN_KF_MIXES_HEADS)),
                        grouped = tiled && !(ki->flags & ATTN_KF_PARAMS);
                    attn_layer L;
                    attn_layer_kv kv;
                    attn_float P[6 * H * DK * C + 3 * H * DV], x[T * C], m[TS * C], yf[T * C], ys[T * C];
                    attn_float w2[H * DV * DV], qg[2 * DK], *cache, *kc, *vc;
                    size_t nk, nv, wb, sb;
                    void *work, *sw;
                    double err = 0, scale = 1;
                    if ((rec && !linear) || (variant == 1 && (linear || cross)) || (variant == 2 && !grouped))
                        continue;
                    t_randn(P, sizeof P / sizeof *P, &r, 0.5);
                    t_randn(x, sizeof x / sizeof *x, &r, 1);
                    t_randn(m, sizeof m / sizeof *m, &r, 1);
                    t_randn(w2, sizeof w2 / sizeof *w2, &r, 0.4);
                    for (t = 0; t < 2 * DK; t++) qg[t] = 1 + (attn_float)(0.3 * attn_rng_normal(&r, 0, 1));
                    memset(&L, 0, sizeof L);
                    L.att.kind = (attn_kind)k; L.att.H = H; L.att.dk = DK; L.att.dv = DV; L.att.causal = !cross;
                    L.att.w2 = w2;
                    L.C = L.Cout = C;
                    L.Wq = P; L.Wk = P + H * DK * C; L.Wv = P + 2 * H * DK * C; L.Wo = P + 3 * H * DK * C;
                    L.bq = P + 4 * H * DK * C; L.bk = L.bq + H * DK; L.bv = L.bk + H * DK; L.bo = L.bv + H * DV;
                    L.rope = variant == 0 && !cross;
                    if (variant == 0) L.qnorm = qg, L.knorm = qg + DK; /* QK-norm */
                    if (variant == 1) {
                        L.att.window = 1; L.att.dilation = dil; L.att.global = glob;
                        if (tiled) L.att.mod = &mod;
                    }
                    if (variant == 2) L.att.kv_heads = 1, L.att.mod = &mod;
                    if (ki->score && ki->score->offset) { /* the scores shift with the key count */
                        refused += attn_layer_step_work_bytes(&L, 1, CAP) == 0;
                        shifted++;
                        continue;
                    }
                    cache = t_alloc(attn_layer_cache_floats(&L, 1, Tq, cross ? TS : T));
                    work = malloc(wb = attn_layer_work_bytes(&L, 1, Tq, cross ? TS : T));
                    nk = attn_layer_kv_floats(&L, rec ? 0 : CAP, &nv);
                    sb = attn_layer_step_work_bytes(&L, TS, rec ? 0 : CAP); /* the source's 5 rows at most */
                    kc = t_alloc(nk); vc = t_alloc(nv); sw = malloc(sb);
                    memset(kc, 0, sizeof(attn_float) * nk); memset(vc, 0, sizeof(attn_float) * nv);
                    kv.k = kc; kv.v = vc; kv.rows = rec ? 0 : CAP; kv.held = 0;
                    CHECK(attn_layer_forward(&L, yf, cache, attn_layer_cache_floats(&L, 1, Tq, cross ? TS : Tq), x, cross ? m : NULL, 1, Tq, cross ? TS : Tq, work, wb) ==
                              ATTN_OK, "step's reference %s: %s", ki->name, attn_last_error());
                    if (cross) {
                        CHECK(attn_layer_kv_add(&L, &kv, m, TS, 0, sw, sb) == ATTN_OK &&
                                  attn_layer_step(&L, &kv, ys, x, Tq, 0, 0, sw, sb) == ATTN_OK && kv.held == TS,
                              "cross step %s: %s", ki->name, attn_last_error());
                    } else
                        for (t = 0, c2 = 0; t < T; t += n, c2++) {
                            n = calls[c2];
                            CHECK(attn_layer_step(&L, &kv, ys + t * C, x + t * C, n, t, 1, sw, sb) == ATTN_OK,
                                  "step %s variant %d: %s", ki->name, variant, attn_last_error());
                        }
                    for (t = 0; t < Tq * C; t++) {
                        scale = fmax(scale, fabs((double)yf[t]));
                        err = fmax(err, fabs((double)yf[t] - ys[t]));
                    }
                    err /= scale;
                    worst = fmax(worst, err);
                    CHECK(err <= tol, "layer step %s variant %d cross %d state %d: %.3g from the full pass", ki->name,
                          variant, cross, rec, err);
                    cases++;
                    free(cache); free(work); free(kc); free(vc); free(sw);
                }
    CHECK(shifted > 0 && refused == shifted, "the step refuses kinds whose scores shift with the key count (%d of %d)",
          refused, shifted);
    printf("  layer step: %d cases, largest relative difference from the full pass %.2g\n", cases, worst);
}

void test_attention(void)
{
    test_grouped_query();
    test_centered_literal();
    test_layer_global();
    test_bigbird();
    test_linformer();
    test_patterns();
    test_segments();
    test_segment_tiles();
    test_block_mask();
    test_fused_masks();
    test_fused_user_kind();
    test_layer();
    test_layer_fused();
    test_against_reference();
    test_fused_forward();
    test_sharp_rows();
    test_gradients();
    test_single_query_rows();
    test_softmax_exponent_range();
    test_identities();
    test_stability();
    test_bad_input();
    test_modifiers();
    test_mask_patterns();
    test_provided_mods();
    test_provided_masks();
    test_fused_mods();
    test_kv_rows();
    test_layer_step();
}

/* ---- the attention layer ---- */
typedef struct {
    attn_layer L;
    attn_float *x, *m, *y, *cache, *dx, *dm, *P, *dP; /* P: all eight parameters, one block */
    attn_float *kp, *dkp;                             /* the kind's own: lambda, gain, w2 */
    attn_layer_grads g;
    void *work;
    size_t work_bytes, nx, nm, ny, np;
    int B, Tq, Tk, cross;
} layer_ctx;

static void layer_f(void *p)
{
    layer_ctx *c = (layer_ctx *)p;
    attn_layer_forward(&c->L, c->y, c->cache, attn_layer_cache_floats(&c->L, c->B, c->Tq, c->Tk), c->x, c->cross ? c->m : NULL, c->B, c->Tq, c->Tk, c->work, c->work_bytes);
}

static void layer_b(void *p, const attn_float *dy)
{
    layer_ctx *c = (layer_ctx *)p;
    attn_layer_backward(&c->L, c->dx, c->cross ? c->dm : NULL, &c->g, dy, c->x, c->cross ? c->m : NULL, c->cache, attn_layer_cache_floats(&c->L, c->B, c->Tq, c->Tk), c->B, c->Tq, c->Tk, c->work, c->work_bytes);
}

/* The layer's weights in one block P drawn from N(0, 0.5^2), gradients in the mirror block dP:
   Wq bq Wk bk Wv bv Wo bo and, with global, Wqg bqg Wkg bkg Wvg bvg. */
static void layer_params(layer_ctx *c, int global, attn_rng *r)
{
    const attn_float **w[14] = {&c->L.Wq, &c->L.bq, &c->L.Wk, &c->L.bk, &c->L.Wv, &c->L.bv, &c->L.Wo, &c->L.bo,
                                &c->L.Wqg, &c->L.bqg, &c->L.Wkg, &c->L.bkg, &c->L.Wvg, &c->L.bvg};
    attn_float **g[14] = {&c->g.dWq, &c->g.dbq, &c->g.dWk, &c->g.dbk, &c->g.dWv, &c->g.dbv, &c->g.dWo, &c->g.dbo,
                          &c->g.dWqg, &c->g.dbqg, &c->g.dWkg, &c->g.dbkg, &c->g.dWvg, &c->g.dbvg};
    size_t H = (size_t)c->L.att.H, dk = (size_t)c->L.att.dk, dv = (size_t)c->L.att.dv, C = (size_t)c->L.C, sz[14], off;
    int i, n = global ? 14 : 8;
    for (i = 0; i < 14; i += 8) { /* the projections q, k, v (and their global twins) */
        sz[i] = sz[i + 2] = H * dk * C; sz[i + 1] = sz[i + 3] = H * dk;
        sz[i + 4] = H * dv * C; sz[i + 5] = H * dv;
    }
    sz[6] = (size_t)c->L.Cout * H * dv; sz[7] = (size_t)c->L.Cout;
    for (c->np = 0, i = 0; i < n; i++) c->np += sz[i];
    c->P = t_alloc(c->np); c->dP = t_alloc(c->np);
    t_randn(c->P, c->np, r, 0.5);
    for (off = 0, i = 0; i < n; off += sz[i], i++) {
        *w[i] = c->P + off;
        *g[i] = c->dP + off;
    }
}

static void test_layer(void)
{
    attn_rng r, kr;
    int k, causal, cross, rope, qk;
    char what[128];
    attn_rng_seed(&r, 36, 0);
    attn_rng_seed(&kr, 36, 1);
    for (k = 0; k < ATTN_KIND_COUNT; k++)
        for (causal = 0; causal < 2; causal++)
            for (cross = 0; cross < 2; cross++)
                for (rope = 0; rope < 2; rope++)
                    for (qk = 0; qk < 2; qk++) { /* qk: QK-norm, for softmax, ea and kernel */
                    layer_ctx c;
                    int C = 5, H = 2, dk = 4, dv = 3, Cout = 6, i;
                    size_t nkp;
                    if (rope && cross) continue; /* RoPE is for self-attention */
                    if (!fd_in_float((attn_kind)k)) continue; /* as in test_gradients */
                    if (qk && k != ATTN_SOFTMAX && k != ATTN_EXPRESSIVE && k != ATTN_KERNEL) continue;
                    /* EA's with QK-norm in float64 only: the normalised rows make scores of order
                       sqrt(dk) gain^2, where float's step of 1e-2 misses EA's curvature by 2-6% */
                    if (qk && k == ATTN_EXPRESSIVE && !T_DOUBLE) continue;
                    memset(&c, 0, sizeof c);
                    c.B = 2; c.Tq = 5; c.Tk = cross ? 7 : 5; c.cross = cross;
                    c.L.att.kind = (attn_kind)k; c.L.att.H = H; c.L.att.dk = dk; c.L.att.dv = dv; c.L.att.causal = causal;
                    c.L.C = C; c.L.Cout = Cout; c.L.rope = rope;
                    layer_params(&c, 0, &r);
                    c.nx = (size_t)c.B * c.Tq * C; c.nm = (size_t)c.B * c.Tk * C; c.ny = (size_t)c.B * c.Tq * Cout;
                    c.x = t_alloc(c.nx); c.m = t_alloc(c.nm); c.y = t_alloc(c.ny); c.dx = t_alloc(c.nx); c.dm = t_alloc(c.nm);
                    t_randn(c.x, c.nx, &r, 1);
                    t_randn(c.m, c.nm, &r, 1);
                    nkp = (size_t)2 * dk + dv + (size_t)H * dv * dv + (qk ? 2 * (size_t)dk : 0);
                    c.kp = t_alloc(nkp); c.dkp = t_alloc(nkp);
                    t_randn(c.kp, nkp, &kr, 0.4); /* its own stream: the other draws stay as they were */
                    c.L.att.lambda = c.kp; c.L.att.gain = c.kp + 2 * dk; c.L.att.w2 = c.kp + 2 * dk + dv;
                    c.L.att.lambda_init = attn_diff_lambda_init(0);
                    c.g.dlambda = c.dkp; c.g.dgain = c.dkp + 2 * dk; c.g.dw2 = c.dkp + 2 * dk + dv;
                    if (qk) { /* QK-norm's gains near 1, after the others */
                        attn_float *gq = c.kp + nkp - 2 * dk;
                        for (i = 0; i < 2 * dk; i++) gq[i] += 1;
                        c.L.qnorm = gq; c.L.knorm = gq + dk;
                        c.g.dqnorm = c.dkp + nkp - 2 * dk; c.g.dknorm = c.g.dqnorm + dk;
                    }
                    c.cache = t_alloc(attn_layer_cache_floats(&c.L, c.B, c.Tq, c.Tk));
                    c.work_bytes = attn_layer_work_bytes(&c.L, c.B, c.Tq, c.Tk);
                    c.work = malloc(c.work_bytes);
                    {
                        t_var v[4] = {{"x", c.x, c.dx, c.nx}, {"params", c.P, c.dP, c.np}, {"kind params", c.kp, c.dkp, nkp}, {"m", c.m, c.dm, c.nm}};
                        snprintf(what, sizeof what, "layer %s causal %d %s rope %d qk-norm %d", attn_kind_get((attn_kind)k)->name, causal,
                                 cross ? "cross" : "self", rope, qk);
                        t_gradcheck(what, layer_f, layer_b, &c, c.y, c.ny, v, cross ? 4 : 3);
                    }
                    free(c.kp); free(c.dkp); free(c.P); free(c.dP); free(c.x); free(c.m); free(c.y); free(c.dx); free(c.dm); free(c.cache); free(c.work);
                }
}

/* Self-attention computes q, k, v as one product each way (the weights stacked, see attn.h's
   attn__layer_qkv_forward); cross-attention with m = x computes the same layer one projection at a
   time. Outputs, dx (there dx + dm) and every parameter's gradient must agree to rounding, with
   grouped-query heads and a missing bias too. */
static double max_abs_diff(const attn_float *a, const attn_float *b, size_t n);
static void test_layer_fused(void)
{
    attn_rng r;
    int kv, nob, run, B = 2, T = 5, C = 5, H = 2, dk = 4, dv = 3, Cout = 6, cases = 0;
    double worst = 0;
    attn_rng_seed(&r, 37, 0);
    for (kv = 0; kv < 2; kv++)
        for (nob = 0; nob < 2; nob++) {
            layer_ctx c;
            attn_float *dy, *out[2][3]; /* per run: y, dx, dP */
            size_t i;
            memset(&c, 0, sizeof c);
            c.B = B; c.Tq = c.Tk = T;
            c.L.att.kind = ATTN_SOFTMAX; c.L.att.H = H; c.L.att.dk = dk; c.L.att.dv = dv;
            c.L.att.kv_heads = kv; c.L.att.causal = nob;
            c.L.C = C; c.L.Cout = Cout;
            layer_params(&c, 0, &r);
            if (nob) { c.L.bk = NULL; c.g.dbk = NULL; c.L.bq = NULL; c.g.dbq = NULL; }
            c.nx = c.nm = (size_t)B * T * C; c.ny = (size_t)B * T * Cout;
            c.x = t_alloc(c.nx); c.m = t_alloc(c.nm); c.y = t_alloc(c.ny); c.dx = t_alloc(c.nx); c.dm = t_alloc(c.nm);
            dy = t_alloc(c.ny);
            t_randn(c.x, c.nx, &r, 1);
            t_randn(dy, c.ny, &r, 1);
            memcpy(c.m, c.x, sizeof(attn_float) * c.nx);
            c.cache = t_alloc(attn_layer_cache_floats(&c.L, B, T, T));
            c.work_bytes = attn_layer_work_bytes(&c.L, B, T, T);
            c.work = malloc(c.work_bytes);
            for (run = 0; run < 2; run++) { /* 0: self-attention, 1: cross-attention over m = x */
                c.cross = run;
                memset(c.dx, 0, sizeof(attn_float) * c.nx);
                memset(c.dm, 0, sizeof(attn_float) * c.nm);
                memset(c.dP, 0, sizeof(attn_float) * c.np);
                layer_f(&c);
                layer_b(&c, dy);
                if (run) for (i = 0; i < c.nx; i++) c.dx[i] += c.dm[i];
                out[run][0] = t_alloc(c.ny); memcpy(out[run][0], c.y, sizeof(attn_float) * c.ny);
                out[run][1] = t_alloc(c.nx); memcpy(out[run][1], c.dx, sizeof(attn_float) * c.nx);
                out[run][2] = t_alloc(c.np); memcpy(out[run][2], c.dP, sizeof(attn_float) * c.np);
            }
            worst = fmax(worst, max_abs_diff(out[0][0], out[1][0], c.ny));
            worst = fmax(worst, max_abs_diff(out[0][1], out[1][1], c.nx));
            worst = fmax(worst, max_abs_diff(out[0][2], out[1][2], c.np));
            cases++;
            for (run = 0; run < 2; run++) { free(out[run][0]); free(out[run][1]); free(out[run][2]); }
            free(dy); free(c.P); free(c.dP); free(c.x); free(c.m); free(c.y); free(c.dx); free(c.dm); free(c.cache);
            free(c.work);
        }
    CHECK(worst < 1e3 * T_EPS, "self-attention's stacked projections differ from one at a time by %.3g", worst);
    printf("  layer, q k v stacked against one at a time: %d cases, within %.2g\n", cases, worst);
}

/* max_i |a_i - b_i|; a NaN sticks. (Not fmax: with a small constant n, aarch64 gcc 12 -O2 crashes
   vectorising that reduction.) */
static double max_abs_diff(const attn_float *a, const attn_float *b, size_t n)
{
    double m = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        double e = fabs((double)a[i] - b[i]);
        if (e > m || e != e) m = e;
    }
    return m;
}

/* Longformer's global projections: the global rows of y equal a plain layer with (Wqg, Wkg, Wvg) and
   no window, every gradient against finite differences, and bad configurations refused. */
static void test_layer_global(void)
{
    static const unsigned char glob[9] = {1, 0, 0, 0, 1, 0, 0, 0, 0};
    static const int kinds[3] = {ATTN_SOFTMAX, ATTN_EXPRESSIVE, ATTN_HYLA};
    attn_rng r;
    int kk, B = 2, T = 9, C = 5, H = 2, dk = 4, dv = 3, Cout = 4;
    attn_rng_seed(&r, 42, 0);
    for (kk = 0; kk < 3; kk++) {
        layer_ctx c;
        attn_layer plain;
        attn_float *y2, *cache2;
        void *work2;
        size_t w2b;
        double worst = 0;
        int b, t, ok;
        memset(&c, 0, sizeof c);
        c.B = B; c.Tq = c.Tk = T;
        c.L.att.kind = (attn_kind)kinds[kk]; c.L.att.H = H; c.L.att.dk = dk; c.L.att.dv = dv; c.L.att.window = 1; c.L.att.global = glob;
        c.L.C = C; c.L.Cout = Cout;
        layer_params(&c, 1, &r);
        c.nx = (size_t)B * T * C; c.ny = (size_t)B * T * Cout;
        c.x = t_alloc(c.nx); c.y = t_alloc(c.ny); c.dx = t_alloc(c.nx);
        t_randn(c.x, c.nx, &r, 1);
        c.cache = t_alloc(attn_layer_cache_floats(&c.L, B, T, T));
        c.work_bytes = attn_layer_work_bytes(&c.L, B, T, T);
        c.work = malloc(c.work_bytes);
        layer_f(&c);
        /* the reference for the global rows: the global weights, no pattern */
        plain = c.L;
        plain.att.window = 0; plain.att.global = NULL;
        plain.Wq = c.L.Wqg; plain.bq = c.L.bqg; plain.Wk = c.L.Wkg; plain.bk = c.L.bkg; plain.Wv = c.L.Wvg; plain.bv = c.L.bvg;
        plain.Wqg = plain.Wkg = plain.Wvg = NULL;
        y2 = t_alloc(c.ny);
        cache2 = t_alloc(attn_layer_cache_floats(&plain, B, T, T));
        w2b = attn_layer_work_bytes(&plain, B, T, T);
        work2 = malloc(w2b);
        ok = attn_layer_forward(&plain, y2, cache2, attn_layer_cache_floats(&plain, B, T, T), c.x, NULL, B, T, T, work2, w2b) == ATTN_OK;
        for (b = 0; b < B; b++)
            for (t = 0; t < T; t++)
                if (glob[t]) worst = fmax(worst, max_abs_diff(y2 + ((size_t)b * T + t) * Cout, c.y + ((size_t)b * T + t) * Cout, (size_t)Cout));
        CHECK(ok && worst <= 1e3 * T_EPS, "%s global projections: global rows differ from a full layer with the global weights by %.3g",
              attn_kind_get((attn_kind)kinds[kk])->name, worst);
        if (fd_in_float((attn_kind)kinds[kk]) && (T_DOUBLE || kinds[kk] != ATTN_EXPRESSIVE)) { /* as in test_patterns */
            t_var v[2] = {{"x", c.x, c.dx, c.nx}, {"params", c.P, c.dP, c.np}};
            char what[96];
            snprintf(what, sizeof what, "layer %s with global projections", attn_kind_get((attn_kind)kinds[kk])->name);
            t_gradcheck(what, layer_f, layer_b, &c, c.y, c.ny, v, 2);
        }
        c.L.att.causal = 1;
        CHECK(attn_layer_forward(&c.L, c.y, c.cache, attn_layer_cache_floats(&c.L, B, T, T), c.x, NULL, B, T, T, c.work, c.work_bytes) == ATTN_ERR_ARG, "global projections with a causal flag must be refused");
        c.L.att.causal = 0;
        c.L.Wvg = NULL;
        CHECK(attn_layer_forward(&c.L, c.y, c.cache, attn_layer_cache_floats(&c.L, B, T, T), c.x, NULL, B, T, T, c.work, c.work_bytes) == ATTN_ERR_ARG, "global projections need all three weights");
        free(y2); free(cache2); free(work2);
        free(c.P); free(c.dP); free(c.x); free(c.y); free(c.dx); free(c.cache); free(c.work);
    }
}

/* ---- Linformer ---- */
typedef struct {
    att_ctx a;
    int kproj, n_max;
    attn_float *E, *F, *dE, *dF, *cache;
    void *lwork;
    size_t lwork_bytes;
} lin_ctx;

static void lin_f(void *p)
{
    lin_ctx *c = (lin_ctx *)p;
    attn_linformer_forward(&c->a.d, c->kproj, c->n_max, c->E, c->F, c->a.O, c->cache, attn_linformer_cache_floats(&c->a.d, c->kproj), c->a.Q, c->a.K, c->a.V, c->lwork, c->lwork_bytes);
}

static void lin_b(void *p, const attn_float *dO)
{
    lin_ctx *c = (lin_ctx *)p;
    attn_linformer_backward(&c->a.d, c->kproj, c->n_max, c->E, c->F, c->dE, c->dF, c->a.dQ, c->a.dK, c->a.dV, dO, c->a.Q, c->a.K, c->a.V,
                            c->a.O, c->cache, attn_linformer_cache_floats(&c->a.d, c->kproj), c->lwork, c->lwork_bytes);
}

static void test_linformer(void)
{
    attn_rng r;
    int k;
    attn_rng_seed(&r, 39, 0);
    for (k = 0; k <= ATTN_LINEAR_RAW; k++) {
        lin_ctx c;
        attn_attention_desc dc;
        double *Oref, err = 0;
        attn_float *Kc, *Vc;
        size_t i, ne;
        int bh, T = 7, p, j, e;
        char what[96];
        if (k == ATTN_COG && !T_DOUBLE) continue; /* as in test_gradients */
        att_setup(&c.a, (attn_kind)k, 2, 2, 6, T, 3, 4, 0, 0, 0, &r);
        c.kproj = 3; c.n_max = 9;
        ne = (size_t)c.kproj * c.n_max;
        c.E = t_alloc(ne); c.F = t_alloc(ne); c.dE = t_alloc(ne); c.dF = t_alloc(ne);
        t_randn(c.E, ne, &r, 0.5);
        t_randn(c.F, ne, &r, 0.5);
        c.cache = t_alloc(attn_linformer_cache_floats(&c.a.d, c.kproj));
        c.lwork_bytes = attn_linformer_work_bytes(&c.a.d, c.kproj);
        c.lwork = malloc(c.lwork_bytes);
        /* reference: compress by hand, then the naive attention over kproj keys */
        lin_f(&c);
        Kc = t_alloc((size_t)4 * c.kproj * 3); Vc = t_alloc((size_t)4 * c.kproj * 4);
        for (bh = 0; bh < 4; bh++)
            for (p = 0; p < c.kproj; p++) {
                for (e = 0; e < 3; e++) for (Kc[(bh * c.kproj + p) * 3 + e] = 0, j = 0; j < T; j++) Kc[(bh * c.kproj + p) * 3 + e] += c.E[p * c.n_max + j] * c.a.K[(bh * T + j) * 3 + e];
                for (e = 0; e < 4; e++) for (Vc[(bh * c.kproj + p) * 4 + e] = 0, j = 0; j < T; j++) Vc[(bh * c.kproj + p) * 4 + e] += c.F[p * c.n_max + j] * c.a.V[(bh * T + j) * 4 + e];
            }
        dc = c.a.d;
        dc.Tk = c.kproj;
        Oref = (double *)malloc(sizeof(double) * c.a.no);
        naive_attention(&dc, c.a.Q, Kc, Vc, Oref, NULL);
        for (i = 0; i < c.a.no; i++) err = fmax(err, fabs(Oref[i] - c.a.O[i]));
        CHECK(err <= 1e3 * T_EPS, "linformer %s: max error %.3g vs compress-then-naive", attn_kind_get((attn_kind)k)->name, err);
        if (k == ATTN_COG) while (min_abs_score(&dc, c.a.Q, Kc) < 1e-3) { /* redraw until |scores| >= 1e-3 */
            t_randn(c.a.Q, c.a.nq, &r, 1);
        }
        {
            t_var v[5] = {{"Q", c.a.Q, c.a.dQ, c.a.nq}, {"K", c.a.K, c.a.dK, c.a.nk}, {"V", c.a.V, c.a.dV, c.a.nv}, {"E", c.E, c.dE, ne}, {"F", c.F, c.dF, ne}};
            snprintf(what, sizeof what, "linformer %s", attn_kind_get((attn_kind)k)->name);
            t_gradcheck(what, lin_f, lin_b, &c, c.a.O, c.a.no, v, 5);
        }
        c.a.d.causal = 1;
        CHECK(attn_linformer_forward(&c.a.d, c.kproj, c.n_max, c.E, c.F, c.a.O, c.cache, attn_linformer_cache_floats(&c.a.d, c.kproj), c.a.Q, c.a.K, c.a.V, c.lwork, c.lwork_bytes) == ATTN_ERR_ARG,
              "a causal Linformer must be refused");
        free(Oref); free(Kc); free(Vc); free(c.E); free(c.F); free(c.dE); free(c.dF); free(c.cache); free(c.lwork);
        att_free(&c.a);
    }
}
