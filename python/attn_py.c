/* The C side of the Python package (python/attn): attn.h's implementation as a shared library that
   the package loads with ctypes, plus what a ctypes binding cannot do well by itself: the layout of
   the structs it mirrors (so that it refuses a library built from another header) and a
   transformer behind one handle that owns its work memory. Built once per float type: plain
   (float) and with ATTN_DOUBLE (float64, for torch.autograd.gradcheck). */
#define ATTN_IMPLEMENTATION
#include "attn.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#if defined(_WIN32)
#define ATTNPY_EXPORT __declspec(dllexport)
#else
#define ATTNPY_EXPORT __attribute__((visibility("default")))
#endif

#define ATTNPY_OFF(T, f) offsetof(T, f)

/* sizeof(attn_float), then the sizes and field offsets of the structs the package declares, in the
   order of its _fields_ lists (python/attn/_lib.py); n: the length of the table, written first. */
ATTNPY_EXPORT size_t attnpy_layout(int i)
{
    static const size_t t[] = {
        sizeof(attn_float),
        sizeof(attn_attention_desc),
        ATTNPY_OFF(attn_attention_desc, kind), ATTNPY_OFF(attn_attention_desc, B),
        ATTNPY_OFF(attn_attention_desc, H), ATTNPY_OFF(attn_attention_desc, Tq),
        ATTNPY_OFF(attn_attention_desc, Tk), ATTNPY_OFF(attn_attention_desc, dk),
        ATTNPY_OFF(attn_attention_desc, dv), ATTNPY_OFF(attn_attention_desc, causal),
        ATTNPY_OFF(attn_attention_desc, scale), ATTNPY_OFF(attn_attention_desc, key_mask),
        ATTNPY_OFF(attn_attention_desc, segment), ATTNPY_OFF(attn_attention_desc, bias),
        ATTNPY_OFF(attn_attention_desc, window), ATTNPY_OFF(attn_attention_desc, dilation),
        ATTNPY_OFF(attn_attention_desc, global), ATTNPY_OFF(attn_attention_desc, block),
        ATTNPY_OFF(attn_attention_desc, layout), ATTNPY_OFF(attn_attention_desc, centered_literal),
        ATTNPY_OFF(attn_attention_desc, kv_heads), ATTNPY_OFF(attn_attention_desc, dropout),
        ATTNPY_OFF(attn_attention_desc, dropout_seed), ATTNPY_OFF(attn_attention_desc, dropout_mask),
        ATTNPY_OFF(attn_attention_desc, lambda), ATTNPY_OFF(attn_attention_desc, gain),
        ATTNPY_OFF(attn_attention_desc, w2), ATTNPY_OFF(attn_attention_desc, lambda_init),
        ATTNPY_OFF(attn_attention_desc, mod), ATTNPY_OFF(attn_attention_desc, kv_rows),
        sizeof(attn_attention_grads),
        ATTNPY_OFF(attn_attention_grads, dQ), ATTNPY_OFF(attn_attention_grads, dK),
        ATTNPY_OFF(attn_attention_grads, dV), ATTNPY_OFF(attn_attention_grads, dbias),
        ATTNPY_OFF(attn_attention_grads, dlambda), ATTNPY_OFF(attn_attention_grads, dgain),
        ATTNPY_OFF(attn_attention_grads, dw2),
        sizeof(attn_mod_config),
        ATTNPY_OFF(attn_mod_config, kind), ATTNPY_OFF(attn_mod_config, H),
        ATTNPY_OFF(attn_mod_config, cap), ATTNPY_OFF(attn_mod_config, buckets),
        ATTNPY_OFF(attn_mod_config, max_distance), ATTNPY_OFF(attn_mod_config, bidirectional),
        ATTNPY_OFF(attn_mod_config, mask), ATTNPY_OFF(attn_mod_config, span),
        sizeof(attn_mod),
        ATTNPY_OFF(attn_mod, fn),
        sizeof(attn_kind_info),
        ATTNPY_OFF(attn_kind_info, kind), ATTNPY_OFF(attn_kind_info, name),
        ATTNPY_OFF(attn_kind_info, code_name), ATTNPY_OFF(attn_kind_info, formula),
        ATTNPY_OFF(attn_kind_info, forward), ATTNPY_OFF(attn_kind_info, backward),
        ATTNPY_OFF(attn_kind_info, workspace), ATTNPY_OFF(attn_kind_info, flags),
    };
    size_t n = sizeof t / sizeof t[0];
    return i == 0 ? n : i > 0 && (size_t)i <= n ? t[i - 1] : 0;
}

