/* attn_gemm against its double-accumulating reference on edge shapes, every transpose, alpha/beta,
   padded leading dimensions; beta = 0 with NaNs in C; thread-count independence. */
#include "test.h"

/* Runs one product with A, B, C padded by `pad` columns and compares to the reference; line: C starts
   on a 64-byte line (a large C written once is then stored past the caches). The tolerance is 4 K eps
   times the same product on absolute values (a rounding-error bound). */
static void gemm_case_at(attn_rng *r, int ta, int tb, int M, int N, int K, attn_float alpha, attn_float beta,
                         int pad, int line)
{
    int lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad, i, j, bad = 0;
    size_t na = (size_t)(ta ? K : M) * lda, nb = (size_t)(tb ? N : K) * ldb, nc = (size_t)M * ldc;
    attn_float *A = t_alloc(na), *B = t_alloc(nb), *Cbuf = t_alloc(nc + 64), *R = t_alloc(nc);
    attn_float *C = line ? (attn_float *)(((uintptr_t)Cbuf + 63) & ~(uintptr_t)63) : Cbuf;
    attn_float *Aa = t_alloc(na), *Ba = t_alloc(nb), *Ca = t_alloc(nc);
    double worst = 0;
    t_randn(A, na, r, 1);
    t_randn(B, nb, r, 1);
    t_randn(C, nc, r, 1);
    for (i = 0; i < (int)na; i++) Aa[i] = (attn_float)fabs(A[i]);
    for (i = 0; i < (int)nb; i++) Ba[i] = (attn_float)fabs(B[i]);
    for (i = 0; i < (int)nc; i++) Ca[i] = (attn_float)fabs(C[i]);
    if (beta == 0)
        for (i = 0; i < (int)nc; i++) C[i] = NAN; /* beta = 0 must not read C */
    memcpy(R, C, nc * sizeof(attn_float));
    attn_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    attn_gemm_reference(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, R, ldc);
    attn_gemm_reference(ta, tb, M, N, K, (attn_float)fabs(alpha), Aa, lda, Ba, ldb, (attn_float)fabs(beta), Ca, ldc);
    for (i = 0; i < M; i++)
        for (j = 0; j < ldc; j++) {
            size_t k = (size_t)i * ldc + j;
            if (j >= N) { /* the padding must be left alone */
                if (!(C[k] == R[k] || (t_isnan(C[k]) && t_isnan(R[k])))) bad++;
                continue;
            }
            double err = fabs((double)C[k] - R[k]), tol = 4.0 * (K + 2) * T_EPS * (Ca[k] + 1e-30);
            if (!(err <= tol)) bad++;
            if (err / (Ca[k] + 1e-30) > worst) worst = err / (Ca[k] + 1e-30);
        }
    CHECK(bad == 0, "gemm trans %d%d M %d N %d K %d alpha %g beta %g pad %d: %d bad elements (worst relative error %.2e)",
          ta, tb, M, N, K, (double)alpha, (double)beta, pad, bad, worst);
    free(A); free(B); free(Cbuf); free(R); free(Aa); free(Ba); free(Ca);
}
static void gemm_case(attn_rng *r, int ta, int tb, int M, int N, int K, attn_float alpha, attn_float beta, int pad)
{
    gemm_case_at(r, ta, tb, M, N, K, alpha, beta, pad, 0);
}

