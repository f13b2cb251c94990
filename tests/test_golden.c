/* PyTorch golden files (tests/golden_attention.py, format described there): for every case listed in
   tests/golden/index.txt, the output and every gradient of one attention call, Linformer call or
   attention layer, against autograd in float64. Every kind of the table must appear in some case. */
#include "test.h"

#define GOLD_MAX 48 /* records per file */

typedef struct {
    char name[17];
    size_t n;
    attn_float *v;
} gold_rec;

typedef struct {
    gold_rec r[GOLD_MAX];
    int n;
    const char *path;
} gold;

static void gold_free(gold *g)
{
    int i;
    for (i = 0; i < g->n; i++) free(g->r[i].v);
    g->n = 0;
}

/* Reads every record; 0 (with a failed check) on a missing, foreign or truncated file. */
static int gold_load(gold *g, const char *path)
{
    char magic[8];
    FILE *f = fopen(path, "rb");
    int ok = f && fread(magic, 1, 8, f) == 8 && !memcmp(magic, "ATTNGLD2", 8);
    g->n = 0;
    g->path = path;
    while (ok && g->n < GOLD_MAX) {
        gold_rec *r = &g->r[g->n];
        int32_t n;
        size_t i;
        if (fread(r->name, 1, 16, f) != 16) break; /* the end of the file */
        r->name[16] = 0;
        ok = fread(&n, sizeof n, 1, f) == 1 && n >= 0;
        r->n = ok ? (size_t)n : 0;
        r->v = t_alloc(r->n);
        g->n++;
        for (i = 0; ok && i < r->n; i++) {
            double x;
            ok = fread(&x, sizeof x, 1, f) == 1;
            r->v[i] = (attn_float)x;
        }
    }
    if (f) fclose(f);
    CHECK(ok && g->n > 0 && !strcmp(g->r[0].name, "cfg"), "%s: missing, truncated or not a golden file", path);
    if (!ok || !g->n) gold_free(g);
    return ok && g->n > 0;
}

/* The record `name` with n values, or NULL if the file has none (a wrong count fails a check). */
static attn_float *gold_get(gold *g, const char *name, size_t n)
{
    int i;
    for (i = 0; i < g->n; i++)
        if (!strcmp(g->r[i].name, name)) {
            CHECK(g->r[i].n == n, "%s: record %s has %lu values, expected %lu", g->path, name, (unsigned long)g->r[i].n, (unsigned long)n);
            return g->r[i].n == n ? g->r[i].v : NULL;
        }
    return NULL;
}

/* A record as bytes (masks, global tokens, layouts) or ints (dilations), or NULL. */
static unsigned char *gold_bytes(gold *g, const char *name, size_t n)
{
    attn_float *v = gold_get(g, name, n);
    unsigned char *b;
    size_t i;
    if (!v) return NULL;
    b = (unsigned char *)malloc(n);
    for (i = 0; i < n; i++) b[i] = v[i] != 0;
    return b;
}

static int *gold_ints(gold *g, const char *name, size_t n)
{
    attn_float *v = gold_get(g, name, n);
    int *p;
    size_t i;
    if (!v) return NULL;
    p = (int *)malloc(sizeof(int) * n);
    for (i = 0; i < n; i++) p[i] = (int)v[i];
    return p;
}

/* worst = max(worst, max_i |got_i - want_i| / (1 + |want_i|)) against the record `name`, which
   must be there. */
static void gold_cmp(gold *g, const char *name, const attn_float *got, size_t n, double *worst)
{
    const attn_float *want = gold_get(g, name, n);
    size_t i;
    CHECK(want != NULL, "%s: no record %s", g->path, name);
    for (i = 0; want && i < n; i++) {
        double e = fabs((double)got[i] - want[i]) / (1 + fabs((double)want[i]));
        if (e > *worst || e != e) *worst = e;
    }
}

