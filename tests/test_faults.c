/* Faults found by fuzzing the checkpoint loaders and probing the public calls: each check here
   failed before its fix. Bad configurations and files are refused before anything is allocated or
   written; failures change nothing; a NaN or infinity reaches exactly the rows that read it, bit for
   bit (IEEE builds); norms survive values whose squares overflow. */
#include "test.h"
#include "sq_row.h"
#include <limits.h>

/* A small token transformer's configuration. */
static attn_transformer_config small_tf(void)
{
    attn_transformer_config c;
    memset(&c, 0, sizeof c);
    c.vocab = 7; c.d = 8; c.layers = 2; c.heads = 2; c.dk = c.dv = 4; c.mlp = 16; c.max_T = 6; c.out = 7;
    c.causal = 1; c.eps = (attn_float)1e-5; c.act = ATTN_ACT_GELU_TANH; c.bias = 1; c.pos = ATTN_POS_LEARNED;
    return c;
}

/* Writes a transformer checkpoint whose configuration words are w (kind 0 is softmax), and one
   tensor of count floats. */
static int write_tf_ckpt(const char *path, const int32_t *w, int nw, size_t count)
{
    attn_param_desc desc[1] = {{"x", 1, {0}, 0, ATTN_PARAM_ZERO, 0}};
    const char *names[1] = {"softmax"};
    attn_params p;
    attn_status s;
    desc[0].shape[0] = (int)count;
    if (attn_params_init(&p, desc, 1) != ATTN_OK) return 0;
    s = attn_checkpoint_save(path, "transformer", w, nw, names, 1, &p);
    attn_params_free(&p);
    return s == ATTN_OK;
}

static void test_config_words(void)
{
    attn_transformer_config c = small_tf();
    attn_transformer m, keep;
    attn_rng r;
    size_t base = attn_transformer_param_count(&c), n;
    int flags[3] = {2, 17, -1}, i;
    {   /* the defaults are valid models as they are */
        attn_cisformer_config cd = attn_cisformer_config_default();
        attn_transformer_config td = attn_transformer_config_default();
        attn_seq2seq_config sd = attn_seq2seq_config_default();
        CHECK(attn_cisformer_param_count(&cd) == 32 * (12 * 256 + 16) + 16, "the cisformer's default: %s", attn_last_error());
        CHECK(attn_transformer_param_count(&td) > 0, "the transformer's default: %s", attn_last_error());
        CHECK(attn_seq2seq_param_count(&sd) > 0, "the encoder-decoder's default: %s", attn_last_error());
    }
    /* a "nonzero" flag is a flag, whatever its value: never an array dimension */
    for (i = 0; i < 3; i++) {
        c.bias = flags[i];
        n = attn_transformer_param_count(&c);
        CHECK(n == base, "bias = %d: %lu parameters, with bias = 1: %lu", flags[i], (unsigned long)n, (unsigned long)base);
        c.bias = 1; c.t5 = flags[i]; c.glu = flags[i];
        attn_rng_seed(&r, 1, 1);
        CHECK(attn_transformer_init(&m, &c, &r) == ATTN_OK && m.p.count > 0, "t5 = glu = %d: %s", flags[i], attn_last_error());
        attn_transformer_free(&m);
        c.t5 = c.glu = 0;
    }
    /* heads * dk overflows int: refused, not a small wrong count */
    c = small_tf();
    c.heads = c.dk = 65536;
    attn_clear_error();
    CHECK(attn_transformer_param_count(&c) == 0 && attn_last_status() == ATTN_ERR_OVERFLOW, "heads = dk = 65536: %s", attn_last_error());
    /* a failing init writes nothing */
    memset(&m, 0xAB, sizeof m);
    memcpy(&keep, &m, sizeof m);
    attn_rng_seed(&r, 1, 1);
    CHECK(attn_transformer_init(&m, &c, &r) != ATTN_OK && memcmp(&m, &keep, sizeof m) == 0, "failed init left the model as it was");
    c = small_tf();
    c.eps = (attn_float)INFINITY;
    CHECK(attn_transformer_param_count(&c) == 0, "eps = inf refused");
    {   /* the encoder-decoder: the same overflow */
        attn_seq2seq_config s;
        memset(&s, 0, sizeof s);
        s.src_vocab = s.tgt_vocab = 5; s.pad = -1; s.d = 8; s.heads = 65536; s.dk = s.dv = 65536; s.mlp = 8;
        s.enc_layers = s.dec_layers = 1; s.max_src = s.max_tgt = 4; s.eps = (attn_float)1e-6;
        CHECK(attn_seq2seq_param_count(&s) == 0 && attn_last_status() == ATTN_ERR_OVERFLOW, "seq2seq heads x dk overflow: %s",
              attn_last_error());
    }
}

