/* test_seq2seq.c - the thesis' encoder-decoder: parameter count, forward against a naive double
   reference, backward against finite differences, attention weights, greedy and beam decoding
   (beam search against exhaustive search), checkpoints and bad input. */
#include "test.h"

/* A small configuration: source vocabulary 5 (pad 0), target 6, d 6, 2 heads of dk 4, dv 3,
   mlp 7, one encoder and one decoder layer, sequences up to 6. */
static attn_seq2seq_config s2s_small(void)
{
    attn_seq2seq_config c;
    memset(&c, 0, sizeof c);
    c.src_vocab = 5; c.tgt_vocab = 6; c.pad = 0; c.d = 6; c.heads = 2; c.dk = 4; c.dv = 3; c.mlp = 7;
    c.enc_layers = 1; c.dec_layers = 1; c.max_src = 6; c.max_tgt = 6;
    c.kind = ATTN_SOFTMAX; c.eps = (attn_float)1e-6; c.ln_eps = ATTN_LN_EPS_OUTSIDE; c.init = ATTN_INIT_UNIFORM;
    return c;
}

/* Tensor k of sublayer s (10 tensors per attention sublayer, 11 with a modifier's table, 6 per
   FFN; s = count: Wout, bout). */
static const attn_float *s2s_param(const attn_seq2seq *m, int s, int k)
{
    int i, n = 2, Le2 = 2 * m->cfg.enc_layers;
    for (i = 0; i < s; i++) {
        attn_seq2seq_sublayer_tensors W = attn_seq2seq_sublayer_named(m, i, 0);
        n += (i < Le2 ? i % 2 : (i - Le2) % 3 == 2) ? 6 : 10 + (W.relbias || W.temperature);
    }
    return m->p.value[n + k].data;
}

#define ST 6 /* the reference's longest sequence */
#define SD 8 /* its widest row */

/* out = LN(x) of one row, the configuration's eps form. */
static void s2s_naive_ln(const attn_seq2seq_config *c, const double *x, const attn_float *g, const attn_float *b, double *out)
{
    double mu = 0, var = 0;
    int e;
    for (e = 0; e < c->d; e++) mu += x[e] / c->d;
    for (e = 0; e < c->d; e++) var += (x[e] - mu) * (x[e] - mu) / c->d;
    for (e = 0; e < c->d; e++)
        out[e] = (x[e] - mu) / (c->ln_eps == ATTN_LN_EPS_OUTSIDE ? sqrt(var) + c->eps : sqrt(var + c->eps)) * g[e] + b[e];
}

/* Sublayer s in place on rows x [Tq][d]: x = LN(x + f(x)), f softmax attention over kv [Tk][d]
   (causal, key j visible when vis[j]; the scores changed by mod when it is not NULL, the query at
   key position t + Tk - Tq) or the ReLU FFN. */
static void s2s_naive_sub(const attn_seq2seq *m, int s, double x[ST][SD], int Tq, double kv[ST][SD], int Tk, const int *vis, int causal,
                          int ffn, const attn_score_mod *mod)
{
    const attn_seq2seq_config *c = &m->cfg;
    double q[ST][SD], k[ST][SD], v[ST][SD], o[ST][SD], f[SD], r[SD];
    int t, j, h, e, hk = c->heads * c->dk, hv = c->heads * c->dv, g = ffn ? 4 : 8;
    for (j = 0; !ffn && j < Tk; j++) {
        t_linear(k[j], s2s_param(m, s, 2), s2s_param(m, s, 3), kv[j], hk, c->d);
        t_linear(v[j], s2s_param(m, s, 4), s2s_param(m, s, 5), kv[j], hv, c->d);
    }
    for (t = 0; t < Tq; t++) {
        if (ffn) {
            double u[SD];
            t_linear(u, s2s_param(m, s, 0), s2s_param(m, s, 1), x[t], c->mlp, c->d);
            for (e = 0; e < c->mlp; e++) u[e] = u[e] > 0 ? u[e] : 0;
            t_linear(f, s2s_param(m, s, 2), s2s_param(m, s, 3), u, c->d, c->mlp);
        } else {
            t_linear(q[t], s2s_param(m, s, 0), s2s_param(m, s, 1), x[t], hk, c->d);
            for (h = 0; h < c->heads; h++) {
                double sc[ST], mx = -1e300, z = 0;
                for (j = 0; j < Tk; j++) {
                    sc[j] = -1e300;
                    if (!vis[j] || (causal && j > t) || (mod && mod->mask && !mod->mask(mod->ctx, 0, h, t + Tk - Tq, j)))
                        continue;
                    for (sc[j] = 0, e = 0; e < c->dk; e++) sc[j] += q[t][h * c->dk + e] * k[j][h * c->dk + e] / sqrt((double)c->dk);
                    if (mod && mod->score) {
                        attn_float z1 = (attn_float)sc[j];
                        mod->score(mod->ctx, 0, h, t + Tk - Tq, j, 1, &z1);
                        sc[j] = z1;
                    }
                    mx = fmax(mx, sc[j]);
                }
                for (j = 0; j < Tk; j++) z += (sc[j] = sc[j] > -1e299 ? exp(sc[j] - mx) : 0);
                for (e = 0; e < c->dv; e++)
                    for (o[t][h * c->dv + e] = 0, j = 0; j < Tk; j++) o[t][h * c->dv + e] += sc[j] / z * v[j][h * c->dv + e];
            }
            t_linear(f, s2s_param(m, s, 6), s2s_param(m, s, 7), o[t], c->d, hv);
        }
        for (e = 0; e < c->d; e++) r[e] = x[t][e] + f[e];
        s2s_naive_ln(c, r, s2s_param(m, s, g), s2s_param(m, s, g + 1), f);
        memcpy(o[t], f, sizeof f); /* the new rows wait in o until every query has read x */
    }
    for (t = 0; t < Tq; t++) memcpy(x[t], o[t], sizeof(double) * (size_t)c->d);
}