/* Tolerance: float64 agrees with autograd to rounding (worst seen 5e-14); float32 carries its own
   rounding through a few dozen operations of O(1) values (worst seen 1.4e-5, HYLA with a window,
   where RMSHead divides by the RMS of few visible scores). A wrong formula misses by far more. */
static double gold_tol(void) { return T_DOUBLE ? 1e-10 : 1e-4; }

/* A zeroed copy-out buffer: the record's values, or zeros if the file has no such record. */
static attn_float *gold_copy(gold *g, const char *name, size_t n)
{
    attn_float *v = gold_get(g, name, n), *p = t_alloc(n);
    if (v) memcpy(p, v, sizeof(attn_float) * n);
    return p;
}

/* cfg: [0, kind, B, H, Tq, Tk, dk, dv, causal, scale, window, block, lambda_init] */
static void golden_attention(gold *g, const attn_float *cfg)
{
    attn_attention_desc d;
    attn_attention_grads gr;
    size_t nq, nk, nv, no, nb, nl, nw, nlay = 0;
    attn_float *Q, *K, *V, *dO, *O, *A, *stats, *bias, *kp[3];
    unsigned char *mask, *glob, *layout;
    int *dil;
    void *work;
    double worst = 0;
    memset(&d, 0, sizeof d);
    d.kind = (attn_kind)cfg[1]; d.B = (int)cfg[2]; d.H = (int)cfg[3]; d.Tq = (int)cfg[4]; d.Tk = (int)cfg[5];
    d.dk = (int)cfg[6]; d.dv = (int)cfg[7]; d.causal = (int)cfg[8]; d.scale = cfg[9]; d.window = (int)cfg[10];
    d.block = (int)cfg[11]; d.lambda_init = cfg[12];
    nq = (size_t)d.B * d.H * d.Tq * d.dk; nk = (size_t)d.B * d.H * d.Tk * d.dk; nv = (size_t)d.B * d.H * d.Tk * d.dv;
    no = (size_t)d.B * d.H * d.Tq * d.dv; nb = (size_t)d.H * d.Tq * d.Tk; nl = (size_t)4 * (d.dk / 2); nw = (size_t)d.H * d.dv * d.dv;
    if (d.block) nlay = (size_t)d.H * ((d.Tq + d.block - 1) / d.block) * ((d.Tk + d.block - 1) / d.block);
    Q = gold_copy(g, "Q", nq); K = gold_copy(g, "K", nk); V = gold_copy(g, "V", nv); dO = gold_copy(g, "dO", no);
    mask = gold_bytes(g, "mask", (size_t)d.B * d.Tk); glob = gold_bytes(g, "global", (size_t)d.Tk);
    layout = nlay ? gold_bytes(g, "layout", nlay) : NULL; dil = gold_ints(g, "dilation", (size_t)d.H);
    d.key_mask = mask; d.global = glob; d.layout = layout; d.dilation = dil;
    d.bias = gold_get(g, "bias", nb);
    d.lambda = gold_get(g, "lambda", nl); d.gain = gold_get(g, "gain", (size_t)d.dv); d.w2 = gold_get(g, "w2", nw);
    O = t_alloc(no); A = t_alloc((size_t)d.B * nb); stats = t_alloc(attn_attention_stats_floats(&d));
    work = malloc(attn_attention_workspace(&d));
    memset(&gr, 0, sizeof gr);
    gr.dQ = t_alloc(nq); gr.dK = t_alloc(nk); gr.dV = t_alloc(nv);
    bias = t_alloc(nb); kp[0] = t_alloc(nl); kp[1] = t_alloc((size_t)d.dv); kp[2] = t_alloc(nw);
    if (d.bias) gr.dbias = bias;
    if (d.lambda) { gr.dlambda = kp[0]; gr.dgain = kp[1]; }
    if (d.w2) gr.dw2 = kp[2];
    /* the weights request takes the materialising path: a separate call, so the tiled one is checked too */
    if (gold_get(g, "A", (size_t)d.B * nb)) {
        CHECK(attn_attention_forward(&d, O, stats, A, Q, K, V, work, attn_attention_workspace(&d)) == ATTN_OK, "%s: forward with weights failed: %s", g->path, attn_last_error());
        gold_cmp(g, "A", A, (size_t)d.B * nb, &worst);
    }
    CHECK(attn_attention_forward(&d, O, stats, NULL, Q, K, V, work, attn_attention_workspace(&d)) == ATTN_OK &&
          attn_attention_backward(&d, &gr, dO, Q, K, V, O, stats, work, attn_attention_workspace(&d)) == ATTN_OK,
          "%s: forward or backward failed: %s", g->path, attn_last_error());
    gold_cmp(g, "O", O, no, &worst);
    gold_cmp(g, "dQ", gr.dQ, nq, &worst);
    gold_cmp(g, "dK", gr.dK, nk, &worst);
    gold_cmp(g, "dV", gr.dV, nv, &worst);
    if (d.bias) gold_cmp(g, "dbias", bias, nb, &worst);
    if (d.lambda) { gold_cmp(g, "dlambda", kp[0], nl, &worst); gold_cmp(g, "dgain", kp[1], (size_t)d.dv, &worst); }
    if (d.w2) gold_cmp(g, "dw2", kp[2], nw, &worst);
    CHECK(worst <= gold_tol(), "%s: output, weights and gradients differ from PyTorch by %.3g (tolerance %.0e)", g->path, worst, gold_tol());
    free(Q); free(K); free(V); free(dO); free(mask); free(glob); free(layout); free(dil); free(O); free(A); free(stats); free(work);
    free(gr.dQ); free(gr.dK); free(gr.dV); free(bias); free(kp[0]); free(kp[1]); free(kp[2]);
}