static void test_loaders(void)
{
    const char *path = "build/test_faults.ckpt";
    attn_transformer_config c = small_tf();
    attn_transformer m, keep;
    attn_cisformer cm, ckeep;
    attn_rng r;
    int32_t w[30 + 2];
    attn_status s;
    int l;
    attn_rng_seed(&r, 3, 3);
    CHECK(attn_transformer_init(&m, &c, &r) == ATTN_OK, "init");
    CHECK(attn_transformer_save(&m, path) == ATTN_OK, "save: %s", attn_last_error());
    attn_transformer_free(&m);
    {   /* the words of a valid file, then a configuration that would need 2^36 floats, count 10 */
        void *buf;
        size_t bytes;
        attn_checkpoint_header h;
        CHECK(attn_checkpoint_load_file(path, &buf, &bytes, &h) == ATTN_OK && h.nconfig == 32 + 17 + 2 + 2, "read back");
        for (l = 0; l < 32; l++) w[l] = h.config[l]; /* without the tail (17 words, the 2 layers' modifiers and
                                                        the name's fingerprint): an older format-2 record */
        free(buf);
    }
    w[0] = 1 << 20; w[1] = 1 << 16; /* vocab x d = 2^36 */
    CHECK(write_tf_ckpt(path, w, 32, 16), "write the crafted file");
    memset(&m, 0x5A, sizeof m);
    memcpy(&keep, &m, sizeof m);
    attn_clear_error();
    s = attn_transformer_load(&m, path);
    /* with a 64-bit size_t the count decides; with a 32-bit one (wasm32) the size does, as early */
    CHECK(s == ATTN_ERR_FORMAT && strstr(attn_last_error(), sizeof(size_t) >= 8 ? "holds 16" : "overflows size_t"),
          "a 2^36-float configuration with 16 floats stored: "
          "refused before allocating (status %d, \"%s\")", (int)s, attn_last_error());
    CHECK(memcmp(&m, &keep, sizeof m) == 0, "a refused load leaves the model as it was");
    /* bias = -1 and 17 in a file: loads like bias = 1, or is refused on the count, never crashes */
    w[0] = 7; w[1] = 8; w[14] = 17;
    CHECK(write_tf_ckpt(path, w, 32, 5), "write");
    CHECK(attn_transformer_load(&m, path) == ATTN_ERR_FORMAT, "bias 17 with the wrong count: refused");
    w[14] = -1;
    CHECK(write_tf_ckpt(path, w, 32, attn_transformer_param_count(&c) + 64), "write");
    CHECK(attn_transformer_load(&m, path) == ATTN_ERR_FORMAT, "bias -1: refused on the count");
    /* a layer count that would overflow the word count */
    w[2] = INT_MAX;
    CHECK(write_tf_ckpt(path, w, 32, 5), "write");
    CHECK(attn_transformer_load(&m, path) == ATTN_ERR_FORMAT && memcmp(&m, &keep, sizeof m) == 0, "layers = INT_MAX refused: %s",
          attn_last_error());
    {   /* the cisformer: a count mismatch leaves the model alone */
        attn_cisformer_config cc;
        memset(&cc, 0, sizeof cc);
        cc.d = 3; cc.ncon = 4; cc.kind = ATTN_SOFTMAX; cc.scale = 1;
        CHECK(attn_cisformer_init(&cm, &cc, &r) == ATTN_OK, "cisformer init");
        memcpy(&ckeep, &cm, sizeof cm);
        CHECK(attn_checkpoint_save(path, "cisformer", (const int32_t[8]){4, 4, 0, 0, 0, 0, 0x3ff00000, 0}, 8,
                                   (const char *const[1]){"softmax"}, 1, &cm.p) == ATTN_OK,
              "write a cisformer record with d = 4 and d = 3's block");
        CHECK(attn_cisformer_load(&cm, path) == ATTN_ERR_FORMAT && memcmp(&cm, &ckeep, sizeof cm) == 0, "cisformer: refused, model kept");
        attn_cisformer_free(&cm);
    }
    {   /* a directory is an I/O error, not a request for 2^63 bytes */
        void *buf = NULL;
        size_t bytes = 0;
        attn_checkpoint_header h;
        s = attn_checkpoint_load_file("tests", &buf, &bytes, &h);
        CHECK(s == ATTN_ERR_IO && (strstr(attn_last_error(), "cannot read") || strstr(attn_last_error(), "cannot open")),
              "a directory: status %d, \"%s\"", (int)s, attn_last_error()); /* Windows refuses to open it */
#ifdef __linux__
        /* a stream without end is read only as far as a header could reach */
        s = attn_checkpoint_load_file("/dev/zero", &buf, &bytes, &h);
        CHECK(s == ATTN_ERR_FORMAT, "/dev/zero: status %d, \"%s\"", (int)s, attn_last_error());
#endif
    }
    remove(path);
}