/* x [T][d] = sqrt(d) E[tok] + PE(t). */
static void s2s_naive_embed(const attn_seq2seq_config *c, const attn_float *E, const int *tok, int T, double x[ST][SD])
{
    int t, e;
    for (t = 0; t < T; t++)
        for (e = 0; e < c->d; e++) {
            double ang = t / pow(10000.0, (double)(e - e % 2) / c->d);
            x[t][e] = sqrt((double)c->d) * E[tok[t] * c->d + e] + (e % 2 ? cos(ang) : sin(ang));
        }
}

/* The score modifier of attention sublayer s with kind k and mask mk (NULL for neither) in *md, its
   table by name. */
static const attn_score_mod *s2s_naive_mod(const attn_seq2seq *m, int s, attn_mod_kind k, attn_mask_kind mk,
                                           attn_mod *md)
{
    attn_seq2seq_sublayer_tensors W = attn_seq2seq_sublayer_named(m, s, 0);
    attn_mod_config mc = m->cfg.mod;
    if (k == ATTN_MOD_NONE && mk == ATTN_MASK_NONE) return NULL;
    mc.kind = k; mc.H = m->cfg.heads; mc.mask = mk;
    CHECK(attn_mod_init(md, &mc, W.relbias ? W.relbias : W.temperature, NULL) == ATTN_OK, "mod init: %s", attn_last_error());
    return &md->fn;
}

/* logits [Tt, tgt_vocab] of one pair by the formulas of the attn_seq2seq comment, in double. */
static void naive_seq2seq(const attn_seq2seq *m, const int *src, int Ts, const int *tgt, int Tt, double *logits)
{
    const attn_seq2seq_config *c = &m->cfg;
    double e[ST][SD], y[ST][SD];
    int vis[ST], all[ST], t, l, Le2 = 2 * c->enc_layers;
    attn_mod md;
    for (t = 0; t < ST; t++) { vis[t] = t < Ts && src[t] != c->pad; all[t] = 1; }
    s2s_naive_embed(c, m->p.value[0].data, src, Ts, e);
    for (l = 0; l < c->enc_layers; l++) {
        s2s_naive_sub(m, 2 * l, e, Ts, e, Ts, vis, 0, 0, s2s_naive_mod(m, 2 * l, c->enc_mods[l], c->enc_masks[l], &md));
        s2s_naive_sub(m, 2 * l + 1, e, Ts, NULL, 0, NULL, 0, 1, NULL);
    }
    s2s_naive_embed(c, m->p.value[1].data, tgt, Tt, y);
    for (l = 0; l < c->dec_layers; l++) {
        s2s_naive_sub(m, Le2 + 3 * l, y, Tt, y, Tt, all, 1, 0, s2s_naive_mod(m, Le2 + 3 * l, c->dec_mods[l], c->dec_masks[l], &md));
        s2s_naive_sub(m, Le2 + 3 * l + 1, y, Tt, e, Ts, vis, 0, 0, s2s_naive_mod(m, Le2 + 3 * l + 1, c->cross_mods[l], ATTN_MASK_NONE, &md));
        s2s_naive_sub(m, Le2 + 3 * l + 2, y, Tt, NULL, 0, NULL, 0, 1, NULL);
    }
    for (t = 0; t < Tt; t++)
        t_linear(logits + t * c->tgt_vocab, s2s_param(m, Le2 + 3 * c->dec_layers, 0), s2s_param(m, Le2 + 3 * c->dec_layers, 1), y[t], c->tgt_vocab, c->d);
}