void test_gemm(void)
{
    static const int sizes[] = {1, 7, 17, 33, 129}; /* small products with vector-long rows take the small path, short ones (a
                                                        side below a vector) the short path, the rest the packed one */
    /* ... an attention tile's short products with 4-wide heads (36 x 4 x 36, 36 x 36 x 4; 103 x 4 x 19: more
       rows than a transposed A's four columns hold in registers, and a remainder), and small products of
       whole tiles (16^3, 32^3, 64 x 16 x 16, 16 x 64 x 16; 8 x 16 x 300, deeper than the 256 of a NEON or scalar block: no blocking, B in place or packed on the stack;
       130 x 65 x 1100 and 33 x 2100 x 40: two depth blocks, two column blocks on every ISA) */
    static const int shapes[][3] = {{300, 70, 50}, {64, 2048, 16}, {513, 16, 200}, {130, 65, 1100}, {33, 2100, 40}, {45, 200, 33}, {2, 900, 3},
                                    {36, 4, 36}, {36, 36, 4}, {103, 4, 19}, {16, 16, 16}, {32, 32, 32}, {64, 16, 16}, {16, 64, 16},
                                    {8, 16, 300},
                                    /* A transposed and packed (more than 256 rows and columns, K > 128): last row tiles
                                       of 4 and 10 rows (of 14), last panels of 9 and 24 columns (of 32) */
                                    {270, 265, 200}, {262, 265, 150}, {270, 280, 200},
                                    /* A transposed, short (M <= 256) or shallow (K <= 128): read in place at any N on
                                       AVX-512 and NEON, packed on the 16-register ISAs (on AVX-512 a last row tile
                                       of 3 rows and a last panel of 12 columns) */
                                    {203, 300, 150}, {302, 280, 64},
                                    /* A transposed, read in place with its rows a page apart (the "_t" kernels): one
                                       vector of columns (one panel on AVX2: in place there too); 6 and 12 columns
                                       (one panel, partial, on SSE2 and AVX2); three panels, the last of 6 columns
                                       (packed on the 16-register ISAs) */
                                    {1030, 16, 300}, {1030, 6, 300}, {1030, 12, 300}, {1100, 70, 200},
                                    /* A transposed, rows closer, large: one panel read in place on the 16-register
                                       ISAs (the "_s" kernels), whole or partial */
                                    {300, 16, 200}, {300, 6, 200}, {300, 12, 200},
                                    /* one or two vectors of rows and a B too large to read in place: computed
                                       transposed, in chunks of columns (300 = 256 + 44 when M = 16) */
                                    {16, 300, 520}, {32, 70, 2100},
                                    /* A in place over 2048 deep or more (AVX-512: C kept in L2 over the depth
                                       blocks): two column blocks of 256 and 44, a last row tile of 3 rows */
                                    {43, 300, 2100}};
    static const int narrow[] = {4, 8, 12, 16, 21, 31, 32, 33, 40, 48}, deep[] = {16, 17, 20, 23, 30, 64}, tall[] = {16, 21, 36, 48};
    attn_rng r;
    int ta, tb, a, b, c, s, bad = 0;
    attn_rng_seed(&r, 11, 0);
    for (ta = 0; ta < 2; ta++)
        for (tb = 0; tb < 2; tb++) {
            for (a = 0; a < 5; a++)
                for (b = 0; b < 5; b++)
                    for (c = 0; c < 5; c++)
                        gemm_case(&r, ta, tb, sizes[a], sizes[b], sizes[c], (a + b + c) % 3 ? 1 : (attn_float)-0.5,
                                  (attn_float)((a + c) % 3 == 0 ? 0 : (a + c) % 3 == 1 ? 1 : 0.3), (a * 5 + b) % 4 == 0 ? 3 : 0);
            for (s = 0; s < (int)(sizeof shapes / sizeof shapes[0]); s++) {
                gemm_case(&r, ta, tb, shapes[s][0], shapes[s][1], shapes[s][2], 1, 0, 0);
                gemm_case(&r, ta, tb, shapes[s][0], shapes[s][1], shapes[s][2], (attn_float)0.7, (attn_float)-1.5, 5);
            }
            /* depth 1-4 with 4-48 columns: one, two or three vectors of every width (4, 8, 16), overlapping
               ones too, B held in registers where there are 32 */
            for (c = 1; c <= 4; c++)
                for (b = 0; b < 10; b++)
                    gemm_case(&r, ta, tb, 9, narrow[b], c, (attn_float)(c == 2 ? -0.5 : 1),
                              (attn_float)(b % 3 == 0 ? 0 : b % 3 == 1 ? 1 : 0.3), c == 3 ? 2 : 0);
            /* 1-4 columns with A transposed and one to three vectors of rows (a narrow head's dV, dK) */
            for (a = 1; a <= 4; a++)
                for (c = 0; c < 4; c++)
                    gemm_case(&r, ta, tb, tall[c], a, deep[c + 1], (attn_float)(a == 2 ? -0.5 : 1),
                              (attn_float)(c % 3 == 0 ? 0 : c % 3 == 1 ? 1 : 0.3), c == 2 ? 3 : 0);
            /* four columns (a 4-wide head's P V), depths with every remainder after groups of 8 and 4 */
            for (c = 0; c < 6; c++)
                gemm_case(&r, ta, tb, 7, 4, deep[c], (attn_float)(c == 1 ? -0.5 : 1), (attn_float)(c % 3 == 0 ? 0 : c % 3 == 1 ? 1 : 0.3),
                          c == 4 ? 3 : 0);
        }
    /* a C of more than 4 MiB written once, on cache lines (rows of 1040 floats): stored past the caches
       (AVX-512, AVX2), its edge tiles (1101 = 137 x 8 + 5 rows, 1030 = 32 x 32 + 6 columns) as usual */
    gemm_case_at(&r, 0, 0, 1101, 1030, 16, 1, 0, 10, 1);
    gemm_case_at(&r, 1, 1, 1101, 1030, 16, (attn_float)0.5, 0, 10, 1);
    /* K = 0 and alpha = 0: C = beta C, and beta = 0 zeroes NaNs */
    {
        attn_float A[4] = {1, 2, 3, 4}, C[4] = {1, 2, NAN, 4};
        attn_gemm(0, 0, 2, 2, 0, 1, A, 1, A, 2, 2, C, 2);
        CHECK(C[0] == 2 && C[1] == 4 && t_isnan(C[2]), "K = 0 must give C = beta C");
        attn_gemm(0, 0, 2, 2, 2, 0, A, 2, A, 2, 0, C, 2);
        CHECK(C[0] == 0 && C[2] == 0, "alpha = 0, beta = 0 must zero C, NaNs included");
    }
#ifdef _OPENMP
    {   /* attn_gemm inside the caller's own parallel region: no deadlock, and the same result */
        attn_float A[64 * 64], B[64 * 64], C[2][64 * 64], R[64 * 64];
        int t;
        t_randn(A, 64 * 64, &r, 1);
        t_randn(B, 64 * 64, &r, 1);
        attn_set_threads(1);
        attn_gemm(0, 1, 64, 64, 64, 1, A, 64, B, 64, 0, R, 64);
#pragma omp parallel for num_threads(2)
        for (t = 0; t < 2; t++) attn_gemm(0, 1, 64, 64, 64, 1, A, 64, B, 64, 0, C[t], 64);
        attn_set_threads(0);
        CHECK(!memcmp(C[0], R, sizeof R) && !memcmp(C[1], R, sizeof R), "attn_gemm called inside a parallel region differs");
    }
#endif
    /* the same bits with 1 and 2 threads, on shapes above the threading threshold (the last over 2100
       deep: C kept in L2 over the depth on AVX-512) */
    for (s = 0; s < 4; s++) {
        int M = s == 0 ? 300 : s == 1 ? 40 : s == 2 ? 1000 : 100, N = s == 0 ? 260 : s == 1 ? 3000 : s == 2 ? 48 : 300,
            K = s == 0 ? 900 : s == 3 ? 2100 : 97;
        attn_float *A = t_alloc((size_t)M * K), *B = t_alloc((size_t)K * N), *C1 = t_alloc((size_t)M * N), *C2 = t_alloc((size_t)M * N);
        t_randn(A, (size_t)M * K, &r, 1);
        t_randn(B, (size_t)K * N, &r, 1);
        attn_set_threads(1);
        attn_gemm(0, s == 1, M, N, K, 1, A, K, B, s == 1 ? K : N, 0, C1, N);
        attn_set_threads(2);
        attn_gemm(0, s == 1, M, N, K, 1, A, K, B, s == 1 ? K : N, 0, C2, N);
        attn_set_threads(0);
        bad = memcmp(C1, C2, sizeof(attn_float) * (size_t)M * N) != 0;
        CHECK(!bad, "gemm %dx%dx%d: results differ between 1 and 2 threads", M, N, K);
        free(A); free(B); free(C1); free(C2);
    }
}