static void test_statuses(void)
{
    attn_param_desc desc[1] = {{"W", 2, {2, 3}, -1, ATTN_PARAM_ZERO, 0}};
    attn_params p;
    attn_float m[64] = {0}, v[64] = {0}, keep[8];
    attn_schedule sch, skeep;
    int prev[3] = {1, 2, 3}, y[4] = {0, 2, 1, 0}, i;
    double w[3], mu[2], sd[2], mn[3] = {7, 7, 7}, me[3] = {7, 7, 7};
    attn_float X[8] = {1, 2, 3, 4, 5, 6, 7, 8}, A[4] = {1, 0, 0, 1};
    attn_rng r;
    CHECK(attn_params_init(&p, desc, 1) == ATTN_OK, "params");
    for (i = 0; i < 6; i++) p.data[i] = (attn_float)i, p.gdata[i] = 1;
    memcpy(keep, p.data, sizeof(attn_float) * 6);
    CHECK(attn_adamw_step(&p, m, v, 0, (attn_float)1e-3, 0.9f, 0.999f, 1e-8f, 0) == ATTN_ERR_ARG, "AdamW at t = 0 refused");
    CHECK(attn_adamw_step(&p, m, v, 1, (attn_float)NAN, 0.9f, 0.999f, 1e-8f, 0) == ATTN_ERR_ARG, "AdamW with a NaN rate refused");
    CHECK(attn_sgd_step(&p, m, (attn_float)INFINITY, 0.9f, 0) == ATTN_ERR_ARG, "SGD with an infinite rate refused");
    CHECK(memcmp(keep, p.data, sizeof(attn_float) * 6) == 0, "refused steps leave the parameters alone");
    CHECK(attn_adamw_step(&p, m, v, 1, (attn_float)1e-3, 0.9f, 0.999f, 1e-8f, 0) == ATTN_OK && p.data[0] != keep[0], "a valid step steps");
    CHECK(attn_clip_grad_norm(&p, NAN) == -1 && attn_last_status() == ATTN_ERR_ARG, "clip with max_norm NaN refused");
    attn_params_free(&p);
    /* schedules: a failure leaves the schedule as it was */
    CHECK(attn_schedule_warmup_cosine(&sch, 0, 1e-3, 10, 100, 0) == ATTN_OK, "schedule");
    memcpy(&skeep, &sch, sizeof sch);
    CHECK(attn_schedule_step(&sch, 1, 0, 0.5, 1) == ATTN_ERR_ARG && memcmp(&sch, &skeep, sizeof sch) == 0, "failed step schedule kept");
    CHECK(attn_schedule_warmup_cosine(&sch, -1, 1, 1, 10, 0) == ATTN_ERR_ARG && memcmp(&sch, &skeep, sizeof sch) == 0,
          "failed warmup-cosine kept");
    /* the NT rule: N = 0 is an error, not SIGFPE */
    CHECK(attn_nt_next(ATTN_NT, 0, 2, prev) == -1 && attn_last_status() == ATTN_ERR_ARG, "nt_next with N = 0");
    CHECK(attn_nt_next(ATTN_NT_MIX, 5, 2, prev) == -1, "nt_next with the mixture");
    CHECK(attn_nt_next(ATTN_NT, 5, 2, prev) == 3, "nt_next still works");
    /* labels outside {0, 1} */
    CHECK(attn_probe_fit(w, mu, sd, X, y, 4, 2, 10, 0.1, 0, 0) == ATTN_ERR_ARG, "probe with label 2 refused");
    /* sigma distances with n = 0: its own message, nothing written */
    attn_rng_seed(&r, 1, 1);
    attn_clear_error();
    CHECK(attn_sigma_distances(mn, me, A, 0, 1, 1, 4, 0.2, 0.05, 0.05, &r) == ATTN_ERR_ARG && mn[0] == 7 && me[2] == 7 &&
              strstr(attn_last_error(), "attn_sigma_distances"), "sigma distances n = 0: \"%s\"", attn_last_error());
    CHECK(attn_sigma_distances(mn, me, A, 2, 0, 0, 4, 0.2, 0.05, 0.05, &r) == ATTN_ERR_ARG && mn[0] == 7,
          "sigma distances with family 3's w = 0: refused before writing");
}