typedef struct {
    attn_seq2seq m;
    attn_float *logits, *cache;
    int *src, *tgt, B, Ts, Tt;
    void *work;
    size_t wb;
} s2s_ctx;

static void s2s_f(void *p)
{
    s2s_ctx *c = (s2s_ctx *)p;
    attn_status st = attn_seq2seq_forward(&c->m, c->logits, c->cache, attn_seq2seq_cache_floats(&c->m, c->B, c->Ts, c->Tt), c->src, c->tgt, c->B, c->Ts, c->Tt, c->work, c->wb);
    if (st != ATTN_OK) CHECK(0, "seq2seq forward: %s", attn_last_error());
}

static void s2s_b(void *p, const attn_float *dy)
{
    s2s_ctx *c = (s2s_ctx *)p;
    attn_status st = attn_seq2seq_backward(&c->m, dy, c->cache, attn_seq2seq_cache_floats(&c->m, c->B, c->Ts, c->Tt), c->src, c->tgt, c->B, c->Ts, c->Tt, c->work, c->wb);
    if (st != ATTN_OK) CHECK(0, "seq2seq backward: %s", attn_last_error());
}

/* A model of cf with perturbed parameters and B random pairs (sources padded at the end). */
static void s2s_setup(s2s_ctx *c, const attn_seq2seq_config *cf, int B, int Ts, int Tt, attn_rng *r)
{
    int i, b;
    memset(c, 0, sizeof *c);
    CHECK(attn_seq2seq_init(&c->m, cf, r) == ATTN_OK, "seq2seq init: %s", attn_last_error());
    for (i = 0; i < (int)c->m.p.total; i++) c->m.p.data[i] += (attn_float)(0.2 * attn_rng_normal(r, 0, 1));
    c->B = B; c->Ts = Ts; c->Tt = Tt;
    c->src = (int *)malloc(sizeof(int) * (size_t)B * Ts);
    c->tgt = (int *)malloc(sizeof(int) * (size_t)B * Tt);
    for (b = 0; b < B; b++)
        for (i = 0; i < Ts; i++) /* pair b has b padding tokens at its end (when there is padding) */
            c->src[b * Ts + i] = cf->pad >= 0 && i >= Ts - b ? cf->pad : 1 + (int)attn_rng_int(r, (uint32_t)cf->src_vocab - 1);
    for (i = 0; i < B * Tt; i++) c->tgt[i] = (int)attn_rng_int(r, (uint32_t)cf->tgt_vocab);
    c->logits = t_alloc((size_t)B * Tt * cf->tgt_vocab);
    c->cache = t_alloc(attn_seq2seq_cache_floats(&c->m, B, Ts, Tt));
    c->wb = attn_seq2seq_work_bytes(&c->m, B, Ts, Tt);
    c->work = malloc(c->wb);
}

static void s2s_teardown(s2s_ctx *c)
{
    free(c->src); free(c->tgt); free(c->logits); free(c->cache); free(c->work);
    attn_seq2seq_free(&c->m);
}

/* Parameter counts against the closed form; forward against the naive reference, both LN forms,
   with and without padding, 1 or 2 layers each side. */
static void test_seq2seq_forward(void)
{
    attn_rng r;
    int variant;
    attn_rng_seed(&r, 31, 0);
    for (variant = 0; variant < 4; variant++) {
        attn_seq2seq_config cf = s2s_small();
        s2s_ctx c;
        size_t d = 6, att = 2 * 8 * d + 2 * 6 * d + 8 + 8 + 6 + 6 + 2 * d, ffn = 2 * 7 * d + 7 + d + 2 * d, want;
        double worst = 0;
        int b, i;
        cf.enc_layers = 1 + (variant & 1);
        cf.dec_layers = 1 + (variant == 2);
        if (variant & 2) { cf.pad = -1; cf.ln_eps = ATTN_LN_EPS_INSIDE; cf.eps = (attn_float)1e-5; }
        want = (5 + 6) * d + cf.enc_layers * (att + ffn) + cf.dec_layers * (2 * att + ffn) + 6 * d + 6;
        CHECK(attn_seq2seq_param_count(&cf) == want, "seq2seq variant %d: %lu parameters, the closed form says %lu", variant,
              (unsigned long)attn_seq2seq_param_count(&cf), (unsigned long)want);
        s2s_setup(&c, &cf, 3, 5, 4, &r);
        s2s_f(&c);
        for (b = 0; b < c.B; b++) {
            double y[ST * SD];
            naive_seq2seq(&c.m, c.src + b * c.Ts, c.Ts, c.tgt + b * c.Tt, c.Tt, y);
            for (i = 0; i < c.Tt * cf.tgt_vocab; i++) worst = fmax(worst, fabs(y[i] - c.logits[b * c.Tt * cf.tgt_vocab + i]) / (1 + fabs(y[i])));
        }
        CHECK(worst <= 1e3 * T_EPS, "seq2seq variant %d: forward differs from the naive reference by %.3g", variant, worst);
        s2s_teardown(&c);
    }
}

