/* The surfaces hardened after the loaders: each finding of a probe (ASan + UBSan, a careless and a
   hostile caller) as a named test that fails without its fix. */
#include "test.h"
#include <limits.h>
#include "sq_row.h"

/* An error message that quotes the one before it (a save adding its name to a kind's failure) is
   formatted aside, not into the buffer it reads from. */
static void hardening_fail_message_quotes_itself(void)
{
    attn_cisformer m;
    memset(&m, 0, sizeof m);
    m.cfg.kind = (attn_kind)999;
    CHECK(attn_cisformer_save(&m, "/nonexistent/x.ckpt") == ATTN_ERR_ARG &&
              strcmp(attn_last_error(), "attn_cisformer_save: a kind 999 without a name of at most 31 characters") ==
                  0,
          "fail_message_quotes_itself: \"%s\"", attn_last_error());
}

/* attn_kind_register copies the row, its names and its sub-rows (the caller's may go away), refuses
   empty and over-long names and rows whose engine or flags need a sub-row or function they lack, and
   fails with a value a caller can test as negative. */
static void hardening_kind_register(void)
{
    static const attn_score_row sr = {ATTN_STAT_SUM, NULL, sq_map, NULL, NULL, sq_vjp};
    attn_score_row *heap_sr = (attn_score_row *)malloc(sizeof *heap_sr);
    char *name = (char *)malloc(32);
    attn_kind_info r = {ATTN_SOFTMAX, NULL, NULL, "A = (1 + s^2) / sum", NULL, NULL, NULL, 0, NULL, NULL, NULL};
    attn_kind k, bad;
    attn_attention_desc d;
    double err;
    int i;
    if (!heap_sr || !name) { CHECK(0, "kind_register: out of memory"); free(heap_sr); free(name); return; }
    *heap_sr = sr;
    strcpy(name, "h_square");
    r.name = name;
    r.score = heap_sr;
    k = attn_kind_register(&r);
    memset(name, 'x', 31); name[31] = 0; /* the caller's storage reused, then freed */
    memset(heap_sr, 0, sizeof *heap_sr);
    free(name); free(heap_sr);
    CHECK(k >= ATTN_KIND_COUNT && attn_kind_from_name("h_square") == (int)k && attn_kind_get(k) &&
              strcmp(attn_kind_get(k)->name, "h_square") == 0 && attn_kind_get(k)->score->vjp == sq_vjp,
          "kind_register: the row and its name copied (kind %d)", (int)k);
    memset(&d, 0, sizeof d);
    d.kind = k; d.B = 1; d.H = 2; d.Tq = 4; d.Tk = 5; d.dk = 3; d.dv = 2; d.causal = 1;
    CHECK(attn_gradcheck_attention(&d, 3, 0, 0, 0, &err) == 1, "kind_register: the copied row runs (%.3g)", err);

    r.score = &sr;
    r.name = "";
    bad = attn_kind_register(&r);
    CHECK(bad < 0 && bad == ATTN_KIND_NONE && attn_last_status() == ATTN_ERR_ARG, "kind_register: an empty name");
    r.name = "h_this_name_is_thirty_two_chars_";
    CHECK(strlen(r.name) == 32 && attn_kind_register(&r) < 0, "kind_register: a name a checkpoint cannot hold");
    r.name = "h_code"; r.code_name = "";
    CHECK(attn_kind_register(&r) < 0, "kind_register: an empty code name");
    r.code_name = NULL;
    {   /* built-in rows with a part taken away: each engine's sub-row, flags, and mixed engines */
        static const attn_kind base[6] = {ATTN_HYLA, ATTN_KERNEL, ATTN_SOFTMAX, ATTN_DIFFERENTIAL, ATTN_SOFTMAX,
                                          ATTN_SOFTMAX};
        attn_kind_info c[6];
        for (i = 0; i < 6; i++) {
            c[i] = *attn_kind_get(base[i]);
            c[i].code_name = NULL;
        }
        c[0].name = "h_hyla_no_mix"; c[0].mix = NULL;
        c[1].name = "h_kernel_no_feature"; c[1].feature = NULL;
        c[2].name = "h_softmax_no_score"; c[2].score = NULL; /* the tiled engine named, no score row */
        c[3].name = "h_diff_no_flags"; c[3].flags = 0;     /* the stats would be sized as one float a row */
        c[4].name = "h_mixed_engines"; c[4].backward = attn_kind_get(ATTN_KERNEL)->backward;
        c[5] = *attn_kind_get(ATTN_SOFTMAX); c[5].name = "h_mix_flag_no_mix"; c[5].flags |= ATTN_KF_MIXES_HEADS;
        for (i = 0; i < 6; i++) {
            attn_clear_error();
            bad = attn_kind_register(&c[i]);
            CHECK(bad < 0 && attn_last_status() == ATTN_ERR_ARG && strstr(attn_last_error(), c[i].name) &&
                      attn_kind_from_name(c[i].name) < 0,
                  "kind_register: %s refused (\"%s\")", c[i].name, attn_last_error());
        }
    }
}