/* NaN in, NaN out: the vector exp and tanh (and what is built on them) as libm. */
static void test_nan(void)
{
    attn_float x[40], y[40];
    int i, a, ok = 1;
#ifdef __FAST_MATH__
    printf("  skip: NaN semantics under -ffast-math\n");
    return;
#endif
    for (i = 0; i < 40; i++) x[i] = (attn_float)(i - 20) / 4;
    x[3] = x[17] = x[39] = (attn_float)NAN;
    attn_exp(40, x, y);
    for (i = 0; i < 40; i++) ok &= t_isnan(y[i]) == t_isnan(x[i]);
    CHECK(ok, "attn_exp: NaN exactly where the input is NaN");
    attn_tanh(40, x, y);
    for (ok = 1, i = 0; i < 40; i++) ok &= t_isnan(y[i]) == t_isnan(x[i]);
    CHECK(ok, "attn_tanh: NaN exactly where the input is NaN");
    for (a = 0; a < ATTN_ACT_COUNT; a++) { /* ReLU(NaN) was 0 */
        attn_act_forward(y, x, 40, (attn_act)a);
        for (ok = 1, i = 0; i < 40; i++) ok &= t_isnan(y[i]) == t_isnan(x[i]);
        CHECK(ok, "attn_act_forward(%s): NaN exactly where the input is NaN", attn_act_name((attn_act)a));
    }
}