/* Backward against float64 finite differences: every parameter, softmax with padding and dropout
   on (the masks come from m->seed), and expressive attention without padding, 2 layers a side. */
static void test_seq2seq_backward(void)
{
    attn_rng r;
    int variant;
    if (!T_DOUBLE) return; /* as the transformer's: float differences through the layers are too noisy */
    attn_rng_seed(&r, 32, 0);
    for (variant = 0; variant < 2; variant++) {
        attn_seq2seq_config cf = s2s_small();
        s2s_ctx c;
        t_var tv[1];
        char what[96];
        if (variant == 0) cf.dropout = (attn_float)0.25;
        else { cf.kind = ATTN_EXPRESSIVE; cf.pad = -1; cf.enc_layers = cf.dec_layers = 2; cf.ln_eps = ATTN_LN_EPS_INSIDE; }
        s2s_setup(&c, &cf, 2, 5, 4, &r);
        c.m.training = variant == 0; c.m.seed = 5;
        tv[0].name = "params"; tv[0].x = c.m.p.data; tv[0].g = c.m.p.gdata; tv[0].n = c.m.p.total;
        snprintf(what, sizeof what, "seq2seq %s%s", attn_kind_get(cf.kind)->name, variant == 0 ? " (padding, dropout)" : " (2 + 2 layers)");
        t_gradcheck(what, s2s_f, s2s_b, &c, c.logits, (size_t)c.B * c.Tt * cf.tgt_vocab, tv, 1);
        s2s_teardown(&c);
    }
}

/* The weights of every attention sublayer: softmax rows sum to 1, padded keys and (decoder
   self-attention) future keys get 0, and an FFN sublayer is refused. */
static void test_seq2seq_weights(void)
{
    attn_seq2seq_config cf = s2s_small();
    s2s_ctx c;
    attn_rng r;
    attn_float *w = t_alloc((size_t)3 * 2 * 6 * 6);
    int sub, b, h, i, j;
    attn_rng_seed(&r, 33, 0);
    s2s_setup(&c, &cf, 3, 5, 4, &r);
    s2s_f(&c);
    for (sub = 0; sub < 5; sub++) {
        int Tq = sub < 2 ? c.Ts : c.Tt, Tk = sub < 2 || sub == 3 ? c.Ts : c.Tt;
        double worst = 0, leak = 0;
        if (sub == 1 || sub == 4) {
            CHECK(attn_seq2seq_weights(&c.m, w, c.cache, attn_seq2seq_cache_floats(&c.m, c.B, c.Ts, c.Tt), c.B, c.Ts, c.Tt, sub, c.work, c.wb) == ATTN_ERR_ARG, "sublayer %d (an FFN) refused", sub);
            continue;
        }
        CHECK(attn_seq2seq_weights(&c.m, w, c.cache, attn_seq2seq_cache_floats(&c.m, c.B, c.Ts, c.Tt), c.B, c.Ts, c.Tt, sub, c.work, c.wb) == ATTN_OK, "weights of sublayer %d: %s", sub, attn_last_error());
        for (b = 0; b < c.B; b++)
            for (h = 0; h < 2; h++)
                for (i = 0; i < Tq; i++) {
                    double sum = 0;
                    for (j = 0; j < Tk; j++) {
                        attn_float a = w[(((size_t)b * 2 + h) * Tq + i) * Tk + j];
                        int hidden = sub == 2 ? j > i : c.src[b * c.Ts + j] == cf.pad;
                        sum += a;
                        if (hidden) leak = fmax(leak, fabs(a));
                    }
                    worst = fmax(worst, fabs(sum - 1));
                }
        CHECK(worst < 1e-5 && leak == 0, "sublayer %d: rows sum to 1 within %.2g, hidden keys weigh %.2g", sub, worst, leak);
    }
    free(w);
    s2s_teardown(&c);
}

/* log p(y) / lp of one continuation y [n] (n <= 3) of bos, by teacher-forced forward passes. */
static double s2s_seq_score(s2s_ctx *c, const int *src, const int *y, int n, double alpha)
{
    int tgt[4], t, v, V = c->m.cfg.tgt_vocab;
    double lp = 0;
    tgt[0] = 1;
    for (t = 0; t < n - 1; t++) tgt[t + 1] = y[t];
    CHECK(attn_seq2seq_forward(&c->m, c->logits, c->cache, attn_seq2seq_cache_floats(&c->m, 1, c->Ts, n), src, tgt, 1, c->Ts, n, c->work, c->wb) == ATTN_OK, "forward: %s", attn_last_error());
    for (t = 0; t < n; t++) {
        const attn_float *z = c->logits + t * V;
        double mx = z[0], s = 0;
        for (v = 1; v < V; v++) mx = fmax(mx, z[v]);
        for (v = 0; v < V; v++) s += exp(z[v] - mx);
        lp += z[y[t]] - mx - log(s);
    }
    return alpha == 0 ? lp : lp / pow((5.0 + n) / 6.0, alpha);
}

