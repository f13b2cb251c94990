/* The bad-input table: public calls given a wrong argument each. Every one must return a failing
   status (or its documented failure value) with a message, write nothing (every output lives in a
   sentinel-filled pool that is compared after each call, and the models' parameter blocks with it),
   and print nothing (stdout and stderr are captured around the table where the platform allows). */
#include "test.h"
#include <limits.h>
#if defined(__unix__) && !defined(__EMSCRIPTEN__)
#include <unistd.h>
#define T_CAPTURE 1
#endif

#define NPOOL 8
#define POOL 8192
typedef union {
    attn_float f[POOL];
    int i[POOL];
    unsigned char b[POOL * sizeof(attn_float)];
    double d;
    void *p;
} pool_t;
static pool_t pool[NPOOL], pool_keep[NPOOL];
static int nbad;

/* The watched model blocks: their values and gradients must not change either. */
static const attn_params *watched[3];
static uint64_t watched_hash[3];

static uint64_t hash_params(const attn_params *p)
{
    const unsigned char *b = (const unsigned char *)p->data;
    uint64_t h = 14695981039346656037ull;
    size_t i, n = 2 * p->total * sizeof(attn_float); /* values and gradients, one block after the other */
    for (i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static void pools_fill(void)
{
    int k;
    for (k = 0; k < NPOOL; k++) memset(pool[k].b, 0x7F, sizeof pool[k].b);
    memcpy(pool_keep, pool, sizeof pool);
}

/* A mask modifier that sees everything (the block-mask rows). */
static int bad_mask_all(void *ctx, int b, int h, int p, int j)
{
    (void)ctx; (void)b; (void)h; (void)p; (void)j;
    return 1;
}

/* One row of the table: failed (the call's status or value said so), the call's text; the message
   holds want when it is not NULL. */
static void bad_row(int failed, const char *call, int line, const char *want)
{
    int k, wrote = memcmp(pool, pool_keep, sizeof pool) != 0;
    for (k = 0; k < 3; k++) wrote |= watched[k] && hash_params(watched[k]) != watched_hash[k];
    nbad++;
    CHECK(failed && attn_last_status() != ATTN_OK && attn_last_error()[0] && !wrote && (!want || strstr(attn_last_error(), want)),
          "line %d: %s: %s%s, message \"%s\"", line, call, failed ? "failed" : "SUCCEEDED", wrote ? ", and WROTE its outputs" : "",
          attn_last_error());
    if (wrote) pools_fill();
    attn_clear_error();
}
#define BAD(call) bad_row((call) != ATTN_OK, #call, __LINE__, NULL)          /* an attn_status */
#define ZERO(call) bad_row((call) == 0, #call, __LINE__, NULL)               /* a size, 0 on failure */
#define NEG(call) bad_row((call) < 0, #call, __LINE__, NULL)                 /* -1 on failure */
#define VOID(call) ((call), bad_row(attn_last_status() != ATTN_OK, #call, __LINE__, NULL)) /* sets the error */
#define SHORT(call) bad_row((call) != ATTN_OK, #call, __LINE__, "the cache has") /* a cache one float short */

/* NaN test on the bits (a NaN is the failure value of a few functions that return a double) */
static int t_isnan_d(double x)
{
    uint64_t u;
    memcpy(&u, &x, 8);
    return (u & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (u & 0x000fffffffffffffull);
}

#define F(k) (pool[k].f)
#define I(k) (pool[k].i)
#define U(k) (pool[k].b)
#define FN(k) (sizeof pool[k].b / sizeof(attn_float)) /* pool k's floats: a cache's size */

static void table(attn_transformer *tf, attn_cisformer *cis, attn_seq2seq *s2s, const attn_float *in, const int *ids)
{
    attn_param_desc desc[1] = {{"W", 2, {2, 3}, -1, ATTN_PARAM_ZERO, 0}}, zero_desc[1] = {{"W", 2, {2, 0}, -1, ATTN_PARAM_ZERO, 0}}, decay_desc[1] = {{"W", 1, {3}, 2, ATTN_PARAM_ZERO, 0}};
    int shape[2] = {2, 3}, bad_ids[4] = {0, 1, 99, 2};
    attn_rng r;
    attn_arena small;
    attn_attention_desc d;
    attn_attention_grads g;
    attn_layer L;
    attn_layer_grads lg;
    attn_transformer_config tc = tf->cfg;
    attn_cisformer_config cc = cis->cfg;
    attn_seq2seq_config sc = s2s->cfg;
    double w[8], mu[8], sd[8], dmin[3], dmean[3];
    const char *names[2] = {"a", "b"};
    attn_plot_series series;
    attn_plot plot;
    unsigned char record[64];
    int dims[4] = {2, 3, 4, 5};
    const char *long_name[1] = {"a-kind-name-of-more-than-thirty-one-characters"};
    attn_rng_seed(&r, 1, 1);
    attn_arena_use(&small, U(7), 256);
    memset(&plot, 0, sizeof plot);
    memset(&series, 0, sizeof series);
    memset(w, 0, sizeof w);
    series.x = series.y = w; series.n = 1; /* one point (0, 0) */
    pools_fill(); /* the arena above lives in pool 7: start watching from here */

    /* memory and tensors */
    BAD(attn_arena_init(NULL, 64));
    BAD(attn_arena_use((attn_arena *)U(0), NULL, 128));
    BAD(attn_arena_tensor(&small, (attn_tensor *)U(0), 0, shape));
    BAD(attn_arena_tensor(&small, (attn_tensor *)U(0), 5, shape));
    BAD(attn_params_init((attn_params *)U(0), NULL, 1));
    BAD(attn_params_init((attn_params *)U(0), zero_desc, 1));
    BAD(attn_params_init((attn_params *)U(0), desc, 0));
    BAD(attn_params_init((attn_params *)U(0), decay_desc, 1));
    BAD(attn_params_init_in((attn_params *)U(0), desc, 1, U(1), 16));
    /* kernels */
    VOID(attn_gemm(2, 0, 2, 2, 2, 1, in, 2, in, 2, 0, F(0), 2));
    VOID(attn_gemm(0, 0, -1, 2, 2, 1, in, 2, in, 2, 0, F(0), 2));
    VOID(attn_gemm(0, 0, 2, 2, 3, 1, in, 2, in, 2, 0, F(0), 2));
    VOID(attn_gemm(0, 0, 2, 2, 2, 1, in, 2, in, 2, 0, NULL, 2));
    VOID(attn_gemm(0, 1, 2, 3, 2, 1, in, 2, in, 1, 0, F(0), 3));
    /* ops */
    BAD(attn_linear_forward(F(0), in, in, NULL, 0, 3, 2));
    BAD(attn_linear_forward(F(0), NULL, in, NULL, 2, 3, 2));
    BAD(attn_linear_backward(F(0), F(1), F(2), NULL, in, in, 2, 3, 2));
    BAD(attn_linear_backward(F(0), F(1), F(2), in, in, in, 2, 0, 2));
    BAD(attn_layernorm_forward(F(0), F(1), F(2), in, NULL, NULL, 2, 3, 1e-5f, (attn_ln_eps)7));
    BAD(attn_layernorm_forward(F(0), F(1), F(2), in, NULL, NULL, 2, 3, -1, ATTN_LN_EPS_INSIDE));
    BAD(attn_layernorm_forward(F(0), F(1), F(2), in, NULL, NULL, 2, 0, 1e-5f, ATTN_LN_EPS_INSIDE));
    BAD(attn_layernorm_forward(NULL, F(1), F(2), in, NULL, NULL, 2, 3, 1e-5f, ATTN_LN_EPS_INSIDE));
    BAD(attn_layernorm_backward(F(0), F(1), F(2), in, in, NULL, NULL, in, 2, 3, 1e-5f, ATTN_LN_EPS_INSIDE));
    BAD(attn_layernorm_backward(F(0), F(1), F(2), in, in, NULL, in, in, 2, 3, 1e-5f, (attn_ln_eps)3));
    BAD(attn_rmsnorm_forward(F(0), F(1), in, NULL, 2, 3, -1));
    BAD(attn_rmsnorm_forward(F(0), F(1), in, NULL, 0, 3, 1e-5f));
    BAD(attn_rmsnorm_backward(F(0), F(1), in, in, NULL, NULL, 2, 3));
    BAD(attn_act_forward(F(0), in, 8, (attn_act)99));
    BAD(attn_act_forward(F(0), in, 0, ATTN_ACT_RELU));
    BAD(attn_act_backward(F(0), in, in, 8, (attn_act)-1));
    BAD(attn_swiglu_forward(F(0), NULL, in, 8));
    BAD(attn_swiglu_forward(F(0), in, in, 0));
    BAD(attn_swiglu_backward(F(0), F(1), NULL, in, in, 8));
    BAD(attn_softmax_forward(F(0), in, 2, 0));
    BAD(attn_softmax_forward(NULL, in, 2, 3));
    BAD(attn_softmax_backward(F(0), in, NULL, 2, 3));
    BAD(attn_mean_pool(NULL, in, NULL, 1, 4, 4, 1));
    BAD(attn_mean_pool(F(0), in, NULL, 0, 4, 4, 1));
    BAD(attn_mean_pool(F(0), in, NULL, 1, 4, -1, 1));
    BAD(attn_embedding_forward(F(0), bad_ids, in, 4, 3, 2));
    BAD(attn_embedding_forward(F(0), ids, in, 4, 0, 2));
    BAD(attn_embedding_backward(F(0), in, bad_ids, 4, 3, 2));
    BAD(attn_one_hot(F(0), bad_ids, 4, 3));
    BAD(attn_one_hot(F(0), ids, 4, 0));
    BAD(attn_pos_learned_forward(F(0), in, in, 1, 9, 2, 8));
    BAD(attn_pos_learned_backward(F(0), F(1), in, 1, 9, 2, 8));
    BAD(attn_pos_sinusoidal(F(0), 4, 0));
    BAD(attn_rope_tables(F(0), F(1), 4, 5, 0, 10000));
    BAD(attn_rope_tables(F(0), F(1), 0, 4, 0, 10000));
    BAD(attn_rope_forward(F(0), in, NULL, in, 1, 2, 4));
    BAD(attn_rope_forward(F(0), in, in, in, 1, 2, 3));
    BAD(attn_rope_backward(F(0), in, in, in, 1, 2, 3));
    BAD(attn_t5_bias_forward(F(0), in, 2, 3, 3, 1));
    BAD(attn_t5_bias_forward(F(0), in, 0, 3, 3, 8));
    BAD(attn_t5_bias_backward(F(0), in, 2, 3, 3, 1));
    BAD(attn_dropout_forward(F(0), U(1), in, 8, 1, &r));
    BAD(attn_dropout_forward(F(0), U(1), in, 8, 0.5f, NULL));
    BAD(attn_dropout_backward(F(0), in, U(1), 8, -0.5f));
    BAD(attn_mse_forward(F(0), in, NULL, 8, ATTN_REDUCE_SUM));
    BAD(attn_mse_forward(F(0), in, in, 8, (attn_reduce)5));
    BAD(attn_mse_backward(F(0), in, in, 8, (attn_reduce)5, 1));
    BAD(attn_cross_entropy_forward(F(0), F(1), in, bad_ids, 4, 3));
    BAD(attn_cross_entropy_forward(F(0), F(1), in, ids, 0, 3));
    BAD(attn_cross_entropy_backward(F(0), NULL, 1, in, bad_ids, 4, 3));

    /* attention */
    memset(&d, 0, sizeof d);
    d.kind = ATTN_SOFTMAX; d.B = 1; d.H = 2; d.Tq = d.Tk = 4; d.dk = d.dv = 4;
    memset(&g, 0, sizeof g);
    g.dQ = F(1); g.dK = F(2); g.dV = F(3);
#define ATT_BAD(field, value)                                                                                      \
    do {                                                                                                           \
        attn_attention_desc e = d;                                                                                 \
        e.field = value;                                                                                           \
        BAD(attn_attention_forward(&e, F(0), F(4), NULL, in, in, in, U(5), sizeof pool[5].b));                     \
    } while (0)
    ATT_BAD(kind, (attn_kind)99);
    ATT_BAD(B, 0);
    ATT_BAD(dk, -3);
    ATT_BAD(dropout, 1);
    ATT_BAD(window, -1);
    ATT_BAD(scale, (attn_float)NAN);
    ATT_BAD(block, 2); /* without a layout */
    {
        attn_attention_desc e = d;
        e.kind = ATTN_DIFFERENTIAL; e.dk = 3;
        BAD(attn_attention_forward(&e, F(0), F(4), NULL, in, in, in, U(5), sizeof pool[5].b));
        e = d; e.kind = ATTN_KERNEL; e.window = 2;
        BAD(attn_attention_forward(&e, F(0), F(4), NULL, in, in, in, U(5), sizeof pool[5].b));
        e = d; e.kind = ATTN_HYLA_PLUS; /* without w2 */
        BAD(attn_attention_forward(&e, F(0), F(4), NULL, in, in, in, U(5), sizeof pool[5].b));
    }
    BAD(attn_attention_forward(&d, F(0), F(4), NULL, NULL, in, in, U(5), sizeof pool[5].b));
    BAD(attn_attention_forward(&d, F(0), F(4), NULL, in, in, in, U(5), 8));
    BAD(attn_attention_backward(&d, &g, NULL, in, in, in, in, in, U(5), sizeof pool[5].b));
    BAD(attn_attention_backward(&d, NULL, in, in, in, in, in, in, U(5), sizeof pool[5].b));
    BAD(attn_bigbird_blocks(U(0), 0, 4, 1, &r));
    BAD(attn_bigbird_blocks(U(0), 2, 0, 1, &r));
    BAD(attn_bigbird_tokens(U(0), 2, 0, 1, 2, 1, &r));
    {
        attn_attention_desc e = d;
        e.causal = 1;
        BAD(attn_linformer_forward(&e, 2, 8, in, in, F(0), F(4), FN(4), in, in, in, U(5), sizeof pool[5].b));
        e.causal = 0;
        BAD(attn_linformer_forward(&e, 0, 8, in, in, F(0), F(4), FN(4), in, in, in, U(5), sizeof pool[5].b));
        BAD(attn_linformer_backward(&e, 2, 8, in, in, F(0), F(1), F(2), F(3), F(6), NULL, in, in, in, in, in, attn_linformer_cache_floats(&e, 2), U(5), sizeof pool[5].b));
        SHORT(attn_linformer_forward(&e, 2, 8, in, in, F(0), F(4), attn_linformer_cache_floats(&e, 2) - 1, in, in, in, U(5), sizeof pool[5].b));
        SHORT(attn_linformer_backward(&e, 2, 8, in, in, F(0), F(1), F(2), F(3), F(6), in, in, in, in, in, in, attn_linformer_cache_floats(&e, 2) - 1, U(5), sizeof pool[5].b));
    }
    memset(&L, 0, sizeof L);
    L.att = d; L.C = L.Cout = 8; L.Wq = L.Wk = L.Wv = L.Wo = in;
    memset(&lg, 0, sizeof lg);
    {
        attn_layer M = L;
        M.C = 0;
        BAD(attn_layer_forward(&M, F(0), F(4), FN(4), in, NULL, 1, 4, 4, U(5), sizeof pool[5].b));
        M = L; M.Wq = NULL;
        BAD(attn_layer_forward(&M, F(0), F(4), FN(4), in, NULL, 1, 4, 4, U(5), sizeof pool[5].b));
    }
    BAD(attn_layer_forward(&L, F(0), F(4), FN(4), NULL, NULL, 1, 4, 4, U(5), sizeof pool[5].b));
    BAD(attn_layer_forward(&L, F(0), F(4), FN(4), in, NULL, 1, 4, 4, U(5), 8));
    BAD(attn_layer_backward(&L, F(0), NULL, &lg, NULL, in, NULL, in, attn_layer_cache_floats(&L, 1, 4, 4), 1, 4, 4, U(5), sizeof pool[5].b));
    SHORT(attn_layer_forward(&L, F(0), F(4), attn_layer_cache_floats(&L, 1, 4, 4) - 1, in, NULL, 1, 4, 4, U(5), sizeof pool[5].b));
    SHORT(attn_layer_backward(&L, F(0), NULL, &lg, in, in, NULL, in, attn_layer_cache_floats(&L, 1, 4, 4) - 1, 1, 4, 4, U(5), sizeof pool[5].b));
    {   /* the step over a cache: full, no source for add 0, short work, no keys; sizes */
        attn_layer_kv kv;
        kv.k = F(1); kv.v = F(2); kv.rows = 4; kv.held = 4;
        BAD(attn_layer_step(&L, &kv, F(0), in, 1, 4, 1, U(5), sizeof pool[5].b));
        kv.held = 0;
        BAD(attn_layer_step(&L, &kv, F(0), in, 1, 0, 0, U(5), sizeof pool[5].b));
        BAD(attn_layer_step(&L, &kv, F(0), in, 1, 0, 1, U(5), 8));
        BAD(attn_layer_kv_add(&L, &kv, NULL, 1, 0, U(5), sizeof pool[5].b));
        BAD(attn_layer_kv_add(&L, &kv, in, 5, 0, U(5), sizeof pool[5].b));
        CHECK(kv.held == 0, "a refused step leaves the cache's count");
    }
    ZERO(attn_layer_kv_floats(&L, 0, NULL)); /* softmax has no recurrent state */
    ZERO(attn_layer_kv_floats(&L, -1, NULL));
    ZERO(attn_layer_step_work_bytes(&L, 0, 4));
    ZERO(attn_layer_step_work_bytes(&L, 5, 4));

    /* models: configurations */
    {
        attn_cisformer_config c = cc;
        c.d = 1;
        BAD(attn_cisformer_init((attn_cisformer *)U(0), &c, &r));
        ZERO(attn_cisformer_param_count(&c));
        c = cc; c.kind = ATTN_HYLA;
        BAD(attn_cisformer_init((attn_cisformer *)U(0), &c, &r));
        c = cc; c.vec = (attn_cis_vec)7;
        BAD(attn_cisformer_init((attn_cisformer *)U(0), &c, &r));
        c = cc; c.scale = (attn_float)NAN;
        BAD(attn_cisformer_init((attn_cisformer *)U(0), &c, &r));
    }
    {
        attn_transformer_config c = tc;
        c.in_dim = 4; /* and vocab */
        BAD(attn_transformer_init((attn_transformer *)U(0), &c, &r));
        c = tc; c.layers = 0;
        BAD(attn_transformer_init((attn_transformer *)U(0), &c, &r));
        ZERO(attn_transformer_param_count(&c));
        c = tc; c.eps = 0;
        BAD(attn_transformer_init((attn_transformer *)U(0), &c, &r));
        c = tc; c.act = (attn_act)99;
        BAD(attn_transformer_init((attn_transformer *)U(0), &c, &r));
        c = tc; c.heads = 65536; c.dk = 65536;
        BAD(attn_transformer_init((attn_transformer *)U(0), &c, &r));
        c = tc; c.readout = c.max_T + 1;
        BAD(attn_transformer_init((attn_transformer *)U(0), &c, &r));
        c = tc; c.kinds[1] = (attn_kind)-2;
        BAD(attn_transformer_init((attn_transformer *)U(0), &c, &r));
        c = tc; c.doc_mask = 1; c.bos = c.vocab;
        BAD(attn_transformer_init((attn_transformer *)U(0), &c, &r));
        c = tc; c.dropout = (attn_float)-0.1;
        BAD(attn_transformer_init((attn_transformer *)U(0), &c, &r));
    }
    {
        attn_seq2seq_config c = sc;
        c.pad = c.src_vocab;
        BAD(attn_seq2seq_init((attn_seq2seq *)U(0), &c, &r));
        ZERO(attn_seq2seq_param_count(&c));
        c = sc; c.kind = ATTN_DIFFERENTIAL;
        BAD(attn_seq2seq_init((attn_seq2seq *)U(0), &c, &r));
        c = sc; c.dropout = 1;
        BAD(attn_seq2seq_init((attn_seq2seq *)U(0), &c, &r));
        c = sc; c.enc_layers = ATTN_MAX_LAYERS + 1;
        BAD(attn_seq2seq_init((attn_seq2seq *)U(0), &c, &r));
    }
    /* models in the caller's memory: one byte short, a bad configuration; attn_gemm's buffer */
    BAD(attn_cisformer_init_in((attn_cisformer *)U(0), &cc, &r, U(5), attn_cisformer_bytes(&cc) - 1));
    BAD(attn_transformer_init_in((attn_transformer *)U(0), &tc, &r, U(5), attn_transformer_bytes(&tc) - 1));
    BAD(attn_seq2seq_init_in((attn_seq2seq *)U(0), &sc, &r, U(5), attn_seq2seq_bytes(&sc) - 1));
    BAD(attn_transformer_init_in((attn_transformer *)U(0), &tc, &r, NULL, 1 << 20));
    {
        attn_transformer_config c = tc;
        c.heads = 0;
        ZERO(attn_transformer_bytes(&c));
    }
#ifndef ATTN_USE_CBLAS /* with CBLAS there is no buffer, and any is accepted */
    BAD(attn_gemm_scratch(U(5), 64));
#endif
    /* models: calls */
    BAD(attn_cisformer_forward(cis, F(0), F(4), FN(4), bad_ids, 1, 1, U(5), sizeof pool[5].b));
    BAD(attn_cisformer_forward(cis, F(0), F(4), FN(4), ids, 1, 0, U(5), sizeof pool[5].b));
    BAD(attn_cisformer_forward(cis, F(0), F(4), FN(4), ids, 1, 1, U(5), 4));
    BAD(attn_cisformer_backward(cis, NULL, in, attn_cisformer_cache_floats(cis, 1), 1, U(5), sizeof pool[5].b));
    BAD(attn_cisformer_backward_sgd(cis, in, in, attn_cisformer_cache_floats(cis, 1), 1, NULL, 0.1f, 0.9f, 0, U(5), sizeof pool[5].b));
    SHORT(attn_cisformer_forward(cis, F(0), F(4), attn_cisformer_cache_floats(cis, 1) - 1, ids, 1, 1, U(5), sizeof pool[5].b));
    SHORT(attn_cisformer_backward(cis, in, in, attn_cisformer_cache_floats(cis, 1) - 1, 1, U(5), sizeof pool[5].b));
    SHORT(attn_cisformer_backward_sgd(cis, in, in, attn_cisformer_cache_floats(cis, 1) - 1, 1, F(1), 0.1f, 0.9f, 0, U(5), sizeof pool[5].b));
    BAD(attn_transformer_forward(tf, F(0), F(4), FN(4), ids, NULL, 1, tf->cfg.max_T + 1, U(5), sizeof pool[5].b));
    BAD(attn_transformer_forward(tf, F(0), F(4), FN(4), bad_ids, NULL, 1, 4, U(5), sizeof pool[5].b));
    BAD(attn_transformer_forward(tf, F(0), F(4), FN(4), ids, NULL, 0, 4, U(5), sizeof pool[5].b));
    BAD(attn_transformer_forward(tf, F(0), F(4), FN(4), ids, in, 1, 4, U(5), sizeof pool[5].b));
    BAD(attn_transformer_forward(tf, F(0), F(4), FN(4), ids, NULL, 1, 4, U(5), 16));
    BAD(attn_transformer_backward(tf, NULL, in, attn_transformer_cache_floats(tf, 1, 4), ids, NULL, 1, 4, U(5), sizeof pool[5].b));
    BAD(attn_transformer_pack(NULL, 1));
    BAD(attn_transformer_weights(tf, F(0), in, attn_transformer_cache_floats(tf, 1, 4), 1, 4, 99, U(5), sizeof pool[5].b));
    SHORT(attn_transformer_forward(tf, F(0), F(4), attn_transformer_cache_floats(tf, 1, 4) - 1, ids, NULL, 1, 4, U(5), sizeof pool[5].b));
    SHORT(attn_transformer_backward(tf, in, in, attn_transformer_cache_floats(tf, 1, 4) - 1, ids, NULL, 1, 4, U(5), sizeof pool[5].b));
    SHORT(attn_transformer_weights(tf, F(0), in, attn_transformer_cache_floats(tf, 1, 4) - 1, 1, 4, 0, U(5), sizeof pool[5].b));
    ZERO(attn_transformer_kv_bytes(tf, 0));
    ZERO(attn_transformer_kv_bytes(NULL, 4));
    ZERO(attn_transformer_decode_work_bytes(tf, 0, 4));
    BAD(attn_transformer_kv_init((attn_transformer_kv *)U(0), tf, 0, U(1), sizeof pool[1].b));
    BAD(attn_transformer_kv_init((attn_transformer_kv *)U(0), tf, 4, U(1), 8));
    NEG(attn_sample(F(0), 0, 1, 0, 1, &r));
    NEG(attn_sample(F(0), 4, -1, 0, 1, &r));
    NEG(attn_sample(F(0), 4, 1, 0, 0, &r));
    BAD(attn_seq2seq_forward(s2s, F(0), F(4), FN(4), ids, ids, 1, s2s->cfg.max_src + 1, 2, U(5), sizeof pool[5].b));
    BAD(attn_seq2seq_forward(s2s, F(0), F(4), FN(4), bad_ids, ids, 1, 4, 2, U(5), sizeof pool[5].b));
    BAD(attn_seq2seq_backward(s2s, NULL, in, attn_seq2seq_cache_floats(s2s, 1, 4, 2), ids, ids, 1, 4, 2, U(5), sizeof pool[5].b));
    BAD(attn_seq2seq_weights(s2s, F(0), in, attn_seq2seq_cache_floats(s2s, 1, 4, 2), 1, 4, 2, 99, U(5), sizeof pool[5].b));
    SHORT(attn_seq2seq_forward(s2s, F(0), F(4), attn_seq2seq_cache_floats(s2s, 1, 4, 2) - 1, ids, ids, 1, 4, 2, U(5), sizeof pool[5].b));
    SHORT(attn_seq2seq_backward(s2s, in, in, attn_seq2seq_cache_floats(s2s, 1, 4, 2) - 1, ids, ids, 1, 4, 2, U(5), sizeof pool[5].b));
    SHORT(attn_seq2seq_weights(s2s, F(0), in, attn_seq2seq_cache_floats(s2s, 1, 4, 2) - 1, 1, 4, 2, 0, U(5), sizeof pool[5].b));
    BAD(attn_seq2seq_decode(s2s, I(0), F(1), ids, 1, 4, 1, 2, 5, 0, 0));
    BAD(attn_seq2seq_decode(s2s, I(0), F(1), ids, 1, 4, 99, 2, 5, 2, 0));
    BAD(attn_seq2seq_decode(s2s, I(0), F(1), ids, 1, 4, 1, 2, 0, 2, 0));

    /* size queries: 0 and the error set for arguments their calls would refuse */
    {
        attn_attention_desc e = d;
        e.B = 0;
        ZERO(attn_attention_workspace(&e));
        ZERO(attn_attention_stats_floats(&e));
        e = d; e.kind = (attn_kind)99;
        ZERO(attn_attention_workspace(&e));
    }
    ZERO(attn_transformer_cache_floats(tf, 1, tf->cfg.max_T + 1));
    ZERO(attn_transformer_work_bytes(tf, 0, 4));
    ZERO(attn_transformer_weights_work_bytes(tf, 1, 0));
    ZERO(attn_cisformer_cache_floats(cis, 0));
    ZERO(attn_cisformer_work_bytes(cis, -1));
    ZERO(attn_seq2seq_cache_floats(s2s, 1, s2s->cfg.max_src + 1, 2));
    ZERO(attn_seq2seq_work_bytes(s2s, 1, 4, 0));
    /* optimizers */
    BAD(attn_sgd_step(&tf->p, F(0), (attn_float)NAN, 0.9f, 1));
    BAD(attn_sgd_step(&tf->p, F(0), 0.1f, -1, 1));
    BAD(attn_sgd_step(&tf->p, F(0), 0.1f, 0.9f, -1));
    BAD(attn_sgd_step(&tf->p, NULL, 0.1f, 0.9f, 1));
    BAD(attn_adamw_step(&tf->p, F(0), F(1), 0, 1e-3f, 0.9f, 0.999f, 1e-8f, 0));
    BAD(attn_adamw_step(&tf->p, F(0), F(1), 1, 1e-3f, 1, 0.999f, 1e-8f, 0));
    BAD(attn_adamw_step(&tf->p, F(0), F(1), 1, 1e-3f, 0.9f, 0.999f, 0, 0));
    BAD(attn_adamw_step(&tf->p, F(0), F(1), 1, 1e-3f, 0.9f, 0.999f, 1e-8f, -1));
    BAD(attn_adamw_step(&tf->p, NULL, F(1), 1, 1e-3f, 0.9f, 0.999f, 1e-8f, 0));
    NEG(attn_clip_grad_norm(&tf->p, 0));
    BAD(attn_schedule_constant((attn_schedule *)U(0), -1));
    BAD(attn_schedule_constant((attn_schedule *)U(0), NAN));
    BAD(attn_schedule_step((attn_schedule *)U(0), 1, 0, 0.5, 1));
    BAD(attn_schedule_warmup_cosine((attn_schedule *)U(0), 0, 1, 10, 10, 0));
    BAD(attn_schedule_warmup_cosine((attn_schedule *)U(0), 0, 1, 1, 10, -1));

    /* tasks */
    NEG(attn_nt_next(ATTN_NT, 0, 2, ids));
    BAD(attn_nt_series(I(0), 10, ATTN_NT, 1, 2, NULL, &r, NULL));
    BAD(attn_nt_series(I(0), 10, ATTN_NT, 4, 0, NULL, &r, NULL));
    BAD(attn_nt_series(I(0), 2, ATTN_NT, 4, 2, NULL, &r, NULL));
    BAD(attn_nt_series(I(0), 10, (attn_nt_task)9, 4, 2, NULL, &r, NULL));
    BAD(attn_nt_series(NULL, 10, ATTN_NT, 4, 2, NULL, &r, NULL));
    BAD(attn_nt_census_compute((attn_nt_census *)U(0), ATTN_NT, 1, 2));
    BAD(attn_nt_census_compute((attn_nt_census *)U(0), ATTN_NT_MIX, 4, 2));
    BAD(attn_fuzzy_init((attn_fuzzy *)U(0), 0, 2, 8, 0.5, 0.25, 1));
    BAD(attn_fuzzy_init((attn_fuzzy *)U(0), 13, 2, 8, 0.5, 0.25, 1));
    BAD(attn_fuzzy_init((attn_fuzzy *)U(0), 4, 2, 8, 1, 0.25, 1));
    BAD(attn_fuzzy_init((attn_fuzzy *)U(0), 4, 2, 8, 0.5, 1, 1));
    BAD(attn_sraven_init((attn_sraven *)U(0), 0, 8, 0.25, 1, 1));
    BAD(attn_sraven_init((attn_sraven *)U(0), 4, 2, 0.25, 1, 1));
    BAD(attn_sraven_init((attn_sraven *)U(0), 4, 8, 0, 1, 1));
    BAD(attn_digits_batch(ATTN_DIGITS_REVERSE, 5, 3, 0, 2, I(0), I(1), I(2), &r));
    BAD(attn_digits_batch(ATTN_DIGITS_REVERSE, 1, 3, 0, 0, I(0), I(1), I(2), &r));
    BAD(attn_digits_batch(ATTN_DIGITS_REVERSE, 0, 3, 0, 2, I(0), I(1), I(2), &r));
    {   /* calls on a valid task */
        attn_fuzzy fz;
        attn_sraven sr;
        if (attn_fuzzy_init(&fz, 4, 2, 8, 0.5, 0.25, 1) == ATTN_OK) {
            BAD(attn_fuzzy_batch(&fz, (attn_fuzzy_split)9, 2, F(0), F(1), F(2), I(3), &r));
            BAD(attn_fuzzy_batch(&fz, ATTN_FUZZY_TRAIN, 0, F(0), F(1), F(2), I(3), &r));
            BAD(attn_fuzzy_batch(&fz, ATTN_FUZZY_TRAIN, 2, NULL, F(1), F(2), I(3), &r));
            attn_fuzzy_free(&fz);
        }
        if (attn_sraven_init(&sr, 4, 8, 0.25, 1, 1) == ATTN_OK) {
            BAD(attn_sraven_panels(&sr, sr.nlatent, I(0), &r));
            BAD(attn_sraven_batch(&sr, 0, 0, F(0), I(1), I(2), &r));
            BAD(attn_sraven_batch(&sr, 0, 2, NULL, I(1), I(2), &r));
            attn_sraven_free(&sr);
        }
    }

    /* analysis and io */
    ZERO(attn_checkpoint_bytes(-1, 0, &cis->p));
    ZERO(attn_checkpoint_bytes(4, ATTN_CKPT_MAX_NAMES + 1, &cis->p));
    ZERO(attn_checkpoint_bytes(4, 0, NULL));
    BAD(attn_checkpoint_write(U(0), 16, "model", dims, 4, NULL, 0, &cis->p));
    BAD(attn_checkpoint_write(U(0), sizeof pool[0].b, "a-name-longer-than-sixteen", dims, 4, NULL, 0, &cis->p));
    BAD(attn_checkpoint_write(U(0), sizeof pool[0].b, "model", dims, ATTN_CKPT_MAX_CONFIG + 1, NULL, 0, &cis->p));
    BAD(attn_checkpoint_write(U(0), sizeof pool[0].b, "model", dims, 4, long_name, 1, &cis->p));
    BAD(attn_checkpoint_write(U(0), sizeof pool[0].b, "model", dims, 4, NULL, 1, &cis->p));
    memset(record, 'x', sizeof record);
    BAD(attn_checkpoint_read((attn_checkpoint_header *)U(0), &cis->p, record, sizeof record));
    BAD(attn_checkpoint_read((attn_checkpoint_header *)U(0), &cis->p, record, 4));
    BAD(attn_checkpoint_save("/nonexistent/dir/x.ckpt", "model", dims, 4, NULL, 0, &cis->p));
    BAD(attn_checkpoint_load_file("/nonexistent/x.ckpt", (void **)U(0), (size_t *)U(1), (attn_checkpoint_header *)U(2)));
    BAD(attn_checkpoint_load_file("tests", (void **)U(0), (size_t *)U(1), (attn_checkpoint_header *)U(2)));
    BAD(attn_safetensors_parse((attn_safetensors *)U(0), record, sizeof record));
    BAD(attn_safetensors_parse((attn_safetensors *)U(0), NULL, 16));
    BAD(attn_safetensors_load((attn_safetensors *)U(0), "/nonexistent/x.safetensors"));
    BAD(attn_safetensors_load((attn_safetensors *)U(0), "tests/test.h"));
    BAD(attn_safetensors_save("/nonexistent/dir/x.safetensors", NULL, NULL, 0, NULL, 0));
    BAD(attn_safetensors_save("build/badinput.safetensors", NULL, NULL, 1, NULL, 0));
    {
        attn_safetensors none;
        memset(&none, 0, sizeof none);
        BAD(attn_safetensors_get(&none, "x", F(0), 0, NULL));
        BAD(attn_safetensors_get(&none, "x", F(0), ATTN_MAX_DIMS + 1, NULL));
    }
    BAD(attn_wordpiece_parse((attn_wordpiece *)U(0), (const char *)record, sizeof record, 1)); /* no [UNK] */
    BAD(attn_wordpiece_parse((attn_wordpiece *)U(0), NULL, 16, 1));
    BAD(attn_wordpiece_load_hf((attn_wordpiece *)U(0), "/nonexistent"));
    BAD(attn_wordpiece_load_hf((attn_wordpiece *)U(0), "tests")); /* no vocab.txt */
    {
        attn_wordpiece none;
        memset(&none, 0, sizeof none);
        NEG(attn_wordpiece_encode(&none, "x", 1, (int *)U(0), 8, NULL));
    }
    BAD(attn_transformer_load_hf((attn_transformer *)U(0), "/nonexistent"));
    BAD(attn_transformer_load_hf((attn_transformer *)U(0), "tests"));
    BAD(attn_transformer_save_hf(tf, "/nonexistent/dir"));
    BAD(attn_cisformer_save(cis, "/nonexistent/dir/x.ckpt"));
    BAD(attn_cisformer_load((attn_cisformer *)U(0), "/nonexistent/x.ckpt"));
    BAD(attn_transformer_save(tf, "/nonexistent/dir/x.ckpt"));
    BAD(attn_transformer_load((attn_transformer *)U(0), "tests/test.h"));
    BAD(attn_seq2seq_save(s2s, "/nonexistent/dir/x.ckpt"));
    BAD(attn_seq2seq_load((attn_seq2seq *)U(0), "/nonexistent/x.ckpt"));
    BAD(attn_plot_svg("/nonexistent/dir/x.svg", &plot, &series, 1));
    BAD(attn_plot_svg("build/never.svg", NULL, &series, 1));
    BAD(attn_bars_svg("/nonexistent/dir/x.svg", "t", "y", names, 2, names, 2, w));
    BAD(attn_heatmap_svg("/nonexistent/dir/x.svg", "t", in, 2, 2, NULL, NULL, ATTN_HEAT_LINEAR));
    BAD(attn_heatmap_svg("build/never.svg", "t", in, 0, 2, NULL, NULL, ATTN_HEAT_LINEAR));
    BAD(attn_probe_fit(w, mu, sd, in, bad_ids, 4, 1, 10, 0.1, 0, 0));
    BAD(attn_probe_fit(w, mu, sd, in, ids, 0, 1, 10, 0.1, 0, 0));
    BAD(attn_probe_fit(w, mu, sd, in, ids, 4, 1, 10, 0, 0, 0));
    BAD(attn_sigma_candidate(F(0), 4, 4, 1, 1, 0.2, 0.05, 0.05, &r));
    BAD(attn_sigma_candidate(F(0), 0, 1, 1, 1, 0.2, 0.05, 0.05, &r));
    BAD(attn_sigma_distances(dmin, dmean, in, 4, 1, 1, 0, 0.2, 0.05, 0.05, &r));
    {
        int prompt[2] = {0, 1}, ns[2] = {1, 2};
        double paper[2], code[2];
        BAD(attn_collapse_probe(tf, ATTN_PROBE_ZERO, prompt, 2, 0, 1, ns, 2, 3, paper, code));
        BAD(attn_collapse_probe(tf, ATTN_PROBE_ZERO, prompt, 2, 0, 1, ns, 0, 4, paper, code));
        BAD(attn_collapse_probe(tf, (attn_probe_task)5, prompt, 2, 0, 1, ns, 2, 4, paper, code));
    }

    /* registration, the gradient checkers, decoding, optimizer state, sizes, analysis */
    NEG(attn_kind_register(NULL));
    {
        attn_kind_info kr = *attn_kind_get(ATTN_HYLA);
        kr.name = "";
        NEG(attn_kind_register(&kr));
        kr.name = "bad_hyla_without_mix"; kr.code_name = NULL; kr.mix = NULL;
        NEG(attn_kind_register(&kr));
    }
    {
        attn_attention_desc e = d;
        e.kind = (attn_kind)99;
        NEG(attn_gradcheck_attention(&e, 1, 0, 0, 0, NULL));
        NEG(attn_gradcheck_attention(&d, 1, -1, 0, 0, NULL));
    }
    NEG(attn_gradcheck_params(NULL, NULL, NULL, 1, 0, 0, 0, NULL));
    {
        attn_transformer_kv kv;
        memset(&kv, 0, sizeof kv); /* not set up */
        BAD(attn_transformer_decode(tf, &kv, F(0), ids, 1, U(5), sizeof pool[5].b));
        BAD(attn_transformer_kv_init(&kv, tf, 4, U(5), 0));
    }
    ZERO(attn_seq2seq_decode_work_bytes(s2s, 4, 4, 0));
    BAD(attn_seq2seq_decode_in(s2s, I(0), F(1), ids, 1, 4, 1, 2, 4, 0, 0, U(5), sizeof pool[5].b));
    ZERO(attn_layer_cache_floats(&L, 0, 4, 4));
    ZERO(attn_layer_work_bytes(NULL, 1, 4, 4));
    ZERO(attn_linformer_cache_floats(&d, 0));
    ZERO(attn_linformer_work_bytes(NULL, 2));
    ZERO(attn_transformer_grad_work_bytes(tf, 1, 4, -1));
    BAD(attn_transformer_grad(tf, NULL, NULL, ids, NULL, 1, 4, 0, w, U(5), sizeof pool[5].b));
    {
        attn_optim o;
        memset(&o, 0, sizeof o);
        BAD(attn_optim_sgd((attn_optim *)U(0), &tf->p, -1));
        BAD(attn_optim_adamw((attn_optim *)U(0), &tf->p, 2, 0.999, 1e-8, 0));
        BAD(attn_optim_step(&o, &tf->p, 0.1)); /* no state */
    }
    BAD(attn_params_draw(&tf->p, desc, 1, &r));
    ZERO(attn_params_bytes(zero_desc, 1));
    VOID(attn_params_init_normal(&tf->p, &r, 0, -1));
    VOID(attn_params_zero_grad(NULL));
    VOID(attn_arena_measure(NULL));
    bad_row(t_isnan_d(attn_schedule_lr(NULL, 3)), "attn_schedule_lr(NULL, 3)", __LINE__, NULL);
    ZERO(attn_tensor_bytes(0, shape));
    NEG(attn_t5_bucket(3, 1, 1));
    ZERO(attn_band_dimension(0, 1));
    NEG(attn_l1_distance(NULL, NULL, 4));
    NEG(attn_band_project(F(0), NULL, 4, 1));
    VOID(attn_cosine_matrix(F(0), in, 0, 4));
    NEG(attn_digits_exact(NULL, 4, ids, 4, 1));
    NEG(attn_probe_f1(w, mu, sd, in, ids, 0, 2));
    bad_row(t_isnan_d(attn_fuzzy_r2(in, in, in, 0)), "attn_fuzzy_r2(in, in, in, 0)", __LINE__, NULL);
    NEG(attn_fuzzy_value(NULL, ids, in));
    NEG(attn_sraven_ambiguous(NULL, ids, 0));
    VOID(attn_transformer_named(NULL, 0));
    VOID(attn_transformer_layer_named(tf, 99, 0));
    VOID(attn_cisformer_named(NULL, 0));
    VOID(attn_seq2seq_named(NULL, 0));
    VOID(attn_seq2seq_sublayer_named(s2s, 9999, 0));
    BAD((attn_status)attn_simd_set("avx1024"));
    BAD((attn_status)attn_simd_set(""));
    { /* score modifiers: nothing of the attn_mod written on a refusal */
        attn_mod_config mc;
        memset(&mc, 0, sizeof mc);
        BAD(attn_mod_init((attn_mod *)U(0), NULL, in, NULL));
        mc.kind = ATTN_MOD_SOFTCAP; mc.H = 2; /* cap 0 */
        BAD(attn_mod_init((attn_mod *)U(0), &mc, NULL, NULL));
        ZERO(attn_mod_params(&mc));
        mc.kind = ATTN_MOD_RELBIAS; mc.buckets = 8; mc.max_distance = 16;
        BAD(attn_mod_init((attn_mod *)U(0), &mc, NULL, F(1))); /* no table */
        mc.max_distance = ATTN_MOD_MAX_DISTANCE + 1;
        BAD(attn_mod_init((attn_mod *)U(0), &mc, in, F(1)));
        mc.kind = (attn_mod_kind)-1;
        ZERO(attn_mod_params(&mc));
        ZERO(attn_mod_params(NULL));
    }
    { /* block masks: a modifier without a mask, sizes below 1, a table past memory; bm not written */
        attn_score_mod nomask = {NULL, NULL, NULL, NULL, NULL, NULL}, yes = nomask;
        yes.mask = bad_mask_all;
        BAD(attn_block_mask_build((attn_block_mask *)U(0), NULL, 1, 1, 8, 8, 4));
        BAD(attn_block_mask_build((attn_block_mask *)U(0), &nomask, 1, 1, 8, 8, 4));
        BAD(attn_block_mask_build((attn_block_mask *)U(0), &yes, 1, 1, 8, 0, 4));
        BAD(attn_block_mask_build((attn_block_mask *)U(0), &yes, 1, 1, 8, 8, 0));
        BAD(attn_block_mask_build((attn_block_mask *)U(0), &yes, INT_MAX, INT_MAX, INT_MAX, INT_MAX, 1));
    }
    {
        attn_transformer_config bc = tc;
        bc.mods[1] = ATTN_MOD_COUNT;
        ZERO(attn_transformer_param_count(&bc));
        bc.mods[1] = ATTN_MOD_RELBIAS; /* buckets 0 */
        BAD(attn_transformer_init((attn_transformer *)U(0), &bc, &r));
    }
}

/* No bad input: the public functions without a row above, and why (tests/run.sh fails on a public
   function that is in neither; the list runs to the end of this comment).
   - no argument that can be wrong: attn_clear_error attn_last_error attn_get_threads attn_set_threads
     attn_simd_name attn_gemm_release attn_gemm_scratch_bytes attn_set_log attn_cisformer_config_default
     attn_transformer_config_default attn_seq2seq_config_default attn_status_string attn_act_name
     attn_nt_name attn_diff_lambda_init attn_set_error attn_gradcheck_kinks
   - lookups, where "not there" is an answer (NULL or -1), not an error: attn_kind_get
     attn_kind_from_name attn_nt_from_name attn_params_find attn_safetensors_find attn_safetensors_meta
     attn_wordpiece_id attn_wordpiece_token attn_mod_name attn_mod_from_name
     attn_mask_name attn_mask_from_name
   - frees and resets, for which NULL or a zeroed struct does nothing: attn_cisformer_free
     attn_transformer_free attn_seq2seq_free attn_fuzzy_free attn_sraven_free attn_optim_free
     attn_params_free attn_arena_release attn_arena_reset attn_safetensors_free attn_wordpiece_free
     attn_block_mask_free
   - the unchecked vector kernels, random streams and counts of the inner loops (their sizes and
     pointers are the caller's, as for memcpy): attn_axpy attn_dot attn_scale attn_exp attn_tanh
     attn_max attn_sum attn_row_max attn_row_sum attn_gemm_reference attn_tensor_numel attn_rng_seed
     attn_rng_u32 attn_rng_int attn_rng_uniform attn_rng_normal attn_rng_split */

void test_badinput(void)
{
    attn_transformer tf;
    attn_cisformer cis;
    attn_seq2seq s2s;
    attn_transformer_config tc;
    attn_cisformer_config cc;
    attn_seq2seq_config sc;
    attn_rng r;
    attn_float in[256];
    int ids[16] = {0, 1, 2, 1, 0, 2, 1, 1, 0, 0, 2, 2, 1, 0, 1, 2}, k;
#ifdef T_CAPTURE
    char path[] = "/tmp/attn-badinput-XXXXXX";
    int cap = mkstemp(path), out = dup(1), err = dup(2);
    long printed;
    FILE *f;
#endif
    memset(&tc, 0, sizeof tc);
    tc.vocab = 3; tc.d = 8; tc.layers = 2; tc.heads = 2; tc.dk = tc.dv = 4; tc.mlp = 16; tc.max_T = 8; tc.out = 3; tc.causal = 1;
    tc.eps = (attn_float)1e-5; tc.act = ATTN_ACT_GELU_TANH; tc.bias = 1; tc.pos = ATTN_POS_LEARNED; tc.norm = ATTN_NORM_RMS;
    memset(&cc, 0, sizeof cc);
    cc.d = 3; cc.ncon = 4; cc.kind = ATTN_SOFTMAX; cc.scale = 1;
    memset(&sc, 0, sizeof sc);
    sc.src_vocab = sc.tgt_vocab = 5; sc.pad = 0; sc.d = 8; sc.heads = 2; sc.dk = sc.dv = 4; sc.mlp = 16; sc.enc_layers = sc.dec_layers = 1;
    sc.max_src = sc.max_tgt = 6; sc.eps = (attn_float)1e-6; sc.ln_eps = ATTN_LN_EPS_OUTSIDE;
    attn_rng_seed(&r, 5, 5);
    for (k = 0; k < 256; k++) in[k] = (attn_float)attn_rng_normal(&r, 0, 1);
    if (attn_transformer_init(&tf, &tc, &r) != ATTN_OK || attn_cisformer_init(&cis, &cc, &r) != ATTN_OK ||
        attn_seq2seq_init(&s2s, &sc, &r) != ATTN_OK) {
        CHECK(0, "the bad-input table's models: %s", attn_last_error());
        return;
    }
    watched[0] = &tf.p; watched[1] = &cis.p; watched[2] = &s2s.p;
    for (k = 0; k < 3; k++) watched_hash[k] = hash_params(watched[k]);
    attn_clear_error();
#ifdef T_CAPTURE
    fflush(stdout); fflush(stderr);
    if (cap >= 0) { dup2(cap, 1); dup2(cap, 2); }
#endif
    nbad = 0;
    table(&tf, &cis, &s2s, in, ids);
#ifdef T_CAPTURE
    fflush(stdout); fflush(stderr);
    dup2(out, 1); dup2(err, 2);
    close(out); close(err);
    printed = cap >= 0 ? (long)lseek(cap, 0, SEEK_END) : -1;
    CHECK(printed == 0, "the bad-input calls printed %ld bytes (the table's own failures are among them)", printed);
    if (printed > 0 && (f = fopen(path, "r")) != NULL) { /* show what was printed, the failures included */
        char line[512];
        while (fgets(line, sizeof line, f)) fputs(line, stdout);
        fclose(f);
    }
    if (cap >= 0) { close(cap); remove(path); }
#endif
    CHECK(nbad >= 120, "the bad-input table has %d calls, fewer than 120", nbad);
    printf("  bad-input table: %d calls\n", nbad);
    attn_transformer_free(&tf);
    attn_cisformer_free(&cis);
    attn_seq2seq_free(&s2s);
}