/* cfg: [1, kind, B, H, T, T, dk, dv, kproj, n_max, scale] */
static void golden_linformer(gold *g, const attn_float *cfg)
{
    attn_attention_desc d;
    int kproj = (int)cfg[8], n_max = (int)cfg[9];
    size_t nq, nv, ne;
    attn_float *Q, *K, *V, *E, *F, *dO, *O, *cache, *dQ, *dK, *dV, *dE, *dF;
    void *work;
    double worst = 0;
    memset(&d, 0, sizeof d);
    d.kind = (attn_kind)cfg[1]; d.B = (int)cfg[2]; d.H = (int)cfg[3]; d.Tq = (int)cfg[4]; d.Tk = (int)cfg[5];
    d.dk = (int)cfg[6]; d.dv = (int)cfg[7]; d.scale = cfg[10];
    nq = (size_t)d.B * d.H * d.Tq * d.dk; nv = (size_t)d.B * d.H * d.Tk * d.dv; ne = (size_t)kproj * n_max;
    Q = gold_copy(g, "Q", nq); K = gold_copy(g, "K", nq); V = gold_copy(g, "V", nv); dO = gold_copy(g, "dO", (size_t)d.B * d.H * d.Tq * d.dv);
    E = gold_copy(g, "E", ne); F = gold_copy(g, "F", ne);
    O = t_alloc((size_t)d.B * d.H * d.Tq * d.dv); cache = t_alloc(attn_linformer_cache_floats(&d, kproj));
    dQ = t_alloc(nq); dK = t_alloc(nq); dV = t_alloc(nv); dE = t_alloc(ne); dF = t_alloc(ne);
    work = malloc(attn_linformer_work_bytes(&d, kproj));
    CHECK(attn_linformer_forward(&d, kproj, n_max, E, F, O, cache, attn_linformer_cache_floats(&d, kproj), Q, K, V, work, attn_linformer_work_bytes(&d, kproj)) == ATTN_OK &&
          attn_linformer_backward(&d, kproj, n_max, E, F, dE, dF, dQ, dK, dV, dO, Q, K, V, O, cache, attn_linformer_cache_floats(&d, kproj), work, attn_linformer_work_bytes(&d, kproj)) == ATTN_OK,
          "%s: Linformer forward or backward failed: %s", g->path, attn_last_error());
    gold_cmp(g, "O", O, (size_t)d.B * d.H * d.Tq * d.dv, &worst);
    gold_cmp(g, "dQ", dQ, nq, &worst);
    gold_cmp(g, "dK", dK, nq, &worst);
    gold_cmp(g, "dV", dV, nv, &worst);
    gold_cmp(g, "dE", dE, ne, &worst);
    gold_cmp(g, "dF", dF, ne, &worst);
    CHECK(worst <= gold_tol(), "%s: output and gradients differ from PyTorch by %.3g (tolerance %.0e)", g->path, worst, gold_tol());
    free(Q); free(K); free(V); free(E); free(F); free(dO); free(O); free(cache); free(dQ); free(dK); free(dV); free(dE); free(dF); free(work);
}

