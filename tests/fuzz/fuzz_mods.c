/* Fuzz target: attn_mod_init on configurations a careless or hostile caller could write (any kind,
   heads, cap, buckets, distance, direction, mask and span, parameters given or not), then attention
   forward and backward with the modifier on shapes from the input (sometimes more heads than it was
   made for), directly or through an attn_block_mask table. A refused configuration must leave a
   message and the attn_mod untouched; a refused call a message; an accepted call must run and give
   finite outputs and gradients. */
#define ATTN_IMPLEMENTATION
#include "../../attn.h"
#include "fuzz.h"
#include <limits.h>
#include <string.h>

static int finite_all(const attn_float *x, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (!(x[i] - x[i] == 0)) return 0;
    return 1;
}

enum { MB = 2, MH = 4, MT = 40, MD = 8, MN = MB * MH * MT * MD, MW = 4 * 70 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const attn_kind kinds[4] = {ATTN_SOFTMAX, ATTN_EXPRESSIVE, ATTN_COG, ATTN_SIGMOID};
    static attn_float Q[MN], K[MN], V[MN], O[MN], dO[MN], dQ[MN], dK[MN], dV[MN], st[2 * MB * MH * MT];
    static attn_float w[MW], dw[MW];
    static attn_mod m, before;
    fuzz_bytes b = {data, size, 0};
    attn_mod_config c;
    attn_attention_desc d;
    attn_attention_grads g;
    attn_block_mask bm;
    attn_status s;
    size_t i, wb, n;
    void *work;
    int table;
    memset(&c, 0, sizeof c);
    c.kind = (attn_mod_kind)((int)(fuzz_next(&b) % 7) - 1);
    c.H = (int)(fuzz_next(&b) % 6) - 1;
    c.cap = (attn_float)((int)fuzz_next(&b) - 64) / 8;
    c.buckets = (int)(fuzz_next(&b) % 72) - 2;
    c.max_distance = (int)((fuzz_next(&b) | fuzz_next(&b) << 8) % 5000) - 10;
    c.bidirectional = (int)(fuzz_next(&b) & 1);
    c.mask = (attn_mask_kind)((int)(fuzz_next(&b) % 5) - 1);
    c.span = (int)(fuzz_next(&b) % 50) - 3;
    if (c.span == 46) c.span = INT_MAX; /* no overflow in the block answers */
    for (i = 0; i < MW; i++) w[i] = (attn_float)((int)(i % 9) - 4) / 4, dw[i] = 0;
    memset(&m, 0xA5, sizeof m);
    before = m;
    attn_clear_error();
    n = attn_mod_params(&c);
    if (n > MW) abort(); /* the sizes above hold every accepted configuration */
    s = attn_mod_init(&m, &c, fuzz_next(&b) % 8 ? w : NULL, fuzz_next(&b) & 1 ? dw : NULL);
    if (s != ATTN_OK) {
        if (!attn_last_error()[0] || memcmp(&m, &before, sizeof m)) abort();
        return 0;
    }
    memset(&d, 0, sizeof d);
    d.kind = kinds[fuzz_next(&b) % 4];
    d.B = 1 + (int)(fuzz_next(&b) % MB);
    d.H = 1 + (int)(fuzz_next(&b) % MH);
    d.Tk = 1 + (int)(fuzz_next(&b) % MT);
    d.Tq = 1 + (int)(fuzz_next(&b) % (unsigned)d.Tk);
    d.dk = d.dv = 1 + (int)(fuzz_next(&b) % MD);
    d.causal = (int)(fuzz_next(&b) & 1);
    d.mod = &m.fn;
    table = m.fn.mask && (fuzz_next(&b) & 1);
    if (table) {
        int tb = fuzz_next(&b) & 1 ? 1 : d.B, th = fuzz_next(&b) & 1 ? 1 : d.H;
        if (attn_block_mask_build(&bm, &m.fn, tb, th, d.Tq, d.Tk, 1 + (int)(fuzz_next(&b) % 16)) != ATTN_OK)
            abort(); /* within its limits: it must build */
        d.mod = &bm.fn;
    }
    n = (size_t)d.B * d.H * d.Tq * d.dv;
    for (i = 0; i < MN; i++) {
        Q[i] = (attn_float)((int)(i % 7) - 3) / 3;
        K[i] = (attn_float)((int)(i % 5) - 2) / 2;
        V[i] = dO[i] = (attn_float)((int)(i % 11) - 5) / 5;
        dQ[i] = dK[i] = dV[i] = 0;
    }
    attn_clear_error();
    wb = attn_attention_workspace(&d);
    if ((c.kind || c.mask) && d.H > c.H && wb) abort(); /* more heads than the modifier has: refused */
    if (!wb) {
        if (!attn_last_error()[0]) abort();
    } else if ((work = malloc(wb)) != NULL) {
        memset(&g, 0, sizeof g);
        g.dQ = dQ; g.dK = dK; g.dV = dV;
        if (attn_attention_forward(&d, O, st, NULL, Q, K, V, work, wb) != ATTN_OK || !finite_all(O, n) ||
            attn_attention_backward(&d, &g, dO, Q, K, V, O, st, work, wb) != ATTN_OK ||
            !finite_all(dQ, (size_t)d.B * d.H * d.Tq * d.dk) || !finite_all(dK, (size_t)d.B * d.H * d.Tk * d.dk) ||
            !finite_all(dV, (size_t)d.B * d.H * d.Tk * d.dv))
            abort();
        free(work);
    }
    if (table) attn_block_mask_free(&bm);
    return 0;
}
