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
static int gc_calls, gc_nan_after, gc_abs; /* gc_abs: L = sum |x| with gradient gc_abs sign(x) */
static double gc_loss(void *ctx, int backward)
{
    double L = 0;
    int i;
    (void)ctx;
    for (i = 0; i < 3; i++) {
        double x = gc_p.data[i];
        L += gc_abs ? fabs(x) : x * x;
        if (backward) gc_p.gdata[i] += (attn_float)(gc_abs ? gc_abs * (x < 0 ? -1 : 1) : 2 * x);
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
    /* a kink: |x| at x = 0.003 with h = 0.01 (the central difference 0.3, the right one 1): counted as
       one, not as an error; a wrong gradient (2 sign x) still fails */
    gc_p.data[0] = 0.003f;
    gc_abs = 1;
    res = attn_gradcheck_params(&gc_p, gc_loss, NULL, 1, 1e-2, 1e-3, 0, &err);
    CHECK(res == 1 && attn_gradcheck_kinks() == 1, "gradcheck_params: |x| near its kink passes (%d, error %.3g) "
          "with one kink counted (%d)", res, err, attn_gradcheck_kinks());
    gc_abs = 2;
    res = attn_gradcheck_params(&gc_p, gc_loss, NULL, 1, 1e-2, 1e-3, 0, &err);
    CHECK(res == 0 && attn_gradcheck_kinks() == 0, "gradcheck_params: a wrong gradient at the kink fails (%d, %d kinks)",
          res, attn_gradcheck_kinks());
    gc_abs = 0;
    attn_params_free(&gc_p);
}


/* A safetensors file in memory: JSON header h, then nd bytes of data (zeros); its bytes in *n. */
static unsigned char *st_file(const char *h, size_t nd, size_t *n)
{
    size_t hn = strlen(h);
    unsigned char *b = (unsigned char *)calloc(8 + hn + nd + 1, 1);
    int i;
    for (i = 0; i < 8; i++) b[i] = (unsigned char)((uint64_t)hn >> (8 * i));
    memcpy(b + 8, h, hn);
    *n = 8 + hn + nd;
    return b;
}

/* safetensors: the fixture written by Hugging Face's library (tests/data/make_safetensors.py: F32,
   F16 with a subnormal, BF16 with an Inf, F64, I64, I8, U16, a scalar, 4-D, an escaped non-ASCII
   name, metadata) read value for value; a save read back bit for bit; 33 hostile headers, every
   truncation and every header bit flip refused (or read) without a crash, st untouched; get and
   save refuse with the tensor's name. */
/* A transformer checkpoint of format 1 whose layer count is INT_MAX (the fuzzer's find): refused,
   without the tail's word count overflowing int (UBSan in test-sanitize). */
static void hardening_layers_intmax(void)
{
    attn_transformer m;
    attn_status s = attn_transformer_load(&m, "tests/fuzz/corpus/loaders/found-layers-intmax");
    CHECK(s != ATTN_OK, "a checkpoint with INT_MAX layers is refused: %s", attn_last_error());
}

static void hardening_safetensors(void)
{
    static const char *bad[] = {
        "[]", "{", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}", /* not an object, unterminated */
        "{\"a\":{\"dtype\":\"F12\",\"shape\":[4],\"data_offsets\":[0,4]}}",                 /* no such dtype */
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1],\"data_offsets\":[0,4]}}",         /* 5 dimensions */
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[01],\"data_offsets\":[0,4]}}",                /* a leading zero */
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}",
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[1.0],\"data_offsets\":[0,4]}}",
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[1e0],\"data_offsets\":[0,4]}}",
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}",                 /* bytes != shape */
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}",
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}}",
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}",
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}",                                        /* a key missing */
        "{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", /* twice */
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1}}",         /* unknown key */
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
        "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",                 /* a name twice */
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
        "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",                 /* overlap */
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",                 /* a hole */
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}} x",               /* bytes after it */
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},}",                /* a trailing comma */
        "{\"__metadata__\":{\"k\":1},\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
        "{\"__metadata__\":{},\"__metadata__\":{},\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
        "{\"\\ud800\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",           /* a lone surrogate */
        "{\"\\u0000\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",           /* a NUL */
        "{\"a\tb\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",             /* a raw tab */
        "{\"a\\q\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",             /* a bad escape */
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[9007199254740992],\"data_offsets\":[0,4]}}",  /* 2^53 */
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,4]}}",
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",                 /* data short: 3 */
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",                 /* data long: 5 */
        "", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",             /* empty; a long name */
    };
    attn_safetensors st, keep;
    attn_float out[24], vals[12];
    int64_t sh[4] = {3, 4, 0, 0};
    size_t n, i, k, flips = 0, read = 0;
    unsigned char *b;
    int ok, fails = 0;
    char longname[300];
    /* the fixture */
    CHECK(attn_safetensors_load(&st, "tests/data/mixed.safetensors") == ATTN_OK, "safetensors fixture: %s", attn_last_error());
    if (st.owned) {
        const attn_st_tensor *t = attn_safetensors_find(&st, "scalar");
        static const double f16[6] = {0.5, -2.0, 65504.0, 6.103515625e-05, 5.9604644775390625e-08, 0};
        CHECK(st.count == 10 && t && t->ndim == 0 && t->count == 1, "safetensors: 10 tensors, a scalar");
        ok = attn_safetensors_get(&st, "ids", out, 2, (const int64_t[]){1, 4}) == ATTN_OK && out[0] == 0 && out[1] == 1 &&
             out[2] == -3 && out[3] == (attn_float)1099511627776.0;
        ok &= attn_safetensors_get(&st, "i8", out, 1, (const int64_t[]){2}) == ATTN_OK && out[0] == -128 && out[1] == 127;
        ok &= attn_safetensors_get(&st, "u16", out, 1, (const int64_t[]){1}) == ATTN_OK && out[0] == 65535;
        CHECK(ok, "safetensors: I64, I8 and U16 as attn_float (signed from their top bit)");
        ok = attn_safetensors_get(&st, "f16", out, 1, (const int64_t[]){6}) == ATTN_OK;
        for (i = 0; i < 6; i++) ok &= out[i] == (attn_float)f16[i];
        CHECK(ok, "safetensors: F16 values (normal, max, min normal, subnormal) exact");
        ok = attn_safetensors_get(&st, "bf16", out, 1, (const int64_t[]){4}) == ATTN_OK;
        {
            float inf = (float)1e30 * (float)1e30; /* +Inf: compared as bits (-ffast-math folds isinf) */
            attn_float want = (attn_float)inf;
            CHECK(ok && out[0] == 1 && out[1] == -3 && !memcmp(&out[2], &want, sizeof want) && out[3] == 0,
                  "safetensors: BF16 1, -3, +Inf, 0");
        }
        ok = attn_safetensors_get(&st, "f64", out, 1, (const int64_t[]){2}) == ATTN_OK;
        CHECK(ok && out[0] == (attn_float)(1.0 / 3) && out[1] == (attn_float)-1e-3, "safetensors: F64 rounded to attn_float");
        ok = attn_safetensors_get(&st, "layer.0.w", out, 2, sh) == ATTN_OK;
        for (i = 0; i < 12; i++) ok &= out[i] == (attn_float)((double)i / 8 - 0.5);
        CHECK(ok, "safetensors: F32 [3, 4]");
        ok = attn_safetensors_get(&st, "t4", out, 4, (const int64_t[]){1, 2, 3, 4}) == ATTN_OK && out[23] == 11;
        CHECK(ok, "safetensors: a 4-D tensor");
        CHECK(attn_safetensors_find(&st, "q\"\xc3\xa9") != NULL, "safetensors: a name escaped as q\\\"\\u00e9 reads as UTF-8");
        CHECK(attn_safetensors_meta(&st, "note") && !strcmp(attn_safetensors_meta(&st, "note"), "tab\there") &&
                  !attn_safetensors_meta(&st, "nope"), "safetensors: metadata");
        sh[0] = 4; sh[1] = 3;
        CHECK(attn_safetensors_get(&st, "layer.0.w", out, 2, sh) == ATTN_ERR_SHAPE && strstr(attn_last_error(), "layer.0.w") &&
                  strstr(attn_last_error(), "[3, 4]"), "safetensors: a wrong shape names the tensor and its shape: %s", attn_last_error());
        CHECK(attn_safetensors_get(&st, "nope", out, 0, NULL) == ATTN_ERR_ARG && strstr(attn_last_error(), "nope"),
              "safetensors: a missing tensor is named");
        attn_safetensors_free(&st);
    }
    /* a save read back */
    {
        attn_tensor t[2];
        const char *names[2] = {"w \"1\"\n", "b"}, *meta[2] = {"k", "v\\"}, *dup[2] = {"b", "b"};
        for (i = 0; i < 12; i++) vals[i] = (attn_float)(i * 0.37 - 1.1);
        t[0].data = vals; t[0].ndim = 2; t[0].shape[0] = 3; t[0].shape[1] = 4;
        t[1].data = vals + 5; t[1].ndim = 1; t[1].shape[0] = 2;
        ok = attn_safetensors_save("build/t_st.safetensors", names, t, 2, meta, 1) == ATTN_OK &&
             attn_safetensors_load(&st, "build/t_st.safetensors") == ATTN_OK;
        CHECK(ok, "safetensors: save and load: %s", attn_last_error());
        if (ok) {
            sh[0] = 3; sh[1] = 4;
            ok = attn_safetensors_get(&st, names[0], out, 2, sh) == ATTN_OK &&
                 attn_safetensors_get(&st, "b", out + 12, 1, (const int64_t[]){2}) == ATTN_OK;
            for (i = 0; i < 12; i++) ok &= out[i] == (attn_float)(float)vals[i];
            ok &= out[12] == (attn_float)(float)vals[5] && out[13] == (attn_float)(float)vals[6];
            CHECK(ok && !strcmp(attn_safetensors_meta(&st, "k"), "v\\") && st.tensors[0].dtype == ATTN_ST_F32,
                  "safetensors: a save reads back bit for bit (as float)");
            attn_safetensors_free(&st);
        }
        CHECK(attn_safetensors_save("build/t_st2.safetensors", dup, t, 2, NULL, 0) == ATTN_ERR_ARG, "safetensors: two tensors of one name refused");
        names[0] = "__metadata__";
        CHECK(attn_safetensors_save("build/t_st2.safetensors", names, t, 2, NULL, 0) == ATTN_ERR_ARG, "safetensors: a tensor named __metadata__ refused");
        CHECK(attn_safetensors_save("/nonexistent/dir/x.safetensors", dup, t, 1, NULL, 0) == ATTN_ERR_IO, "safetensors: an unwritable path");
    }
    /* hostile headers: refused with a message, st untouched */
    memset(longname, 'n', sizeof longname);
    longname[299] = 0;
    for (k = 0; k < sizeof bad / sizeof *bad; k++) {
        char h[512];
        size_t nd = k == sizeof bad / sizeof *bad - 4 ? 3 : k == sizeof bad / sizeof *bad - 3 ? 5 : 4;
        if (k == sizeof bad / sizeof *bad - 1) snprintf(h, sizeof h, "{\"%s\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", longname);
        else snprintf(h, sizeof h, "%s", bad[k]);
        b = st_file(h, nd, &n);
        memset(&st, 0x5a, sizeof st);
        keep = st;
        if (attn_safetensors_parse(&st, b, n) != ATTN_ERR_FORMAT || !attn_last_error()[0] || memcmp(&st, &keep, sizeof st)) {
            if (fails++ < 5) printf("  safetensors accepted or changed st on header %lu: %s\n", (unsigned long)k, h);
        }
        free(b);
    }
    CHECK(fails == 0, "safetensors: %d of %lu hostile headers accepted", fails, (unsigned long)(sizeof bad / sizeof *bad));
    /* every truncation and every bit flip of the fixture's header: refused or read, never a crash */
    {
        FILE *f = fopen("tests/data/mixed.safetensors", "rb");
        unsigned char whole[4096], *c;
        size_t len = f ? fread(whole, 1, sizeof whole, f) : 0, hl = len > 8 ? (size_t)whole[0] + 256 * whole[1] : 0;
        if (f) fclose(f);
        c = (unsigned char *)malloc(len + 1);
        for (fails = 0, i = 0; c && i < len; i++) { /* a truncated file: its own buffer, so ASan sees any over-read */
            unsigned char *t = (unsigned char *)malloc(i + 1);
            memcpy(t, whole, i);
            fails += attn_safetensors_parse(&st, t, i) != ATTN_ERR_FORMAT;
            free(t);
        }
        CHECK(fails == 0 && len > 600, "safetensors: %d of %lu truncations read", fails, (unsigned long)len);
        for (i = 8; c && i < 8 + hl; i++)
            for (k = 0; k < 8; k++, flips++) {
                memcpy(c, whole, len);
                c[i] ^= (unsigned char)(1 << k);
                if (attn_safetensors_parse(&st, c, len) == ATTN_OK) read++, attn_safetensors_free(&st);
            }
        CHECK(flips > 3000, "safetensors: %lu header bit flips parsed without a crash (%lu of them still valid)", (unsigned long)flips,
              (unsigned long)read);
        free(c);
    }
}