/* attn_attention_stats_floats(d), or (size_t)-1 with the error set when d is invalid. */
ATTNPY_EXPORT size_t attnpy_attention_stats(const attn_attention_desc *d)
{
    size_t n;
    attn_clear_error();
    n = attn_attention_stats_floats(d);
    return attn_last_status() == ATTN_OK ? n : (size_t)-1;
}

/* The workspace of d from malloc (at least one byte); NULL with the error set. */
static void *attnpy_workspace(const attn_attention_desc *d, size_t *bytes)
{
    void *w;
    attn_clear_error();
    *bytes = attn_attention_workspace(d);
    if (attn_last_status() != ATTN_OK) return NULL;
    if (!(w = malloc(*bytes ? *bytes : 1))) attn_set_error(ATTN_ERR_NOMEM, "attention: out of memory for %zu "
                                                            "bytes of workspace", *bytes);
    return w;
}

/* attn_attention_forward and _backward with their workspace allocated here, one call each. */
ATTNPY_EXPORT attn_status attnpy_attention_forward(const attn_attention_desc *d, attn_float *O,
                                                   attn_float *stats, attn_float *weights, const attn_float *Q,
                                                   const attn_float *K, const attn_float *V)
{
    size_t bytes;
    void *w = attnpy_workspace(d, &bytes);
    attn_status s = w ? attn_attention_forward(d, O, stats, weights, Q, K, V, w, bytes) : attn_last_status();
    free(w);
    return s;
}

ATTNPY_EXPORT attn_status attnpy_attention_backward(const attn_attention_desc *d,
                                                    const attn_attention_grads *g, const attn_float *dO,
                                                    const attn_float *Q, const attn_float *K, const attn_float *V,
                                                    const attn_float *O, const attn_float *stats)
{
    size_t bytes;
    void *w = attnpy_workspace(d, &bytes);
    attn_status s = w ? attn_attention_backward(d, g, dO, Q, K, V, O, stats, w, bytes) : attn_last_status();
    free(w);
    return s;
}

/* A transformer loaded from an attn.h checkpoint or a Hugging Face directory (GPT-2, Llama, BERT:
   config.json and model.safetensors), with the key-value cache of its last generate call. */
typedef struct attnpy_model {
    attn_transformer m;
    void *work, *kvmem;
    size_t work_bytes, kv_bytes;
} attnpy_model;

/* NULL (the error set) when the file or directory cannot be loaded. */
ATTNPY_EXPORT attnpy_model *attnpy_model_load(const char *path)
{
    struct stat st;
    attnpy_model *h = (attnpy_model *)calloc(1, sizeof *h);
    attn_status s;
    if (!h) {
        attn_set_error(ATTN_ERR_NOMEM, "attnpy_model_load: out of memory");
        return NULL;
    }
    s = stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? attn_transformer_load_hf(&h->m, path)
                                                    : attn_transformer_load(&h->m, path);
    if (s != ATTN_OK) {
        free(h);
        return NULL;
    }
    return h;
}

ATTNPY_EXPORT void attnpy_model_free(attnpy_model *h)
{
    if (!h) return;
    attn_transformer_free(&h->m);
    free(h->work);
    free(h->kvmem);
    free(h);
}

ATTNPY_EXPORT attn_status attnpy_model_save(const attnpy_model *h, const char *path, int hf)
{
    return hf ? attn_transformer_save_hf(&h->m, path) : attn_transformer_save(&h->m, path);
}

/* The configuration's numbers the package shows: vocab, in_dim, d, layers, heads, dk, dv, mlp,
   kv_heads, max_T, out, readout, causal, then each layer's kind; returns how many were written. */
ATTNPY_EXPORT attn_status attnpy_model_pack(attnpy_model *h, int on) { return attn_transformer_pack(&h->m, on); }

ATTNPY_EXPORT int attnpy_model_info(const attnpy_model *h, int *v, int n)
{
    const attn_transformer_config *c = &h->m.cfg;
    int w[13 + ATTN_MAX_LAYERS], k = 0, l;
    w[k++] = c->vocab, w[k++] = c->in_dim, w[k++] = c->d, w[k++] = c->layers, w[k++] = c->heads;
    w[k++] = c->dk, w[k++] = c->dv, w[k++] = c->mlp, w[k++] = c->kv_heads, w[k++] = c->max_T;
    w[k++] = c->out, w[k++] = c->readout, w[k++] = c->causal;
    for (l = 0; l < c->layers; l++) w[k++] = (int)c->kinds[l];
    if (n > k) n = k;
    memcpy(v, w, (size_t)n * sizeof *v);
    return n;
}