/* Layer and RMS norm of rows whose squares overflow float, and of tiny rows. */
static void test_norm_range(void)
{
    attn_float x[4] = {(attn_float)1e30, (attn_float)-1e30, (attn_float)1e30, 3}, y[4], mu, rs;
    attn_float z[4] = {(attn_float)1e30, 1, 1, 1}, t[4] = {(attn_float)3e-30, (attn_float)-1e-30, 0, (attn_float)1e-30};
    double want[4];
    int i, ok = 1;
    /* the exact answer: mean 1e30 / 4 (3 is lost), var 3e60 / 4; xhat = (x - mu) / sd */
    double m = (1e30 - 1e30 + 1e30 + 3) / 4, var = 0;
    for (i = 0; i < 4; i++) var += ((double)x[i] - m) * ((double)x[i] - m) / 4;
    for (i = 0; i < 4; i++) want[i] = ((double)x[i] - m) / sqrt(var);
    attn_layernorm_forward(y, &mu, &rs, x, NULL, NULL, 1, 4, (attn_float)1e-5, ATTN_LN_EPS_INSIDE);
    for (i = 0; i < 4; i++) ok &= fabs(y[i] - want[i]) < 1e-5;
    CHECK(ok, "layernorm([1e30, -1e30, 1e30, 3]) = %g %g %g %g, want %g %g %g %g", y[0], y[1], y[2], y[3], want[0], want[1], want[2],
          want[3]);
    attn_rmsnorm_forward(y, &rs, z, NULL, 1, 4, (attn_float)1e-5);
    CHECK(fabs(y[0] - 2.0) < 1e-5 && fabs(y[1] - 2e-30) < 1e-34, "rmsnorm([1e30, 1, 1, 1]) = %g %g, want 2 and 2e-30", y[0], y[1]);
    /* a tiny row with eps 0 normalises as a scaled copy would */
    attn_layernorm_forward(y, &mu, &rs, t, NULL, NULL, 1, 4, 0, ATTN_LN_EPS_INSIDE);
    {
        attn_float big[4], yb[4];
        for (i = 0; i < 4; i++) big[i] = t[i] * (attn_float)1e30;
        attn_layernorm_forward(yb, &mu, &rs, big, NULL, NULL, 1, 4, 0, ATTN_LN_EPS_INSIDE);
        for (ok = 1, i = 0; i < 4; i++) ok &= fabs(y[i] - yb[i]) < 1e-5;
        CHECK(ok, "layernorm of a 1e-30 row with eps 0 = %g %g %g %g, as its 1e30 multiple's %g %g %g %g", y[0], y[1], y[2], y[3],
              yb[0], yb[1], yb[2], yb[3]);
    }
}

/* The NaN rule's calls: B 2, H 2, T 37 (a vector tail, rows past a band), dk = dv = 8; O, the
   stats and (backward, with dO) dQ, dK, dV of one kind. */
enum { NR_B = 2, NR_H = 2, NR_T = 37, NR_D = 8, NR_N = NR_B * NR_H * NR_T * NR_D };
typedef struct {
    attn_attention_desc d;
    attn_float Q[NR_N], K[NR_N], V[NR_N], O[NR_N], dO[NR_N], st[NR_B * NR_H * NR_T * (2 * NR_D + 3)];
    attn_float dQ[NR_N], dK[NR_N], dV[NR_N], w2[NR_H * NR_D * NR_D], lambda[4 * NR_D / 2];
    unsigned char mask[NR_B * NR_T];
} nr_case;

static int nr_run(nr_case *c)
{
    size_t wb = attn_attention_workspace(&c->d);
    void *work = malloc(wb);
    attn_attention_grads g;
    int ok;
    memset(&g, 0, sizeof g);
    memset(c->dQ, 0, sizeof c->dQ); memset(c->dK, 0, sizeof c->dK); memset(c->dV, 0, sizeof c->dV);
    g.dQ = c->dQ; g.dK = c->dK; g.dV = c->dV;
    ok = work && attn_attention_forward(&c->d, c->O, c->st, NULL, c->Q, c->K, c->V, work, wb) == ATTN_OK &&
         attn_attention_backward(&c->d, &g, c->dO, c->Q, c->K, c->V, c->O, c->st, work, wb) == ATTN_OK;
    free(work);
    return ok;
}

/* Row r (of NR_D floats) of x and y: 1 if bitwise equal, else 0. */
static int nr_same(const attn_float *x, const attn_float *y, int r)
{
    return !memcmp(x + (size_t)r * NR_D, y + (size_t)r * NR_D, sizeof(attn_float) * NR_D);
}

/* Row r of x: 2 if every entry is NaN, 1 if some entry is not finite, else 0. */
static int nr_poisoned(const attn_float *x, int r)
{
    int e, nan = 1, bad = 0;
    for (e = 0; e < NR_D; e++) {
        double v = x[(size_t)r * NR_D + e];
        nan &= t_isnan(x[(size_t)r * NR_D + e]);
        bad |= !(v - v == 0);
    }
    return nan ? 2 : bad;
}

