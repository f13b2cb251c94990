/* bench_gemm: GFLOP/s of attn_gemm beside OpenBLAS's cblas_sgemm (when built with -DHAVE_OPENBLAS)
   and the scalar reference, measured in the same run: square sizes 64..2048 and the skinny shapes of
   attention (M = T, N or K = head dim), all four transposes, 1 and 2 threads, median of repeats.
   Run it with OPENBLAS_CORETYPE unset (`make bench` does) so that OpenBLAS uses its best kernels. */
#define _POSIX_C_SOURCE 199309L
#define ATTN_IMPLEMENTATION
#include "../attn.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"
#ifdef HAVE_OPENBLAS
#include <cblas.h>
extern char *openblas_get_corename(void);
extern char *openblas_get_config(void);
extern void openblas_set_num_threads(int);
#endif

typedef struct {
    const char *kind;
    int M, N, K;
} shape;


enum { IMPL_ATTN, IMPL_BLAS, IMPL_REF };

static void run(int impl, int ta, int tb, const shape *s, const float *A, const float *B, float *C)
{
    int lda = ta ? s->M : s->K, ldb = tb ? s->K : s->N;
    if (impl == IMPL_ATTN) attn_gemm(ta, tb, s->M, s->N, s->K, 1, A, lda, B, ldb, 0, C, s->N);
    else if (impl == IMPL_REF) attn_gemm_reference(ta, tb, s->M, s->N, s->K, 1, A, lda, B, ldb, 0, C, s->N);
#ifdef HAVE_OPENBLAS
    else cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, s->M, s->N, s->K, 1, A, lda, B, ldb, 0, C, s->N);
#endif
}

/* After a threaded call both OpenBLAS's workers and OpenMP's spin for a while before they sleep; on
   two cores a spinning team stalls the other library's threads. Timing blocks are therefore
   separated by a pause long enough for the spinners to go to sleep (OpenBLAS: ~2^28 cycles). */
static void settle(int threads)
{
    struct timespec t = {0, 250000000};
    if (threads > 1) nanosleep(&t, NULL);
}

/* Seconds per call: `rounds` rounds, each timing enough back-to-back calls to last >= 20 ms;
   the median of the rounds. */
static double time_one(int impl, int ta, int tb, const shape *s, const float *A, const float *B, float *C, int rounds)
{
    double t[16];
    int r, reps = 1, k;
    double t0, w = now();
    int calls = 0;
    do { /* warm-up: >= 50 ms of calls, so clocks and caches settle; gives a first estimate */
        run(impl, ta, tb, s, A, B, C);
        calls++;
    } while (now() - w < 0.05);
    t0 = (now() - w) / calls;
    if (t0 < 0.02) reps = (int)(0.02 / (t0 + 1e-9)) + 1;
    for (r = 0; r < rounds; r++) {
        double a = now();
        for (k = 0; k < reps; k++) run(impl, ta, tb, s, A, B, C);
        t[r] = (now() - a) / reps;
    }
    qsort(t, (size_t)rounds, sizeof t[0], cmp_double);
    return t[rounds / 2];
}

