/* Fuzz target: the KV cache and sampling with hostile lengths and buffers. A small causal transformer
   (its layers, heads, kinds, window and positions from the input) gets a cache of any capacity in
   a buffer of any size, is decoded with fields of the cache changed to any value (len, at, first,
   rows, cap, the layout), tokens out of range and work buffers that are too small, and its logits
   are sampled with any temperature, top-k and top-p. Every call must succeed or refuse with a
   message; no call may read or write outside its buffers (ASan). */
#define ATTN_IMPLEMENTATION
#include "../../attn.h"
#include "fuzz.h"
#include <string.h>

static int next32(fuzz_bytes *b) { return (int)(fuzz_next(b) | fuzz_next(b) << 8 | fuzz_next(b) << 16 | (unsigned)fuzz_next(b) << 24); }

static void refused_or_ok(attn_status s)
{
    if (s != ATTN_OK && !attn_last_error()[0]) abort(); /* a refusal says why */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const attn_kind kinds[6] = {ATTN_SOFTMAX, ATTN_EXPRESSIVE, ATTN_COG, ATTN_KERNEL, ATTN_TAYLOR,
                                       ATTN_DIFFERENTIAL};
    fuzz_bytes b = {data, size, 0};
    attn_transformer_config c;
    attn_transformer m;
    attn_transformer_kv kv;
    attn_rng r;
    int l, cap, n, step, tok[16];
    size_t kb, give, db;
    void *mem, *work;
    attn_float *logits;
    memset(&c, 0, sizeof c);
    c.vocab = 2 + (int)(fuzz_next(&b) % 8); c.out = c.vocab; c.layers = 1 + (int)(fuzz_next(&b) % 3);
    c.heads = 2; c.dk = c.dv = 4; c.d = 8; c.mlp = 8; c.max_T = 1 + (int)(fuzz_next(&b) % 24);
    c.eps = (attn_float)1e-5; c.act = ATTN_ACT_GELU_TANH; c.bias = 1; c.causal = 1;
    c.pos = fuzz_next(&b) & 1 ? ATTN_POS_ROPE : ATTN_POS_LEARNED;
    c.kv_heads = fuzz_next(&b) & 1 ? 1 : 0;
    if (fuzz_next(&b) & 1) c.window = 1 + (int)(fuzz_next(&b) % 4), c.global = (int)(fuzz_next(&b) % 3);
    for (l = 0; l < c.layers; l++) c.kinds[l] = kinds[fuzz_next(&b) % 6];
    attn_rng_seed(&r, 1, 1);
    if (attn_transformer_init(&m, &c, &r) != ATTN_OK) return 0; /* a configuration the model refuses */
    cap = (int)(fuzz_next(&b) % 40) - 4;
    kb = attn_transformer_kv_bytes(&m, cap);
    give = kb ? kb - (fuzz_next(&b) % 3 == 0 ? fuzz_next(&b) % 64 : 0) : 64; /* sometimes too small */
    mem = malloc(give ? give : 1);
    n = 1 + (int)(fuzz_next(&b) % 16);
    db = attn_transformer_decode_work_bytes(&m, n, cap > 0 ? cap : 1);
    work = malloc(db ? db : 1);
    logits = (attn_float *)calloc((size_t)16 * (size_t)c.out, sizeof *logits);
    if (mem && work && logits) {
        attn_clear_error();
        refused_or_ok(attn_transformer_kv_init(&kv, &m, cap, mem, give));
        for (step = 0; step < 6 && attn_last_status() == ATTN_OK && b.at < b.n; step++) {
            unsigned what = fuzz_next(&b);
            int i, k = n;
            for (i = 0; i < 16; i++) tok[i] = (int)(fuzz_next(&b) % (unsigned)(c.vocab + 1)) - (what & 1 ? 1 : 0);
            if (what & 2) kv.len = next32(&b);
            if (what & 4) kv.at = next32(&b);
            if (what & 8) kv.first = next32(&b);
            if (what & 16) kv.rows = next32(&b);
            if (what & 32) kv.cap = next32(&b);
            if (what & 64) kv.layout ^= (uint64_t)fuzz_next(&b) << (fuzz_next(&b) % 56);
            if (what & 128) k = (int)(fuzz_next(&b) % 20) - 2;
            attn_clear_error();
            if (k >= 1 && k <= 16) {
                attn_status s = attn_transformer_decode(&m, &kv, logits, tok, k, work, db);
                refused_or_ok(s);
                if (s == ATTN_OK) {
                    double temp = (double)(int)(fuzz_next(&b) % 8) - 1, top_p = (double)fuzz_next(&b) / 200;
                    int t = attn_sample(logits + (size_t)(k - 1) * c.out, c.out, temp, (int)(fuzz_next(&b) % 12) - 2,
                                        top_p, &r);
                    if (t >= c.out || (t < 0 && !attn_last_error()[0])) abort();
                }
                attn_clear_error();
            }
        }
    }
    free(mem); free(work); free(logits);
    attn_transformer_free(&m);
    return 0;
}