/* The NaN rule, bitwise: a NaN, +Inf or -Inf in one row of Q, K or V (one batch element and head)
   reaches exactly the rows that read it. Rows of O and dQ read their query and the keys and values
   they see; rows of dK and dV their own key and value and every row that sees them (head-mixing
   kinds: the heads of a position read each other). Every other row is the same bit for bit as
   with the finite value; the rows of O and dQ that read a NaN are NaN (but a head-mixing kind's
   other heads, which may not read the values of this one, and dQ where dS = dA; an infinity may leave a
   row finite where the formula takes its limit: a kernel's phi(-Inf) = 0). A key hidden by the
   key mask taints nothing. */
static void test_nan_rule(void)
{
    static nr_case ref, bad;
    static const double poison[3] = {NAN, INFINITY, -INFINITY};
    static const char *pname[3] = {"NaN", "+Inf", "-Inf"}, *tname[3] = {"q", "k", "v"};
    int k, causal, p, tsr, at, fails = 0, runs = 0;
#ifdef __FAST_MATH__
    printf("  skip: non-finite inputs under -ffast-math\n");
    return;
#endif
    for (k = 0; k < ATTN_KIND_COUNT; k++)
        for (causal = 0; causal < 4; causal++) /* 2: not causal, key 5 of element 1 masked; 3: causal, 1 key head */
            for (p = 0; p < 3; p++)
                for (tsr = 0; tsr < 3; tsr++)
                    for (at = 0; at < 3; at++) {
                        const attn_kind_info *ki = attn_kind_get((attn_kind)k);
                        int mix = (ki->flags & ATTN_KF_MIXES_HEADS) != 0, b0 = 1, h0 = tsr ? 1 : 0;
                        int KH = causal == 3 ? 1 : NR_H, kh0 = causal == 3 ? 0 : h0; /* the poisoned key head */
                        int pos = causal == 2 ? 5 : at == 0 ? 0 : at == 1 ? NR_T / 2 : NR_T - 1;
                        int b, h, i, e, okf = 1, okg = 1, okn = 1;
                        int linear_q = tsr == 0 && ki->score && ki->score->stat == ATTN_STAT_NONE;
                        attn_rng r;
                        if ((causal == 2 && (tsr == 0 || at)) || (causal == 3 && (!ki->score || ki->flags))) continue;
                        memset(&ref, 0, sizeof ref);
                        ref.d.kind = (attn_kind)k; ref.d.B = NR_B; ref.d.H = NR_H; ref.d.Tq = ref.d.Tk = NR_T;
                        ref.d.dk = ref.d.dv = NR_D; ref.d.causal = causal == 1 || causal == 3;
                        ref.d.kv_heads = causal == 3 ? 1 : 0;
                        attn_rng_seed(&r, 42, (uint64_t)k);
                        t_randn(ref.Q, NR_N, &r, 0.5); t_randn(ref.K, NR_N, &r, 0.5); t_randn(ref.V, NR_N, &r, 1);
                        t_randn(ref.dO, NR_N, &r, 1); t_randn(ref.w2, NR_H * NR_D * NR_D, &r, 0.3);
                        t_randn(ref.lambda, 4 * NR_D / 2, &r, 0.1);
                        if (ki->flags & ATTN_KF_PARAMS) ref.d.w2 = ref.w2, ref.d.lambda = ref.lambda;
                        ref.d.lambda_init = attn_diff_lambda_init(0);
                        memset(ref.mask, 1, sizeof ref.mask);
                        ref.mask[b0 * NR_T + 5] = 0;
                        bad = ref;
                        ref.d.key_mask = causal == 2 ? ref.mask : NULL;
                        bad.d.key_mask = causal == 2 ? bad.mask : NULL;
                        if (ref.d.w2) bad.d.w2 = bad.w2, bad.d.lambda = bad.lambda;
                        for (e = 0; e < NR_D; e++) {
                            attn_float *x = tsr == 0 ? bad.Q : tsr == 1 ? bad.K : bad.V;
                            x[((size_t)(b0 * (tsr ? KH : NR_H) + (tsr ? kh0 : h0)) * NR_T + pos) * NR_D + e] = (attn_float)poison[p];
                            if (causal == 2) bad.K[((size_t)(b0 * NR_H + h0) * NR_T + pos) * NR_D + e] = (attn_float)poison[p];
                        }
                        if (!nr_run(&ref) || !nr_run(&bad)) {
                            if (causal == 1 && p == 0 && tsr == 0 && at == 0) printf("  (%s: not causal-capable: %s)\n", ki->name, attn_last_error());
                            continue;
                        }
                        runs++;
                        for (b = 0; b < NR_B; b++)
                            for (h = 0; h < NR_H; h++)
                                for (i = 0; i < NR_T; i++) { /* row i of O and dQ reads the poison */
                                    int row = (b * NR_H + h) * NR_T + i, c = ref.d.causal;
                                    int reads = b == b0 && causal != 2 &&
                                                (tsr == 0 ? (h == h0 || mix) && i == pos : (h * KH / NR_H == kh0 || mix) && (!c || i >= pos));
                                    if (!reads) okf &= nr_same(bad.O, ref.O, row) && nr_same(bad.dQ, ref.dQ, row);
                                    else if (p == 0 && (h * KH / NR_H == kh0 || tsr < 2)) /* values: their heads' rows */
                                        okn &= nr_poisoned(bad.O, row) == 2 && (nr_poisoned(bad.dQ, row) == 2 || linear_q);
                                }
                        for (b = 0; b < NR_B; b++)
                            for (h = 0; h < KH; h++)
                                for (i = 0; i < NR_T; i++) { /* row i of dK and dV is read by a row that reads it */
                                    int row = (b * KH + h) * NR_T + i, c = ref.d.causal;
                                    int read = b == b0 && causal != 2 &&
                                               (tsr == 0 ? (h == h0 * KH / NR_H || mix) && (!c || i <= pos) : h == kh0 || mix);
                                    if (!read) okg &= nr_same(bad.dK, ref.dK, row) && nr_same(bad.dV, ref.dV, row);
                                }
                        if (!(okf && okg && okn) && fails++ < 12)
                            printf("  %s, %s, %s in %s at %d: %s%s%s\n", ki->name,
                                   causal == 3 ? "causal, 1 key head" : causal == 2 ? "masked key" : causal ? "causal" : "not causal",
                                   pname[p], tname[tsr], pos,
                                   okf ? "" : "O or dQ of a row that does not read it changed; ",
                                   okg ? "" : "dK or dV of a row that nothing poisoned reads changed; ",
                                   okn ? "" : "a row of O or dQ that reads the NaN is not NaN");
                    }
    printf("  the NaN rule: %d calls\n", runs);
    CHECK(fails == 0 && runs > ATTN_KIND_COUNT * 30, "the NaN rule: %d of %d calls broke it", fails, runs);
}