/* The model's work memory grown to at least bytes (kept for the next call). */
static void *attnpy_work(attnpy_model *h, size_t bytes)
{
    if (bytes > h->work_bytes) {
        void *p = malloc(bytes);
        if (!p) {
            attn_set_error(ATTN_ERR_NOMEM, "attnpy: out of memory for %zu bytes of work", bytes);
            return NULL;
        }
        free(h->work);
        h->work = p, h->work_bytes = bytes;
    }
    return h->work;
}

/* y [B, R, out] from tokens [B, T] (x NULL) or dense inputs x [B, T, in_dim] (tokens NULL), as
   attn_transformer_forward; the cache is part of the work. */
ATTNPY_EXPORT attn_status attnpy_model_forward(attnpy_model *h, attn_float *y, const int *tokens,
                                               const attn_float *x, int B, int T)
{
    size_t cache, work;
    char *mem;
    if (B < 1 || T < 1 || T > h->m.cfg.max_T)
        return attn_set_error(ATTN_ERR_SHAPE, "forward: B %d, T %d (1 .. max_T %d)", B, T, h->m.cfg.max_T);
    cache = attn_transformer_cache_floats(&h->m, B, T) * sizeof(attn_float);
    cache = (cache + ATTN_ALIGN - 1) / ATTN_ALIGN * ATTN_ALIGN;
    work = attn_transformer_work_bytes(&h->m, B, T);
    if (!(mem = (char *)attnpy_work(h, cache + work))) return ATTN_ERR_NOMEM;
    return attn_transformer_forward(&h->m, y, (attn_float *)mem, cache / sizeof(attn_float), tokens, x, B, T, mem + cache, work);
}

/* Appends steps tokens to prompt [n] (n >= 1), out [steps], each drawn by attn_sample from the
   logits of everything before it (temperature 0: greedy), through the key-value cache. */
ATTNPY_EXPORT attn_status attnpy_model_generate(attnpy_model *h, int *out, const int *prompt, int n,
                                                int steps, double temperature, int top_k, double top_p,
                                                uint64_t seed)
{
    attn_transformer_kv kv;
    attn_rng rng;
    attn_float *logits;
    size_t kvb, work, lb;
    char *mem;
    int cap = n + (steps > 0 ? steps - 1 : 0), V = h->m.cfg.out, i, tok; /* the last token is not fed */
    attn_status s;
    if (n < 1 || steps < 0 || n > h->m.cfg.max_T || steps > h->m.cfg.max_T || cap > h->m.cfg.max_T)
        return attn_set_error(ATTN_ERR_SHAPE, "generate: %d prompt tokens + %d steps (prompt >= 1, "
                              "prompt + steps - 1 <= max_T %d)", n, steps, h->m.cfg.max_T);
    kvb = attn_transformer_kv_bytes(&h->m, cap);
    work = attn_transformer_decode_work_bytes(&h->m, n, cap);
    if (!kvb || !work) return attn_last_status();
    lb = ((size_t)n * (size_t)V * sizeof(attn_float) + ATTN_ALIGN - 1) / ATTN_ALIGN * ATTN_ALIGN;
    if (kvb > h->kv_bytes) {
        void *p = malloc(kvb);
        if (!p) return attn_set_error(ATTN_ERR_NOMEM, "generate: out of memory for the cache");
        free(h->kvmem);
        h->kvmem = p, h->kv_bytes = kvb;
    }
    if (!(mem = (char *)attnpy_work(h, lb + work))) return ATTN_ERR_NOMEM;
    logits = (attn_float *)mem;
    if ((s = attn_transformer_kv_init(&kv, &h->m, cap, h->kvmem, kvb)) != ATTN_OK) return s;
    attn_rng_seed(&rng, seed, 0);
    for (i = 0; i < steps; i++) {
        const int *in = i == 0 ? prompt : &out[i - 1];
        int m = i == 0 ? n : 1;
        if ((s = attn_transformer_decode(&h->m, &kv, logits, in, m, mem + lb, work)) != ATTN_OK) return s;
        if ((tok = attn_sample(logits + (size_t)(m - 1) * V, V, temperature, top_k, top_p, &rng)) < 0)
            return attn_last_status();
        out[i] = tok;
    }
    return ATTN_OK;
}