/* WordPiece on a small vocabulary: every step of BERT's tokenizer, cut, special tokens, bad input. */
static void hardening_wordpiece(void)
{
    static const char vocab[] = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\n,\n!\ncafe\nun\n##aff\n##able\n"
                                "\xe4\xb8\xad\n\xe1\x84\x80\n##\xe1\x85\xa1\n##\xe1\x86\xa8\na\n;\n##a\r\n##b";
    static const struct { const char *text; int lower, want[8]; } cases[] = {
        {"Hello, WORLD!", 1, {2, 5, 7, 6, 8, 3}},
        {"Caf\xc3\xa9", 1, {2, 9, 3}},                           /* precomposed: NFD, mark dropped */
        {"CAFE\xcc\x81", 1, {2, 9, 3}},                          /* a combining acute */
        {"unaffable", 1, {2, 10, 11, 12, 3}},                      /* the longest piece first */
        {"\xe4\xb8\xad\xe4\xb8\xad", 1, {2, 13, 13, 3}},          /* CJK ideographs are words */
        {"\xea\xb0\x81", 1, {2, 14, 15, 16, 3}},                  /* a Hangul syllable into its jamo */
        {"hello[MASK]world", 1, {2, 5, 4, 6, 3}},                  /* a special token read as itself */
        {"hello[mask]", 1, {2, 5, 1, 1, 1, 3}},                    /* only as written */
        {"hellox world", 1, {2, 1, 6, 3}},                         /* no split: the word is [UNK] */
        {"hel\x07lo\xe2\x80\x8b hel\xfflo", 1, {2, 5, 5, 3}},    /* BEL, ZWSP, invalid UTF-8 dropped */
        {"a\xcd\xbe" "a", 1, {2, 17, 18, 17, 3}},                 /* Greek question mark: NFD ';' */
        {"a\xe2\x80\xa8" "a\xc2\xa0" "a", 1, {2, 17, 17, 17, 3}},  /* line separator, no-break space */
        {"Hello", 0, {2, 1, 3}},                                   /* cased: no lower case */
        {"cafe\xcc\x81", 0, {2, 1, 3}},                           /* cased: the mark stays */
        {"ab", 1, {2, 17, 20, 3}},                                 /* "##b": "\r\n" line ends read */
        {"", 1, {2, 3}}};
    attn_wordpiece w, keep;
    int ids[128], n, k, i, pieces, ok;
    char text[128];
    for (k = 0; k < (int)(sizeof cases / sizeof *cases); k++) {
        int want = 0;
        while (want < 8 && (cases[k].want[want] || !want)) want++;
        if (attn_wordpiece_parse(&w, vocab, sizeof vocab - 1, cases[k].lower) != ATTN_OK) {
            CHECK(0, "wordpiece: parse: %s", attn_last_error());
            return;
        }
        n = attn_wordpiece_encode(&w, cases[k].text, strlen(cases[k].text), ids, 128, NULL);
        ok = n == want;
        for (i = 0; ok && i < n; i++) ok = ids[i] == cases[k].want[i];
        CHECK(ok, "wordpiece: case %d (\"%s\"): %d ids, the first %d", k, cases[k].text, n, n > 0 ? ids[1] : -1);
        attn_wordpiece_free(&w);
    }
    ok = attn_wordpiece_parse(&w, vocab, sizeof vocab - 1, 1) == ATTN_OK;
    n = attn_wordpiece_encode(&w, "hel\0lo", 6, ids, 128, NULL); /* a NUL inside the text: dropped */
    CHECK(ok && n == 3 && ids[1] == 5, "wordpiece: a NUL byte is dropped");
    memset(text, 'a', 101);
    n = attn_wordpiece_encode(&w, text, 100, ids, 128, &pieces); /* 100 characters: a ##a ... */
    CHECK(n == 102 && pieces == 100 && ids[1] == 17 && ids[100] == 19 && ids[101] == 3, "wordpiece: a 100-character word");
    n = attn_wordpiece_encode(&w, text, 101, ids, 128, NULL);
    CHECK(n == 3 && ids[1] == 1, "wordpiece: a 101-character word is [UNK]");
    n = attn_wordpiece_encode(&w, "hello world hello", 17, ids, 4, &pieces);
    CHECK(n == 4 && ids[1] == 5 && ids[2] == 6 && ids[3] == 3 && pieces == 3, "wordpiece: cut at max, [SEP] last");
    CHECK(attn_wordpiece_encode(&w, "x", 1, ids, 1, NULL) == -1 && attn_last_status() == ATTN_ERR_ARG,
          "wordpiece: max < 2 refused");
    CHECK(attn_wordpiece_id(&w, "hello", 5) == 5 && attn_wordpiece_id(&w, "hell", 4) == -1 &&
          !strcmp(attn_wordpiece_token(&w, 9), "cafe") && !attn_wordpiece_token(&w, 21) && !attn_wordpiece_token(&w, -1),
          "wordpiece: id and token lookups");
    attn_wordpiece_free(&w);
    ok = attn_wordpiece_parse(&w, "[UNK]\n[CLS]\n[SEP]\nx\nx", 22, 1) == ATTN_OK && attn_wordpiece_id(&w, "x", 1) == 4;
    CHECK(ok, "wordpiece: a token listed twice has the later id");
    attn_wordpiece_free(&w);
    { /* bad vocabularies: refused with the line, w untouched */
        static char big[1100];
        const char *bad[3] = {"[UNK]\n[CLS]\nx", "[UNK]\n[CLS]\n[SEP]\n\xc3\x28", big};
        memcpy(big, "[UNK]\n[CLS]\n[SEP]\n", 18);
        memset(big + 18, 'x', 1030);
        for (k = 0; k < 3; k++) {
            memset(&w, 0x5a, sizeof w);
            keep = w;
            CHECK(attn_wordpiece_parse(&w, bad[k], strlen(bad[k]), 1) == ATTN_ERR_FORMAT && !memcmp(&w, &keep, sizeof w) &&
                      strstr(attn_last_error(), k ? "line 4" : "[SEP]"),
                  "wordpiece: bad vocabulary %d refused: %s", k, attn_last_error());
        }
    }
}

void test_hardening(void)
{
    hardening_fail_message_quotes_itself();
    hardening_kind_register();
    hardening_vector_tail();
    hardening_kv_cache();
    hardening_gradcheck_params();
    hardening_layers_intmax();
    hardening_safetensors();
    hardening_wordpiece();
}