/* A broken score row (its vector-Jacobian product misses the 1 / N), to see the checker fail. */
static void sq_vjp_wrong(size_t n, const attn_float *s, const attn_float *a, const attn_float *vis, attn_float *ds, attn_float D,
                         attn_float inv)
{
    size_t i;
    (void)a; (void)inv;
    for (i = 0; i < n; i++) ds[i] = vis[i] * (ds[i] - D) * 2 * s[i];
}
static const attn_score_row sq_row = {ATTN_STAT_SUM, NULL, sq_map, NULL, NULL, sq_vjp};
static const attn_score_row sq_row_wrong = {ATTN_STAT_SUM, NULL, sq_map, NULL, NULL, sq_vjp_wrong};

/* Kinds as rows: every built-in kind passes the public gradient checker (Cog and the head-mixing
   kinds, whose maps have kinks, in double only); kinds registered from outside run, are found by
   name, and a wrong row fails the check. */
static void test_kind_rows(void)
{
    attn_kind_info r = {ATTN_SOFTMAX, "test_sq", NULL, "A = (1 + s^2) / sum (1 + s^2)", NULL, NULL, NULL, 0, &sq_row, NULL, NULL};
    attn_attention_desc d;
    attn_float w2[2 * 4 * 4];
    attn_kind good, bad;
    attn_rng rng;
    double err;
    int k, res;
    attn_rng_seed(&rng, 3, 3);
    t_randn(w2, 32, &rng, 0.5);
    memset(&d, 0, sizeof d);
    d.B = 1; d.H = 2; d.Tq = 5; d.Tk = 7; d.dk = 4; d.dv = 4; d.causal = 1; d.w2 = w2;
    for (k = 0; k < ATTN_KIND_COUNT; k++) {
        unsigned f = attn_kind_get((attn_kind)k)->flags;
        if (!T_DOUBLE && (k == ATTN_COG || (f & (ATTN_KF_MIXES_HEADS | ATTN_KF_SUBHEADS)))) continue;
        d.kind = (attn_kind)k;
        res = attn_gradcheck_attention(&d, 5, 0, 0, 0, &err);
        CHECK(res == 1, "%s: the gradient checker says %d, largest error %.3g", attn_kind_get((attn_kind)k)->name, res, err);
    }
    good = attn_kind_register(&r);
    r.name = "test_sq_wrong"; r.score = &sq_row_wrong;
    bad = attn_kind_register(&r);
    CHECK((int)good >= ATTN_KIND_COUNT && (int)bad == (int)good + 1, "registered kinds %d, %d", (int)good, (int)bad);
    CHECK(attn_kind_from_name("test_sq") == (int)good && attn_kind_get(good)->forward != NULL, "a registered kind is found by name");
    r.name = "test_sq";
    CHECK(attn_kind_register(&r) == (attn_kind)-1 && attn_last_status() == ATTN_ERR_ARG, "a taken name is refused");
    r.name = "test_incomplete"; r.score = NULL;
    CHECK(attn_kind_register(&r) == (attn_kind)-1, "a row without an engine or a score row is refused");
    d.kind = good;
    CHECK(attn_gradcheck_attention(&d, 5, 0, 0, 0, &err) == 1, "a registered kind passes the checker (%.3g)", err);
    d.kind = bad;
    CHECK(attn_gradcheck_attention(&d, 5, 0, 0, 0, &err) == 0 && err > 0.05, "a wrong vjp fails the checker (%.3g)", err);
}