int main(int argc, char **argv)
{
    static shape shapes[64];
    int nshapes = 0, i, th, ta, tb, quick = 0, rounds = 5, max_threads = 2;
    const char *csv_path = NULL;
    FILE *csv = NULL;
    size_t maxa = 0;
    float *A, *B, *C;
    attn_rng r;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv_path = argv[++i];
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) max_threads = arg_int("--threads", argv[++i], 1, 1024);
        else {
            printf("usage: bench_gemm [--quick] [--threads N] [--csv FILE]\n"
                   "  GFLOP/s of attn_gemm, OpenBLAS cblas_sgemm and the scalar reference; 1..N threads\n"
                   "  (default 2); --quick: fewer shapes and repeats. Run with OPENBLAS_CORETYPE unset.\n");
            return strcmp(argv[i], "--help") ? 1 : 0;
        }
    }
    if (quick) rounds = 3;
    for (i = 64; i <= 2048; i *= 2)
        if (!quick || i == 256 || i == 1024) shapes[nshapes++] = (shape){"square", i, i, i};
    {
        static const int Ts[4] = {128, 512, 1024, 2048}, ds[2] = {16, 64};
        int a, b;
        for (a = 0; a < 4; a++)
            for (b = 0; b < 2; b++) {
                if (quick && Ts[a] != 1024) continue;
                shapes[nshapes++] = (shape){"T x T x d", Ts[a], Ts[a], ds[b]};  /* scores Q K^T */
                shapes[nshapes++] = (shape){"T x d x T", Ts[a], ds[b], Ts[a]};  /* values A V */
            }
    }
    for (i = 0; i < nshapes; i++) {
        size_t m = (size_t)shapes[i].M * shapes[i].K, n = (size_t)shapes[i].K * shapes[i].N, c = (size_t)shapes[i].M * shapes[i].N;
        maxa = m > maxa ? m : maxa;
        maxa = n > maxa ? n : maxa;
        maxa = c > maxa ? c : maxa;
    }
    A = (float *)malloc(maxa * sizeof(float));
    B = (float *)malloc(maxa * sizeof(float));
    C = (float *)malloc(maxa * sizeof(float));
    if (!A || !B || !C) { fprintf(stderr, "out of memory\n"); return 1; }
    attn_rng_seed(&r, 1, 0);
    for (i = 0; i < (int)maxa; i++) { A[i] = (float)attn_rng_uniform(&r) - 0.5f; B[i] = (float)attn_rng_uniform(&r) - 0.5f; C[i] = 0; }

    printf("attn_gemm: %s kernels, up to %d threads\n", attn_simd_name(), attn_get_threads());
#ifdef HAVE_OPENBLAS
    printf("OpenBLAS: core %s, config %s\n", openblas_get_corename(), openblas_get_config());
    if (getenv("OPENBLAS_CORETYPE"))
        printf("WARNING: OPENBLAS_CORETYPE=%s holds OpenBLAS to that core's kernels; unset it to compare against its best\n", getenv("OPENBLAS_CORETYPE"));
#else
    printf("OpenBLAS: not built in (install libopenblas-dev and rebuild): no comparison column\n");
#endif
    if (csv_path && !(csv = fopen(csv_path, "w"))) { fprintf(stderr, "cannot write %s\n", csv_path); return 1; }
    if (csv) fprintf(csv, "threads,kind,M,N,K,trans,attn_gflops,openblas_gflops,ratio,reference_gflops\n");
    printf("\n%-3s %-10s %5s %5s %5s %-3s %9s %9s %7s %9s\n", "thr", "shape", "M", "N", "K", "op", "attn", "openblas", "ratio", "scalar");
    for (th = 1; th <= max_threads; th++) {
        attn_set_threads(th);
#ifdef HAVE_OPENBLAS
        openblas_set_num_threads(th);
#endif
        for (i = 0; i < nshapes; i++)
            for (ta = 0; ta < 2; ta++)
                for (tb = 0; tb < 2; tb++) {
                    const shape *s = &shapes[i];
                    double flops = 2.0 * s->M * s->N * s->K, ga, gb = 0, gr = 0;
                    settle(th);
                    ga = flops / time_one(IMPL_ATTN, ta, tb, s, A, B, C, rounds) * 1e-9;
#ifdef HAVE_OPENBLAS
                    settle(th);
                    gb = flops / time_one(IMPL_BLAS, ta, tb, s, A, B, C, rounds) * 1e-9;
#endif
                    if (th == 1 && flops <= 2.0 * 256 * 256 * 256) gr = flops / time_one(IMPL_REF, ta, tb, s, A, B, C, 3) * 1e-9;
                    printf("%-3d %-10s %5d %5d %5d %c%c  %9.1f %9.1f %7.2f %9.2f\n", th, s->kind, s->M, s->N, s->K, ta ? 'T' : 'N', tb ? 'T' : 'N',
                           ga, gb, gb > 0 ? ga / gb : 0, gr);
                    fflush(stdout);
                    if (csv) fprintf(csv, "%d,%s,%d,%d,%d,%c%c,%.2f,%.2f,%.3f,%.3f\n", th, s->kind, s->M, s->N, s->K, ta ? 'T' : 'N', tb ? 'T' : 'N',
                                     ga, gb, gb > 0 ? ga / gb : 0, gr);
                }
    }
    if (csv) fclose(csv);
    free(A); free(B); free(C);
    return 0;
}