/* Greedy decoding takes the argmax at every step; a beam wide enough to keep every hypothesis
   finds the best sequence of an exhaustive search (target vocabulary 6, bos 1, eos 2, max_len 3),
   with and without the length penalty. */
static void test_seq2seq_decode(void)
{
    attn_seq2seq_config cf = s2s_small();
    s2s_ctx c;
    attn_rng r;
    int out[3 * 3], y[3], b, t, n, code;
    attn_float sc[3];
    double alpha;
    attn_rng_seed(&r, 34, 0);
    cf.max_tgt = 4;
    s2s_setup(&c, &cf, 3, 5, 3, &r);
    CHECK(attn_seq2seq_decode(&c.m, out, sc, c.src, 3, c.Ts, 1, 2, 3, 1, 0) == ATTN_OK, "greedy: %s", attn_last_error());
    for (b = 0; b < 3; b++) {
        int ok = 1, len;
        for (len = 0; len < 3 && out[b * 3 + len] >= 0; len++) {}
        for (t = 0; t < len; t++) { /* the argmax after bos and out[0 .. t-1] is out[t] */
            int tgt[4], v, arg = 0;
            const attn_float *z;
            tgt[0] = 1;
            memcpy(tgt + 1, out + b * 3, sizeof(int) * (size_t)t);
            attn_seq2seq_forward(&c.m, c.logits, c.cache, attn_seq2seq_cache_floats(&c.m, 1, c.Ts, t + 1), c.src + b * c.Ts, tgt, 1, c.Ts, t + 1, c.work, c.wb);
            z = c.logits + t * cf.tgt_vocab;
            for (v = 1; v < cf.tgt_vocab; v++) arg = z[v] > z[arg] ? v : arg;
            ok &= arg == out[b * 3 + t] && (out[b * 3 + t] != 2 || t == len - 1); /* eos ends it */
        }
        ok &= len == 3 || out[b * 3 + len - 1] == 2;
        CHECK(ok && fabs(sc[b] - s2s_seq_score(&c, c.src + b * c.Ts, out + b * 3, len, 0)) < 1e-4, "greedy decoding of pair %d", b);
    }
    for (alpha = 0; alpha < 1; alpha += 0.6)
        for (b = 0; b < 3; b++) {
            double best = -1e300;
            int arg[3], alen = 0;
            for (n = 1; n <= 3; n++) /* every y of length n: eos only at its end, or length 3 without */
                for (code = 0; code < 216; code++) {
                    int k, x = code, okseq = 1;
                    double s;
                    if (code >= (n == 1 ? 6 : n == 2 ? 36 : 216)) break;
                    for (k = 0; k < n; k++) { y[k] = x % 6; x /= 6; okseq &= y[k] != 2 || k == n - 1; }
                    okseq &= n == 3 || y[n - 1] == 2;
                    if (!okseq) continue;
                    s = s2s_seq_score(&c, c.src + b * c.Ts, y, n, alpha);
                    if (s > best + 0) { best = s; alen = n; memcpy(arg, y, sizeof arg); }
                }
            CHECK(attn_seq2seq_decode(&c.m, out, sc, c.src + b * c.Ts, 1, c.Ts, 1, 2, 3, 64, (attn_float)alpha) == ATTN_OK, "beam: %s", attn_last_error());
            CHECK(fabs(sc[0] - best) < 1e-4 && !memcmp(out, arg, sizeof(int) * (size_t)alen) && (alen == 3 || out[alen] == -1),
                  "beam 64, alpha %.1f, pair %d: score %.6f, exhaustive search %.6f", alpha, b, (double)sc[0], best);
            /* wider than 64: the decoder reruns over each prefix (no key-value cache), 80 hypotheses */
            CHECK(attn_seq2seq_decode(&c.m, out, sc, c.src + b * c.Ts, 1, c.Ts, 1, 2, 3, 80, (attn_float)alpha) == ATTN_OK &&
                      fabs(sc[0] - best) < 1e-4 && !memcmp(out, arg, sizeof(int) * (size_t)alen),
                  "beam 80, alpha %.1f, pair %d: score %.6f, exhaustive search %.6f", alpha, b, (double)sc[0], best);
        }
    {   /* the same search in the caller's work: the same tokens and scores; one byte short refused */
        int out2[3 * 3];
        attn_float sc2[3];
        size_t wb = attn_seq2seq_decode_work_bytes(&c.m, c.Ts, 3, 4);
        void *w = malloc(wb);
        CHECK(attn_seq2seq_decode(&c.m, out, sc, c.src, 3, c.Ts, 1, 2, 3, 4, (attn_float)0.6) == ATTN_OK &&
                  attn_seq2seq_decode_in(&c.m, out2, sc2, c.src, 3, c.Ts, 1, 2, 3, 4, (attn_float)0.6, w, wb) == ATTN_OK &&
                  !memcmp(out, out2, sizeof out) && !memcmp(sc, sc2, sizeof sc),
              "beam 4 in the caller's work (%lu bytes) equals the allocating call: %s", (unsigned long)wb, attn_last_error());
        CHECK(attn_seq2seq_decode_in(&c.m, out2, sc2, c.src, 3, c.Ts, 1, 2, 3, 4, 0, w, wb - 1) == ATTN_ERR_ARG,
              "work one byte short refused");
        free(w);
    }
    s2s_teardown(&c);
}

