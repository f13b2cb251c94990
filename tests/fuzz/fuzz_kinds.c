/* Fuzz target: attn_kind_register on rows a careless or hostile caller could write (a built-in row
   with parts taken away or swapped, names of any bytes and length, any flags, statistic and mix
   enums, sub-rows with NULL functions), then attention forward and backward through every row it
   accepts. A refused row must leave a message and no kind; an accepted one must run. The table of
   registered kinds is emptied before each input (this file is the implementation's unit). */
#define ATTN_IMPLEMENTATION
#include "../../attn.h"
#include "fuzz.h"
#include "../sq_row.h"
#include <string.h>

static void id_exponent(size_t n, const attn_float *s, const attn_float *vis, attn_float *x)
{
    size_t i;
    for (i = 0; i < n; i++) x[i] = !vis || vis[i] != 0 ? s[i] : (attn_float)-3e38;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const attn_kind base[6] = {ATTN_SOFTMAX, ATTN_COG, ATTN_KERNEL, ATTN_DIFFERENTIAL, ATTN_HYLA,
                                      ATTN_HYLA_PLUS};
    fuzz_bytes b = {data, size, 0};
    int rows = 1 + (int)(fuzz_next(&b) % 4), r;
    attn__ncustom = 0;
    for (r = 0; r < rows; r++) {
        attn_kind_info row = *attn_kind_get(base[fuzz_next(&b) % 6]);
        const attn_kind_info *other = attn_kind_get(base[fuzz_next(&b) % 6]);
        attn_score_row sr;
        attn_feature_row fr;
        attn_mix_row mr;
        char name[48];
        unsigned what = fuzz_next(&b) | fuzz_next(&b) << 8, len = fuzz_next(&b) % 40, i;
        attn_kind k;
        for (i = 0; i < len; i++) name[i] = (char)(fuzz_next(&b) | 1); /* no NUL inside */
        name[len] = 0;
        row.name = name;
        row.code_name = what & 1 ? NULL : "";
        if (what & 2) row.forward = other->forward;
        if (what & 4) row.backward = NULL;
        if (what & 8) row.flags = fuzz_next(&b) & 0x3f;
        if (row.score) {
            sr = *row.score;
            if (what & 16) sr.stat = (attn_stat_kind)(fuzz_next(&b) % 5);
            if (what & 32) sr.map = NULL, sr.exponent = what & 64 ? id_exponent : NULL;
            if (what & 128) sr.map = sq_map, sr.vjp = what & 256 ? NULL : sq_vjp;
            row.score = what & 512 ? NULL : &sr;
        } else if (what & 512) {
            sr.stat = ATTN_STAT_SUM; sr.offset = NULL; sr.map = sq_map; sr.exponent = NULL; sr.sign = NULL;
            sr.vjp = sq_vjp;
            row.score = &sr;
        }
        if (row.feature) {
            fr = *row.feature;
            if (what & 1024) fr.phi = NULL;
            row.feature = what & 2048 ? NULL : &fr;
        }
        if (row.mix) {
            mr = *row.mix;
            if (what & 4096) mr.norm = (attn_mix_norm)(fuzz_next(&b) % 6), mr.value = (attn_mix_value)(fuzz_next(&b) % 6);
            row.mix = what & 8192 ? NULL : &mr;
        }
        if (what & 16384) row.workspace = other->workspace;
        attn_clear_error();
        k = attn_kind_register(&row);
        if (k < 0) {
            if (!attn_last_error()[0] || attn_last_status() != ATTN_ERR_ARG) abort();
            continue;
        }
        memset(name, 0, sizeof name); /* the caller's storage goes */
        {
            attn_attention_desc d;
            attn_float Q[2 * 6 * 4], K[2 * 6 * 4], V[2 * 6 * 4], O[2 * 6 * 4], dO[2 * 6 * 4], st[2 * 6 * 16];
            attn_float dQ[2 * 6 * 4], dK[2 * 6 * 4], dV[2 * 6 * 4], w2[2 * 4 * 4], lam[4 * 2];
            attn_attention_grads g;
            size_t wb;
            void *work;
            memset(&d, 0, sizeof d);
            d.kind = k; d.B = 1; d.H = 2; d.Tq = d.Tk = 6; d.dk = d.dv = 4; d.causal = (int)(fuzz_next(&b) & 1);
            d.w2 = w2; d.lambda = lam;
            for (i = 0; i < 48; i++) Q[i] = K[i] = V[i] = dO[i] = (attn_float)((int)(i % 7) - 3) / 4;
            for (i = 0; i < 32; i++) w2[i] = (attn_float)0.1;
            for (i = 0; i < 8; i++) lam[i] = (attn_float)0.05;
            memset(&g, 0, sizeof g);
            memset(dQ, 0, sizeof dQ); memset(dK, 0, sizeof dK); memset(dV, 0, sizeof dV);
            g.dQ = dQ; g.dK = dK; g.dV = dV;
            if (attn_attention_stats_floats(&d) > sizeof st / sizeof st[0]) abort(); /* the row's flags are sound */
            wb = attn_attention_workspace(&d);
            if (!wb || !(work = malloc(wb))) continue;
            if (attn_attention_forward(&d, O, st, NULL, Q, K, V, work, wb) == ATTN_OK)
                attn_attention_backward(&d, &g, dO, Q, K, V, O, st, work, wb);
            free(work);
        }
    }
    return 0;
}