/* attn_tanh and attn_exp give an entry the same value wherever it sits in the array (a vector lane
   or the tail), so tanh stays odd to the bit in every build (-ffast-math's reciprocal included). */
static void hardening_vector_tail(void)
{
    attn_float x[19], y[19], z[19];
    int i, same_tanh = 1, same_exp = 1;
    for (i = 0; i < 19; i++) x[i] = (attn_float)(-12 + 1.37 * i);
    attn_tanh(19, x, y); /* each value in the array against alone (the tail of a 1-entry array) */
    for (i = 0; i < 19; i++) attn_tanh(1, x + i, z + i), same_tanh = same_tanh && y[i] == z[i];
    attn_exp(19, x, y);
    for (i = 0; i < 19; i++) attn_exp(1, x + i, z + i), same_exp = same_exp && y[i] == z[i];
    x[0] = 12; x[1] = -12;
    attn_tanh(1, x, y); attn_tanh(1, x + 1, y + 1);
    CHECK(same_tanh && same_exp && y[0] == -y[1], "vector_tail: tanh %d, exp %d, tanh(12) %.9g, tanh(-12) %.9g",
          same_tanh, same_exp, (double)y[0], (double)y[1]);
}

/* The KV cache: a length near INT_MAX is refused (its capacity check overflowed), and so is a cache
   set up for another model whose cache has as many rows (it passed every check and overran the
   heap), or one whose fields were changed; nothing is written. */
static void hardening_kv_cache(void)
{
    attn_transformer_config ca, cb;
    attn_transformer a, b;
    attn_transformer_kv kv, keep;
    attn_rng r;
    attn_float logits[4 * 8], before[4 * 8];
    int tok[4] = {1, 2, 3, 0}, i, ok;
    size_t kb, db;
    void *mem, *work;
    memset(&ca, 0, sizeof ca);
    ca.vocab = 5; ca.d = 8; ca.layers = 1; ca.heads = 2; ca.dk = 4; ca.dv = 4; ca.mlp = 8; ca.max_T = 16;
    ca.out = 5; ca.eps = (attn_float)1e-5; ca.act = ATTN_ACT_GELU_TANH; ca.bias = 1; ca.causal = 1;
    cb = ca;
    cb.layers = 3; cb.kinds[1] = cb.kinds[2] = ATTN_SOFTMAX;
    attn_rng_seed(&r, 5, 5);
    if (attn_transformer_init(&a, &ca, &r) != ATTN_OK || attn_transformer_init(&b, &cb, &r) != ATTN_OK) {
        CHECK(0, "kv_cache: init: %s", attn_last_error());
        return;
    }
    kb = attn_transformer_kv_bytes(&a, 16);
    db = attn_transformer_decode_work_bytes(&b, 4, 16);
    mem = malloc(kb); work = malloc(db);
    ok = mem && work && attn_transformer_kv_init(&kv, &a, 16, mem, kb) == ATTN_OK;
    CHECK(ok, "kv_cache: init: %s", attn_last_error());
    for (i = 0; i < 32; i++) before[i] = logits[i] = (attn_float)i;
    keep = kv;
    for (i = 0; ok && i < 5; i++) {
        attn_status want = i == 0 ? ATTN_ERR_SHAPE : ATTN_ERR_ARG, got;
        const attn_transformer *m = i == 1 ? &b : &a;
        kv = keep;
        if (i == 0) kv.len = INT_MAX - 1;
        if (i == 2) kv.first = -100;
        if (i == 3) kv.at = -1;
        if (i == 4) kv.rows = 2; /* rows that do not match the layout */
        attn_clear_error();
        got = attn_transformer_decode(m, &kv, logits, tok, 4, work, db);
        CHECK(got == want && attn_last_error()[0] && memcmp(logits, before, sizeof logits) == 0,
              "kv_cache: case %d (%s) gives %d, expected %d: %s", i,
              i == 0 ? "len near INT_MAX" : i == 1 ? "another model's cache" : i == 2 ? "first < 0"
              : i == 3 ? "at < 0" : "rows changed", (int)got, (int)want, attn_last_error());
    }
    kv = keep;
    CHECK(ok && attn_transformer_decode(&a, &kv, logits, tok, 4, work, db) == ATTN_OK && kv.len == 4,
          "kv_cache: the cache's own model decodes: %s", attn_last_error());
    free(mem); free(work);
    attn_transformer_free(&a); attn_transformer_free(&b);
}