/* Whether each token of out [len] is the argmax of its row of logits [len, V] (row t: the full pass
   after bos and out[0 .. t-1]); their log-likelihood in *lp. */
static int s2s_greedy_ok(const attn_float *logits, int V, const int *out, int len, double *lp)
{
    int t, ok = 1;
    for (*lp = 0, t = 0; t < len; t++) {
        const attn_float *z = logits + (size_t)t * V;
        int v, arg = 0;
        double mx = z[0], se = 0;
        for (v = 1; v < V; v++) arg = z[v] > z[arg] ? v : arg, mx = z[v] > mx ? z[v] : mx;
        for (v = 0; v < V; v++) se += exp(z[v] - mx);
        *lp += z[out[t]] - mx - log(se);
        ok &= arg == out[t];
    }
    return ok;
}

/* Greedy decoding (keys and values cached per step) against teacher-forced full passes, for kinds
   of each engine (scored, head-mixing, linear-time) in two decoder layers with a padded source:
   every emitted token is the argmax of the full pass over the prefix, and the score its
   log-likelihood. */
static void test_seq2seq_decode_cached(void)
{
    static const attn_kind kinds[4] = {ATTN_COG, ATTN_HYLA, ATTN_KERNEL, ATTN_CENTERED};
    int k;
    for (k = 0; k < 4; k++) {
        attn_seq2seq_config cf = attn_seq2seq_config_default();
        attn_seq2seq m;
        attn_rng r;
        int src[7] = {5, 9, 4, 11, 3, 0, 0}, out[8], tgt[9], len, ok;
        attn_float sc, *cache, *logits;
        double lp;
        void *work;
        size_t wb;
        cf.d = 24; cf.heads = 2; cf.dk = cf.dv = 8; cf.mlp = 32; cf.enc_layers = 1; cf.dec_layers = 2; cf.max_src = 7;
        cf.max_tgt = 8; cf.kind = kinds[k];
        attn_rng_seed(&r, 70, (uint64_t)k);
        if (attn_seq2seq_init(&m, &cf, &r) != ATTN_OK) { CHECK(0, "init: %s", attn_last_error()); continue; }
        m.p.value[m.p.count - 1].data[ATTN_DIGITS_EOS] -= 2; /* longer outputs */
        cache = t_alloc(attn_seq2seq_cache_floats(&m, 1, 7, 8));
        logits = t_alloc((size_t)8 * cf.tgt_vocab);
        work = malloc(wb = attn_seq2seq_work_bytes(&m, 1, 7, 8));
        CHECK(attn_seq2seq_decode(&m, out, &sc, src, 1, 7, ATTN_DIGITS_BOS, ATTN_DIGITS_EOS, 8, 1, 0) == ATTN_OK, "decode: %s",
              attn_last_error());
        for (len = 0; len < 8 && out[len] >= 0; len++) {}
        tgt[0] = ATTN_DIGITS_BOS;
        memcpy(tgt + 1, out, sizeof(int) * (size_t)len);
        attn_seq2seq_forward(&m, logits, cache, attn_seq2seq_cache_floats(&m, 1, 7, len), src, tgt, 1, 7, len, work, wb); /* row t: after bos, out[0 .. t-1] */
        ok = s2s_greedy_ok(logits, cf.tgt_vocab, out, len, &lp);
        CHECK(ok && len >= 4 && fabs(lp - sc) < 1e-4 * (1 + fabs(lp)),
              "cached greedy decoding, %s: %d tokens, argmax %d, score %.6f against %.6f", attn_kind_get(cf.kind)->name, len, ok,
              (double)sc, lp);
        free(cache); free(logits); free(work);
        attn_seq2seq_free(&m);
    }
}