/* Finite inputs whose scores overflow to -Inf over a whole key tile (keys 256 on of 512, or the
   first 256; the last tile 44 keys, not a whole number of vectors, at Tk = 300): those keys weigh 0,
   so O is the mean of the other values, 1. Before the fix the tile's weights were left at its
   visibility, 1, and the values 1000 came in. */
static void test_overflowed_scores(void)
{
    enum { D = 16, TMAX = 512 };
    static attn_float K[TMAX * D], V[TMAX * D];
    attn_float Q[D] = {0}, O[D], st[1];
    int tks[2] = {512, 300}, t, first, j;
    Q[0] = (attn_float)1e20;
    for (t = 0; t < 2; t++)
        for (first = 0; first < 2; first++) {
            attn_attention_desc d;
            size_t wb;
            void *w;
            memset(&d, 0, sizeof d);
            d.kind = ATTN_SOFTMAX; d.B = d.H = d.Tq = 1; d.Tk = tks[t]; d.dk = d.dv = D;
            memset(K, 0, sizeof K);
            memset(V, 0, sizeof V);
            for (j = 0; j < d.Tk; j++) { /* the overflowing tile: keys [0, 256) if first, else [256, Tk) */
                int over = (j < 256) == first;
                K[j * D] = over ? (attn_float)-1e20 : (attn_float)1e-20 * (attn_float)(j % 3);
                V[j * D] = over ? 1000 : 1;
            }
            wb = attn_attention_workspace(&d);
            w = malloc(wb);
            CHECK(w && attn_attention_forward(&d, O, st, NULL, Q, K, V, w, wb) == ATTN_OK &&
                      fabs((double)O[0] - 1) < 1e-5,
                  "Tk %d, overflow in the %s tile: O = %g, not 1", d.Tk, first ? "first" : "last", (double)O[0]);
            free(w);
        }
}

void test_faults(void)
{
    test_kind_rows();
    test_config_words();
    test_loaders();
    test_statuses();
    test_nan();
    test_norm_range();
    test_nan_rule();
    test_overflowed_scores();
}