/* cfg: [2, kind, B, Tq, Tk, C, Cout, H, dk, dv, causal, rope, scale, lambda_init, cross] */
static void golden_layer(gold *g, const attn_float *cfg)
{
    static const char *pn[8] = {"Wq", "bq", "Wk", "bk", "Wv", "bv", "Wo", "bo"};
    attn_layer L;
    attn_layer_grads gr;
    int B = (int)cfg[2], Tq = (int)cfg[3], Tk = (int)cfg[4], cross = (int)cfg[14], i;
    size_t sz[8], nx, nm, ny, nb;
    attn_float *P[8], *dP[8], *x, *m, *dy, *y, *dx, *dm, *cache, *dbias, *dlambda, *dgain;
    const attn_float **slot[8];
    attn_float **gslot[8];
    void *work;
    size_t wb;
    double worst = 0;
    memset(&L, 0, sizeof L);
    memset(&gr, 0, sizeof gr);
    L.att.kind = (attn_kind)cfg[1]; L.C = (int)cfg[5]; L.Cout = (int)cfg[6]; L.att.H = (int)cfg[7]; L.att.dk = (int)cfg[8];
    L.att.dv = (int)cfg[9]; L.att.causal = (int)cfg[10]; L.rope = (int)cfg[11]; L.att.scale = cfg[12]; L.att.lambda_init = cfg[13];
    sz[0] = (size_t)L.att.H * L.att.dk * L.C; sz[1] = (size_t)L.att.H * L.att.dk; sz[2] = sz[0]; sz[3] = sz[1];
    sz[4] = (size_t)L.att.H * L.att.dv * L.C; sz[5] = (size_t)L.att.H * L.att.dv; sz[6] = (size_t)L.Cout * L.att.H * L.att.dv; sz[7] = (size_t)L.Cout;
    slot[0] = &L.Wq; slot[1] = &L.bq; slot[2] = &L.Wk; slot[3] = &L.bk; slot[4] = &L.Wv; slot[5] = &L.bv; slot[6] = &L.Wo; slot[7] = &L.bo;
    gslot[0] = &gr.dWq; gslot[1] = &gr.dbq; gslot[2] = &gr.dWk; gslot[3] = &gr.dbk; gslot[4] = &gr.dWv; gslot[5] = &gr.dbv; gslot[6] = &gr.dWo; gslot[7] = &gr.dbo;
    for (i = 0; i < 8; i++) {
        *slot[i] = P[i] = gold_copy(g, pn[i], sz[i]);
        *gslot[i] = dP[i] = t_alloc(sz[i]);
    }
    nx = (size_t)B * Tq * L.C; nm = (size_t)B * Tk * L.C; ny = (size_t)B * Tq * L.Cout; nb = (size_t)L.att.H * Tq * Tk;
    x = gold_copy(g, "x", nx); m = cross ? gold_copy(g, "m", nm) : NULL; dy = gold_copy(g, "dy", ny);
    L.att.bias = gold_get(g, "bias", nb);
    L.att.lambda = gold_get(g, "lambda", (size_t)2 * L.att.dk); L.att.gain = gold_get(g, "gain", (size_t)L.att.dv);
    y = t_alloc(ny); dx = t_alloc(nx); dm = t_alloc(nm); dbias = t_alloc(nb); dlambda = t_alloc((size_t)2 * L.att.dk); dgain = t_alloc((size_t)L.att.dv);
    gr.dbias = dbias; gr.dlambda = dlambda; gr.dgain = dgain;
    cache = t_alloc(attn_layer_cache_floats(&L, B, Tq, Tk));
    wb = attn_layer_work_bytes(&L, B, Tq, Tk);
    work = malloc(wb);
    CHECK(attn_layer_forward(&L, y, cache, attn_layer_cache_floats(&L, B, Tq, Tk), x, m, B, Tq, Tk, work, wb) == ATTN_OK &&
          attn_layer_backward(&L, dx, cross ? dm : NULL, &gr, dy, x, m, cache, attn_layer_cache_floats(&L, B, Tq, Tk), B, Tq, Tk, work, wb) == ATTN_OK,
          "%s: layer forward or backward failed: %s", g->path, attn_last_error());
    gold_cmp(g, "y", y, ny, &worst);
    gold_cmp(g, "dx", dx, nx, &worst);
    if (cross) gold_cmp(g, "dm", dm, nm, &worst);
    for (i = 0; i < 8; i++) {
        char name[8];
        snprintf(name, sizeof name, "d%s", pn[i]);
        gold_cmp(g, name, dP[i], sz[i], &worst);
    }
    gold_cmp(g, "dbias", dbias, nb, &worst);
    if (L.att.lambda) { gold_cmp(g, "dlambda", dlambda, (size_t)2 * L.att.dk, &worst); gold_cmp(g, "dgain", dgain, (size_t)L.att.dv, &worst); }
    CHECK(worst <= gold_tol(), "%s: layer output and gradients differ from PyTorch by %.3g (tolerance %.0e)", g->path, worst, gold_tol());
    for (i = 0; i < 8; i++) { free(P[i]); free(dP[i]); }
    free(x); free(m); free(dy); free(y); free(dx); free(dm); free(dbias); free(dlambda); free(dgain); free(cache); free(work);
}