/* Checkpoints round-trip; bad configurations and arguments are refused. */
static void test_seq2seq_checkpoint_and_errors(void)
{
    attn_seq2seq_config cf = s2s_small();
    attn_seq2seq back;
    s2s_ctx c;
    attn_rng r;
    const char *path = "build/test_seq2seq.ckpt";
    int out[4], bad[5] = {1, 2, 9, 1, 1};
    attn_rng_seed(&r, 35, 0);
    s2s_setup(&c, &cf, 1, 5, 4, &r);
    CHECK(attn_seq2seq_save(&c.m, path) == ATTN_OK, "save: %s", attn_last_error());
    CHECK(attn_seq2seq_load(&back, path) == ATTN_OK, "load: %s", attn_last_error());
    CHECK(back.p.total == c.m.p.total && t_params_equal(&back.p, &c.m.p) &&
              !memcmp(&back.cfg, &c.m.cfg, sizeof cf), "a checkpoint restores the configuration and every parameter");
    attn_seq2seq_free(&back);
    remove(path);
    cf.kind = ATTN_DIFFERENTIAL;
    CHECK(attn_seq2seq_param_count(&cf) == 0, "differential attention (its own parameters) refused");
    cf = s2s_small(); cf.pad = 5;
    CHECK(attn_seq2seq_param_count(&cf) == 0, "a pad id outside the source vocabulary refused");
    cf = s2s_small(); cf.dropout = 1;
    CHECK(attn_seq2seq_param_count(&cf) == 0, "dropout 1 refused");
    CHECK(attn_seq2seq_decode(&c.m, out, NULL, c.src, 1, c.Ts, 1, 2, 4, 0, 0) == ATTN_ERR_ARG, "a beam width of 0 refused");
    CHECK(attn_seq2seq_decode(&c.m, out, NULL, c.src, 1, c.Ts, 1, 2, 7, 1, 0) == ATTN_ERR_SHAPE, "max_len beyond max_tgt refused");
    CHECK(attn_seq2seq_decode(&c.m, out, NULL, bad, 1, 5, 1, 2, 4, 1, 0) == ATTN_ERR_ARG, "a source token outside the vocabulary refused");
    CHECK(attn_seq2seq_forward(&c.m, c.logits, c.cache, attn_seq2seq_cache_floats(&c.m, 1, 5, 4), bad, c.tgt, 1, 5, 4, c.work, c.wb) == ATTN_ERR_ARG, "forward refuses it too");
    CHECK(attn_seq2seq_forward(&c.m, c.logits, c.cache, attn_seq2seq_cache_floats(&c.m, 1, 7, 4), c.src, c.tgt, 1, 7, 4, c.work, c.wb) == ATTN_ERR_SHAPE, "Ts beyond max_src refused");
    CHECK(attn_seq2seq_forward(&c.m, c.logits, c.cache, attn_seq2seq_cache_floats(&c.m, 1, 5, 4), c.src, c.tgt, 1, 5, 4, c.work, c.wb - 1) == ATTN_ERR_ARG, "too little work refused");
    s2s_teardown(&c);
}

/* Score modifiers per sublayer: ALiBi, relative bias, soft cap and temperature in the encoder's
   and decoder's self-attention, soft cap and temperature in the cross-attention: the parameter
   count, forward against the naive reference, backward against finite differences (their tables
   included), cached greedy decoding against full passes, checkpoints bit for bit; position
   modifiers in the cross-attention and bad settings refused. */