/* attn_gradcheck_params: a loss that turns NaN after the first call (at a moved entry) is an error,
   not a failed check; a NaN or negative step or tolerance and a negative count are refused instead
   of taking the defaults. */
static attn_params gc_p;
static int gc_calls, gc_nan_after;
static double gc_loss(void *ctx, int backward)
{
    double L = 0;
    int i;
    (void)ctx;
    for (i = 0; i < 3; i++) {
        L += (double)gc_p.data[i] * gc_p.data[i];
        if (backward) gc_p.gdata[i] += 2 * gc_p.data[i];
    }
    return ++gc_calls > gc_nan_after ? NAN : L;
}

static void hardening_gradcheck_params(void)
{
    static const attn_param_desc desc[1] = {{"x", 1, {3}, -1, ATTN_PARAM_CONST, 0.5}};
    static const struct { double h, tol; int max; } bad[4] = {{-1e-3, 0, 0}, {0, -1, 0}, {0, 0, -2}, {1, 0, 0}};
    double err;
    int i, res;
    if (attn_params_init(&gc_p, desc, 1) != ATTN_OK) { CHECK(0, "gradcheck_params: init"); return; }
    gc_p.data[0] = 0.5f; gc_p.data[1] = -1; gc_p.data[2] = 2;
    gc_nan_after = 1 << 30;
    CHECK(attn_gradcheck_params(&gc_p, gc_loss, NULL, 1, 0, 0, 0, &err) == 1, "gradcheck_params: a right gradient");
    gc_calls = 0; gc_nan_after = 1;
    attn_clear_error();
    res = attn_gradcheck_params(&gc_p, gc_loss, NULL, 1, 0, 0, 0, &err);
    CHECK(res == -1 && strstr(attn_last_error(), "not finite"), "gradcheck_params: NaN after the first call gives %d (%s)",
          res, attn_last_error());
    gc_nan_after = 1 << 30;
    for (i = 0; i < 5; i++) {
        double h = i < 4 ? bad[i].h : 0, tol = i < 4 ? bad[i].tol : 0;
        if (i == 3) h = NAN;
        if (i == 4) tol = NAN;
        attn_clear_error();
        res = attn_gradcheck_params(&gc_p, gc_loss, NULL, 1, h, tol, i < 4 ? bad[i].max : 0, &err);
        CHECK(res == -1 && attn_last_status() == ATTN_ERR_ARG, "gradcheck_params: bad argument %d gives %d", i, res);
    }
    attn_params_free(&gc_p);
}

void test_hardening(void)
{
    hardening_fail_message_quotes_itself();
    hardening_kind_register();
    hardening_vector_tail();
    hardening_kv_cache();
    hardening_gradcheck_params();
}
