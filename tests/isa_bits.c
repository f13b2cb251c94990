/* Prints the kernels' ISA and a hash of attn_gemm's results over shapes that take each of its paths
   (small, short, few rows, packed, C-resident; every transpose; alpha and beta) and of the vector
   primitives' (attn_dot, _axpy, _scale, _max, _exp, _tanh, _sum, every length to 70) and of the
   fused attention forward (softmax, Cog and EA, causal and cross: O and the stats), of the tiled
   engine's forward and backward (softmax, Cog, EA, sigmoid), of the norms, activations, RoPE and
   AdamW (forward and backward), so that two
   builds can be compared bit for bit: tests/run.sh checks that a build for x86-64's baseline, its
   ISA chosen at run time (ATTN_SIMD), gives the bits of a build for that ISA alone.
     cc -O2 -I. tests/isa_bits.c -lm && ATTN_SIMD=avx2 ./a.out      prints "avx2 <hash>" */
#define ATTN_IMPLEMENTATION
#include "attn.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_floats(uint64_t h, const float *x, size_t n)
{
    const unsigned char *b = (const unsigned char *)x;
    size_t i;
    for (i = 0; i < n * sizeof(float); i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

int main(int argc, char **argv)
{
    static const int shapes[][3] = {{16, 16, 16}, {36, 4, 36}, {36, 36, 4}, {7, 300, 64}, {64, 64, 64},
                                    {100, 130, 70}, {8, 1024, 64},  {256, 256, 256}, {130, 64, 1100},
                                    {600, 520, 2100}, {2, 3000, 5}};
    uint64_t h = 14695981039346656037ull;
    attn_rng r;
    int s, t;
    if (argc > 1) {
        printf("usage: %s\n  prints the kernels' ISA and a hash of their results (see the source)\n", argv[0]);
        return 0;
    }
    attn_rng_seed(&r, 7, 0);
    for (s = 0; s < (int)(sizeof shapes / sizeof shapes[0]); s++)
        for (t = 0; t < 4; t++) {
            int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2], ta = t & 1, tb = t >> 1;
            size_t i, na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
            float *A = malloc(na * 4), *B = malloc(nb * 4), *C = malloc(nc * 4);
            if (!A || !B || !C) return 1;
            for (i = 0; i < na; i++) A[i] = (float)attn_rng_normal(&r, 0, 1);
            for (i = 0; i < nb; i++) B[i] = (float)attn_rng_normal(&r, 0, 1);
            for (i = 0; i < nc; i++) C[i] = (float)attn_rng_normal(&r, 0, 1);
            attn_gemm(ta, tb, M, N, K, 1, A, ta ? M : K, B, tb ? K : N, 0, C, N);
            h = hash_floats(h, C, nc);
            attn_gemm(ta, tb, M, N, K, 0.5f, A, ta ? M : K, B, tb ? K : N, -1.25f, C, N);
            h = hash_floats(h, C, nc);
            free(A); free(B); free(C);
        }
    for (s = 0; s <= 70; s++) {
        float x[70], y[70], o[72];
        for (t = 0; t < s; t++) {
            x[t] = (float)attn_rng_normal(&r, 0, 3);
            y[t] = (float)attn_rng_normal(&r, 0, 1);
        }
        o[0] = attn_dot((size_t)s, x, y);
        o[1] = attn_max((size_t)s, x);
        h = hash_floats(h, o, 2);
        o[0] = attn_sum((size_t)s, x);
        attn_axpy((size_t)s, 0.75f, x, y);
        attn_scale((size_t)s, -1.5f, y);
        attn_exp((size_t)s, y, o + 1);
        h = hash_floats(h, o, (size_t)s + 1);
        attn_tanh((size_t)s, x, o);
        h = hash_floats(h, o, (size_t)s);
    }
    for (s = 0; s < 3 * 2; s++) { /* the fused forward */
        static const attn_kind kinds[3] = {ATTN_SOFTMAX, ATTN_COG, ATTN_EXPRESSIVE};
        attn_attention_desc d = {0};
        size_t nq, nk, nv, no, i, wb;
        float *Q, *K, *V, *O, *st;
        void *w;
        d.kind = kinds[s % 3];
        d.B = 1, d.H = 2, d.Tq = s < 3 ? 200 : 70, d.Tk = s < 3 ? 200 : 300, d.dk = 64, d.dv = 64;
        d.causal = s < 3;
        nq = (size_t)2 * d.Tq * 64, nk = (size_t)2 * d.Tk * 64, nv = nk, no = nq;
        Q = malloc(nq * 4), K = malloc(nk * 4), V = malloc(nv * 4), O = malloc(no * 4);
        st = malloc(attn_attention_stats_floats(&d) * 4);
        w = malloc(wb = attn_attention_workspace(&d));
        if (!Q || !K || !V || !O || !st || !w) return 1;
        for (i = 0; i < nq; i++) Q[i] = (float)attn_rng_normal(&r, 0, 1);
        for (i = 0; i < nk; i++) K[i] = (float)attn_rng_normal(&r, 0, 1);
        for (i = 0; i < nv; i++) V[i] = (float)attn_rng_normal(&r, 0, 1);
        if (attn_attention_forward(&d, O, st, NULL, Q, K, V, w, wb) != ATTN_OK) return puts(attn_last_error()), 1;
        h = hash_floats(hash_floats(h, O, no), st, attn_attention_stats_floats(&d));
        free(Q); free(K); free(V); free(O); free(st); free(w);
    }
    for (s = 0; s < 4; s++) { /* the tiled engine (a key mask keeps the fused forward out) and the backward */
        static const attn_kind kinds[4] = {ATTN_SOFTMAX, ATTN_COG, ATTN_EXPRESSIVE, ATTN_SIGMOID};
        enum { T = 150, D = 32, N = 2 * T * D };
        static float Q[N], K[N], V[N], O[N], dO[N], dQ[N], dK[N], dV[N];
        static unsigned char mask[T];
        attn_attention_desc d = {0};
        attn_attention_grads g = {0};
        size_t wb;
        float *st;
        void *w;
        d.kind = kinds[s], d.B = 1, d.H = 2, d.Tq = d.Tk = T, d.dk = d.dv = D, d.causal = s % 2, d.key_mask = mask;
        for (t = 0; t < T; t++) mask[t] = t % 7 != 3;
        for (t = 0; t < N; t++) {
            Q[t] = (float)attn_rng_normal(&r, 0, 1), K[t] = (float)attn_rng_normal(&r, 0, 1);
            V[t] = (float)attn_rng_normal(&r, 0, 1), dO[t] = (float)attn_rng_normal(&r, 0, 1);
        }
        memset(dQ, 0, sizeof dQ); memset(dK, 0, sizeof dK); memset(dV, 0, sizeof dV);
        g.dQ = dQ, g.dK = dK, g.dV = dV;
        st = malloc(attn_attention_stats_floats(&d) * 4);
        wb = attn_attention_workspace(&d);
        w = malloc(wb);
        if (!st || !w || attn_attention_forward(&d, O, st, NULL, Q, K, V, w, wb) != ATTN_OK ||
            attn_attention_backward(&d, &g, dO, Q, K, V, O, st, w, wb) != ATTN_OK)
            return puts(attn_last_error()), 1;
        h = hash_floats(hash_floats(hash_floats(hash_floats(h, O, N), dQ, N), dK, N), dV, N);
        free(st); free(w);
    }
    { /* the norms (LayerNorm both ways of eps, RMSNorm), the activations and RoPE, forward and backward */
        enum { N = 7, C = 100 };
        static float x[N * C], dy[N * C], y[N * C], dx[N * C], g[C], b[C], dg[C], db[C], mu[N], rs[N], cs[N * C],
            sn[N * C];
        int a, mode;
        for (t = 0; t < N * C; t++) x[t] = (float)attn_rng_normal(&r, 0.3, 2), dy[t] = (float)attn_rng_normal(&r, 0, 1);
        for (t = 0; t < C; t++) g[t] = (float)attn_rng_normal(&r, 1, 0.2), b[t] = (float)attn_rng_normal(&r, 0, 0.2);
        for (mode = 0; mode < 2; mode++) {
            attn_ln_eps m = mode ? ATTN_LN_EPS_OUTSIDE : ATTN_LN_EPS_INSIDE;
            memset(dx, 0, sizeof dx); memset(dg, 0, sizeof dg); memset(db, 0, sizeof db);
            if (attn_layernorm_forward(y, mu, rs, x, g, b, N, C, 1e-5f, m) ||
                attn_layernorm_backward(dx, dg, db, dy, x, g, mu, rs, N, C, 1e-5f, m))
                return puts(attn_last_error()), 1;
            h = hash_floats(hash_floats(hash_floats(hash_floats(h, y, N * C), dx, N * C), dg, C), db, C);
        }
        memset(dx, 0, sizeof dx); memset(dg, 0, sizeof dg);
        if (attn_rmsnorm_forward(y, rs, x, g, N, C, 1e-6f) || attn_rmsnorm_backward(dx, dg, dy, x, g, rs, N, C))
            return puts(attn_last_error()), 1;
        h = hash_floats(hash_floats(hash_floats(h, y, N * C), dx, N * C), dg, C);
        for (a = 0; a < ATTN_ACT_COUNT; a++) {
            memset(dx, 0, sizeof dx);
            if (attn_act_forward(y, x, N * C, (attn_act)a) || attn_act_backward(dx, dy, x, N * C, (attn_act)a))
                return puts(attn_last_error()), 1;
            h = hash_floats(hash_floats(h, y, N * C), dx, N * C);
        }
        memset(dx, 0, sizeof dx);
        if (attn_rope_tables(cs, sn, N, C, 3, 10000) || attn_rope_forward(y, x, cs, sn, 1, N, C) ||
            attn_rope_backward(dx, dy, cs, sn, 1, N, C))
            return puts(attn_last_error()), 1;
        h = hash_floats(hash_floats(h, y, N * C), dx, N * C);
        { /* AdamW's update: x, m and v after two steps */
            attn_param_desc pd = {"w", 1, {N * C}, 1, ATTN_PARAM_CONST, 0};
            attn_params p;
            static float m[N * C], v[N * C];
            if (attn_params_init(&p, &pd, 1) != ATTN_OK) return puts(attn_last_error()), 1;
            memcpy(p.data, x, sizeof x);
            memcpy(p.gdata, dy, sizeof dy);
            if (attn_adamw_step(&p, m, v, 1, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f) ||
                attn_adamw_step(&p, m, v, 2, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f))
                return puts(attn_last_error()), 1;
            h = hash_floats(hash_floats(hash_floats(h, p.data, N * C), m, N * C), v, N * C);
            attn_params_free(&p);
        }
    }
    printf("%s %016llx\n", attn_simd_name(), (unsigned long long)h);
    return 0;
}