static void test_seq2seq_modifiers(void)
{
    attn_seq2seq_config cf = s2s_small(), plain;
    attn_seq2seq back;
    s2s_ctx c;
    attn_rng r;
    const char *path = "build/test_seq2seq_mods.ckpt";
    double worst = 0;
    int b, i, len, out[6], tgt[7], ok;
    attn_float sc;
    double lp;
    cf.enc_layers = 1; cf.dec_layers = 2;
    cf.enc_mods[0] = ATTN_MOD_RELBIAS; cf.dec_mods[0] = ATTN_MOD_ALIBI; cf.dec_mods[1] = ATTN_MOD_TEMPERATURE;
    cf.cross_mods[0] = ATTN_MOD_SOFTCAP; cf.cross_mods[1] = ATTN_MOD_TEMPERATURE;
    cf.mod.buckets = 8; cf.mod.max_distance = 16; cf.mod.bidirectional = 1; cf.mod.cap = (attn_float)1.5;
    cf.enc_masks[0] = ATTN_MASK_PREFIX; cf.dec_masks[1] = ATTN_MASK_WINDOW; cf.mod.span = 2;
    plain = cf;
    memset(plain.enc_mods, 0, sizeof plain.enc_mods); memset(plain.dec_mods, 0, sizeof plain.dec_mods);
    memset(plain.cross_mods, 0, sizeof plain.cross_mods);
    CHECK(attn_seq2seq_param_count(&cf) == attn_seq2seq_param_count(&plain) + 2 * 8 + 2 + 2,
          "seq2seq with modifiers: %lu parameters, without %lu (+ a [2, 8] table and two temperatures)",
          (unsigned long)attn_seq2seq_param_count(&cf), (unsigned long)attn_seq2seq_param_count(&plain));
    attn_rng_seed(&r, 36, 0);
    s2s_setup(&c, &cf, 3, 5, 4, &r); /* every parameter perturbed: the tables and temperatures too */
    s2s_f(&c);
    for (b = 0; b < c.B; b++) {
        double y[ST * SD];
        naive_seq2seq(&c.m, c.src + b * c.Ts, c.Ts, c.tgt + b * c.Tt, c.Tt, y);
        for (i = 0; i < c.Tt * cf.tgt_vocab; i++)
            worst = fmax(worst, fabs(y[i] - c.logits[b * c.Tt * cf.tgt_vocab + i]) / (1 + fabs(y[i])));
    }
    CHECK(worst <= 1e3 * T_EPS, "seq2seq with modifiers and masks: forward differs from the naive reference by %.3g",
          worst);
    if (T_DOUBLE) {
        t_var tv[1];
        tv[0].name = "params"; tv[0].x = c.m.p.data; tv[0].g = c.m.p.gdata; tv[0].n = c.m.p.total;
        t_gradcheck("seq2seq with modifiers (relbias, alibi, softcap, temperature) and masks", s2s_f, s2s_b, &c, c.logits,
                    (size_t)c.B * c.Tt * cf.tgt_vocab, tv, 1);
    }
    c.m.p.value[c.m.p.count - 1].data[2] -= 4; /* eos (2) later: longer outputs */
    CHECK(attn_seq2seq_decode(&c.m, out, &sc, c.src, 1, c.Ts, 1, 2, 5, 1, 0) == ATTN_OK, "decode: %s", attn_last_error());
    for (len = 0; len < 5 && out[len] >= 0; len++) {}
    tgt[0] = 1;
    memcpy(tgt + 1, out, sizeof(int) * (size_t)len);
    if (len > 0) attn_seq2seq_forward(&c.m, c.logits, c.cache, attn_seq2seq_cache_floats(&c.m, 1, c.Ts, len), c.src, tgt, 1, c.Ts, len, c.work, c.wb);
    ok = s2s_greedy_ok(c.logits, cf.tgt_vocab, out, len, &lp);
    CHECK(ok && len >= 4 && fabs(lp - sc) < 1e-4 * (1 + fabs(lp)),
          "cached greedy decoding with modifiers: %d tokens, argmax %d, score %.6f against %.6f", len, ok, (double)sc, lp);
    CHECK(attn_seq2seq_save(&c.m, path) == ATTN_OK && attn_seq2seq_load(&back, path) == ATTN_OK, "save and load: %s",
          attn_last_error());
    CHECK(back.p.total == c.m.p.total && t_params_equal(&back.p, &c.m.p) && !memcmp(&back.cfg, &c.m.cfg, sizeof cf),
          "a checkpoint with modifiers restores the configuration and every parameter");
    attn_seq2seq_free(&back);
    remove(path);
    s2s_teardown(&c);
    cf.cross_mods[1] = ATTN_MOD_ALIBI;
    CHECK(attn_seq2seq_param_count(&cf) == 0 && strstr(attn_last_error(), "cross-attention"), "ALiBi in the cross-attention refused");
    cf.cross_mods[1] = ATTN_MOD_RELBIAS;
    CHECK(attn_seq2seq_param_count(&cf) == 0, "a relative bias in the cross-attention refused");
    cf.cross_mods[1] = (attn_mod_kind)99;
    CHECK(attn_seq2seq_param_count(&cf) == 0, "an unknown modifier refused");
    cf.cross_mods[1] = ATTN_MOD_NONE; cf.mod.buckets = 1;
    CHECK(attn_seq2seq_param_count(&cf) == 0, "a relative bias of 1 bucket refused");
    cf.mod.buckets = 8; cf.dec_masks[0] = ATTN_MASK_PREFIX;
    CHECK(attn_seq2seq_param_count(&cf) == 0 && strstr(attn_last_error(), "causal"), "a prefix mask in the decoder "
          "refused: %s", attn_last_error());
    cf.dec_masks[0] = ATTN_MASK_COUNT;
    CHECK(attn_seq2seq_param_count(&cf) == 0 && strstr(attn_last_error(), "provided mask"), "an unknown mask refused");
}

void test_seq2seq(void)
{
    test_seq2seq_forward();
    test_seq2seq_backward();
    test_seq2seq_weights();
    test_seq2seq_decode();
    test_seq2seq_decode_cached();
    test_seq2seq_checkpoint_and_errors();
    test_seq2seq_modifiers();
}