void test_golden(void)
{
    char line[96], path[160];
    int seen[ATTN_KIND_COUNT] = {0}, k, cases = 0;
    FILE *idx = fopen("tests/golden/index.txt", "r");
    CHECK(idx != NULL, "tests/golden/index.txt is missing (run the tests from the repository root)");
    while (idx && fgets(line, sizeof line, idx)) {
        gold g;
        const attn_float *cfg;
        line[strcspn(line, "\r\n")] = 0;
        snprintf(path, sizeof path, "tests/golden/%s.bin", line);
        if (!gold_load(&g, path)) continue;
        cfg = g.r[0].v;
        if (g.r[0].n >= 2 && cfg[1] >= 0 && cfg[1] < ATTN_KIND_COUNT) seen[(int)cfg[1]]++;
        if (g.r[0].n == 13 && cfg[0] == 0) golden_attention(&g, cfg);
        else if (g.r[0].n == 11 && cfg[0] == 1) golden_linformer(&g, cfg);
        else if (g.r[0].n == 15 && cfg[0] == 2) golden_layer(&g, cfg);
        else CHECK(0, "%s: unknown case type", path);
        cases++;
        gold_free(&g);
    }
    if (idx) fclose(idx);
    for (k = 0; k < ATTN_KIND_COUNT; k++) CHECK(seen[k] > 0, "no golden file covers kind %s", attn_kind_get((attn_kind)k)->name);
    CHECK(cases >= 51, "only %d golden cases found", cases);
}
