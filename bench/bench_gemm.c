/* bench_gemm: GFLOP/s of attn_gemm beside the best small and large SGEMMs on this machine, measured
   in the same run, after the machine's FMA peak: OpenBLAS's cblas_sgemm (linked, -DHAVE_OPENBLAS),
   BLIS's cblas_sgemm and oneDNN's dnnl_sgemm (loaded at run time with dlopen, each with its own
   symbols, so their cblas_sgemm never meets OpenBLAS's), libxsmm's JIT kernels (linked statically,
   -DHAVE_LIBXSMM; shapes up to 64^3, where it generates its own code), and the scalar reference.
   Shapes: square sizes 64..2048, the attention shapes (M = T, N or K = head dim), and the small
   shapes per-position and 4-wide-head models run on; all four transposes; 1 and 2 threads (the
   other libraries on one thread only), median of repeats. Each attn_gemm figure is also a fraction
   of the FMA peak (times the threads). A library that is missing leaves its column empty and says
   so. Run it with OPENBLAS_CORETYPE unset (`make bench` does) so that OpenBLAS uses its best kernels. */
#define _GNU_SOURCE /* RTLD_DEEPBIND */
#define ATTN_IMPLEMENTATION
#include "../attn.h"
#include <dlfcn.h>
#include <stdint.h>
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
#ifdef HAVE_LIBXSMM
#include <libxsmm.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

typedef struct {
    const char *kind;
    int M, N, K;
} shape;

/* The libraries loaded at run time: CBLAS row-major (101), no transpose 111, transpose 112. */
typedef void (*cblas_sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *, int, float, float *, int);
typedef int (*dnnl_sgemm_fn)(char, char, int64_t, int64_t, int64_t, float, const float *, int64_t, const float *, int64_t, float, float *,
                             int64_t);
static cblas_sgemm_fn blis_sgemm;
static dnnl_sgemm_fn dnnl_sgemm_p;

enum { IMPL_ATTN, IMPL_OPENBLAS, IMPL_BLIS, IMPL_DNNL, IMPL_XSMM, IMPL_REF, NIMPL };
static const char *impl_name[NIMPL] = {"attn", "openblas", "blis", "onednn", "libxsmm", "scalar"};

/* Whether impl can run shape s on th threads in this build. */
static int available(int impl, const shape *s, int th)
{
    switch (impl) {
    case IMPL_ATTN: return 1;
#ifdef HAVE_OPENBLAS
    case IMPL_OPENBLAS: return 1;
#endif
    case IMPL_BLIS: return blis_sgemm && th == 1;
    case IMPL_DNNL: return dnnl_sgemm_p && th == 1;
#ifdef HAVE_LIBXSMM
    case IMPL_XSMM: return th == 1 && (double)s->M * s->N * s->K <= 64.0 * 64 * 64;
#endif
    case IMPL_REF: return th == 1 && 2.0 * s->M * s->N * s->K <= 2.0 * 256 * 256 * 256;
    default: return 0;
    }
}

static void run(int impl, int ta, int tb, const shape *s, const float *A, const float *B, float *C)
{
    int lda = ta ? s->M : s->K, ldb = tb ? s->K : s->N;
    switch (impl) {
    case IMPL_ATTN: attn_gemm(ta, tb, s->M, s->N, s->K, 1, A, lda, B, ldb, 0, C, s->N); break;
    case IMPL_REF: attn_gemm_reference(ta, tb, s->M, s->N, s->K, 1, A, lda, B, ldb, 0, C, s->N); break;
#ifdef HAVE_OPENBLAS
    case IMPL_OPENBLAS:
        cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, s->M, s->N, s->K, 1, A, lda, B, ldb, 0,
                    C, s->N);
        break;
#endif
    case IMPL_BLIS: blis_sgemm(101, ta ? 112 : 111, tb ? 112 : 111, s->M, s->N, s->K, 1, A, lda, B, ldb, 0, C, s->N); break;
    case IMPL_DNNL: dnnl_sgemm_p(ta ? 'T' : 'N', tb ? 'T' : 'N', s->M, s->N, s->K, 1, A, lda, B, ldb, 0, C, s->N); break;
#ifdef HAVE_LIBXSMM
    case IMPL_XSMM: { /* column-major: C^T = op(B)^T op(A)^T */
        const libxsmm_blasint m = s->N, n = s->M, k = s->K, la = ldb, lb = lda, lc = s->N;
        const float one = 1, zero = 0;
        const char tA = tb ? 'T' : 'N', tB = ta ? 'T' : 'N';
        libxsmm_sgemm(&tA, &tB, &m, &n, &k, &one, B, &la, A, &lb, &zero, C, &lc);
        break;
    }
#endif
    default: break;
    }
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

/* BLIS and oneDNN by dlopen: their own symbols first (RTLD_DEEPBIND), nothing exported. */
static void load_libraries(void)
{
    static const char *blis[2] = {"libblis.so.4", "libblis.so"}, *dnnl[2] = {"libdnnl.so.2", "libdnnl.so"};
    void *h = NULL;
    int i;
    for (i = 0; i < 2 && !h; i++) h = dlopen(blis[i], RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (h) *(void **)&blis_sgemm = dlsym(h, "cblas_sgemm"); /* POSIX: a function pointer through void * */
    printf("BLIS: %s\n", blis_sgemm ? "libblis (cblas_sgemm, one thread)" : "not found (apt-get install libblis-dev): no column");
    for (h = NULL, i = 0; i < 2 && !h; i++) h = dlopen(dnnl[i], RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (h) *(void **)&dnnl_sgemm_p = dlsym(h, "dnnl_sgemm");
#ifdef _OPENMP
    omp_set_num_threads(1); /* oneDNN's OpenMP regions: one thread (attn_gemm passes its own count) */
#else
    if (dnnl_sgemm_p) printf("oneDNN: this build has no OpenMP to hold it to one thread: its column may use more\n");
#endif
    printf("oneDNN: %s\n", dnnl_sgemm_p ? "libdnnl (dnnl_sgemm, one thread)" : "not found (apt-get install libdnnl-dev): no column");
#ifdef HAVE_LIBXSMM
    libxsmm_init();
    printf("libxsmm: %s (JIT kernels, one thread, shapes up to 64^3)\n", LIBXSMM_VERSION);
#else
    printf("libxsmm: not built in (apt-get install libxsmm-dev and rebuild): no column\n");
#endif
}

int main(int argc, char **argv)
{
    static shape shapes[64];
    static const shape small[6] = {{"small", 16, 16, 16}, {"small", 32, 32, 32}, {"small", 64, 16, 16},
                                   {"small", 64, 64, 64}, {"head QK^T", 36, 36, 4}, {"head PV", 36, 4, 36}};
    int nshapes = 0, i, th, ta, tb, quick = 0, rounds = 5, max_threads = 2, im;
    const char *csv_path = NULL;
    FILE *csv = NULL;
    size_t maxa = 0;
    float *A, *B, *C;
    void *Araw, *Braw, *Craw;
    double peak;
    attn_rng r;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv_path = argv[++i];
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) max_threads = arg_int("--threads", argv[++i], 1, 1024);
        else {
            printf("usage: bench_gemm [--quick] [--threads N] [--csv FILE]\n"
                   "  GFLOP/s of attn_gemm beside OpenBLAS, BLIS, oneDNN, libxsmm (those installed) and the\n"
                   "  scalar reference, after the FMA peak; 1..N threads (default 2; the others on one);\n"
                   "  --quick: fewer shapes and repeats. Run with OPENBLAS_CORETYPE unset.\n");
            return strcmp(argv[i], "--help") ? 1 : 0;
        }
    }
    if (quick) rounds = 3;
    for (i = 0; i < 6; i++)
        if (!quick || i == 0 || i == 4) shapes[nshapes++] = small[i];
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
    /* every library gets the same buffers, on 64-byte cache lines (as attn.h's arenas hand out;
       malloc's large blocks start 16 bytes into a page) */
    Araw = malloc((maxa + 16) * sizeof(float));
    Braw = malloc((maxa + 16) * sizeof(float));
    Craw = malloc((maxa + 16) * sizeof(float));
    if (!Araw || !Braw || !Craw) { fprintf(stderr, "out of memory\n"); return 1; }
    A = (float *)(((uintptr_t)Araw + 63) & ~(uintptr_t)63);
    B = (float *)(((uintptr_t)Braw + 63) & ~(uintptr_t)63);
    C = (float *)(((uintptr_t)Craw + 63) & ~(uintptr_t)63);
    attn_rng_seed(&r, 1, 0);
    for (i = 0; i < (int)maxa; i++) { A[i] = (float)attn_rng_uniform(&r) - 0.5f; B[i] = (float)attn_rng_uniform(&r) - 0.5f; C[i] = 0; }

    peak = fma_peak_gflops();
    printf("CPU: %s; FMA peak (one core) %.1f GFLOP/s\n", cpu_model(), peak);
    printf("attn_gemm: %s kernels, up to %d threads\n", attn_simd_name(), attn_get_threads());
#ifdef HAVE_OPENBLAS
    printf("OpenBLAS: core %s, config %s\n", openblas_get_corename(), openblas_get_config());
    if (getenv("OPENBLAS_CORETYPE"))
        printf("WARNING: OPENBLAS_CORETYPE=%s holds OpenBLAS to that core's kernels; unset it to compare against its best\n", getenv("OPENBLAS_CORETYPE"));
#else
    printf("OpenBLAS: not built in (install libopenblas-dev and rebuild): no column\n");
#endif
    load_libraries();
    if (csv_path && !(csv = fopen(csv_path, "w"))) { fprintf(stderr, "cannot write %s\n", csv_path); return 1; }
    if (csv) fprintf(csv, "threads,kind,M,N,K,trans,attn_gflops,attn_peak,openblas_gflops,blis_gflops,onednn_gflops,libxsmm_gflops,best_other,ratio,reference_gflops\n");
    printf("\n(GFLOP/s; %% peak: attn_gemm against the FMA peak times the threads; ratio: attn_gemm against the best\n"
           " of the other libraries in the row; -: not measured)\n");
    printf("%-3s %-10s %5s %5s %5s %-3s %8s %6s %8s %8s %8s %8s %6s %8s\n", "thr", "shape", "M", "N", "K", "op", "attn", "%peak",
           "openblas", "blis", "onednn", "libxsmm", "ratio", "scalar");
    for (th = 1; th <= max_threads; th++) {
        attn_set_threads(th);
#ifdef HAVE_OPENBLAS
        openblas_set_num_threads(th);
#endif
        for (i = 0; i < nshapes; i++)
            for (ta = 0; ta < 2; ta++)
                for (tb = 0; tb < 2; tb++) {
                    const shape *s = &shapes[i];
                    double flops = 2.0 * s->M * s->N * s->K, g[NIMPL], best = 0;
                    char cell[NIMPL][16];
                    for (im = 0; im < NIMPL; im++) {
                        g[im] = 0;
                        snprintf(cell[im], sizeof cell[im], "-");
                        if (!available(im, s, th)) continue;
                        settle(th);
                        g[im] = flops / time_one(im, ta, tb, s, A, B, C, im == IMPL_REF ? 3 : rounds) * 1e-9;
                        snprintf(cell[im], sizeof cell[im], im == IMPL_REF ? "%.2f" : "%.1f", g[im]);
                        if (im != IMPL_ATTN && im != IMPL_REF && g[im] > best) best = g[im];
                    }
                    printf("%-3d %-10s %5d %5d %5d %c%c  %8s %5.0f%% %8s %8s %8s %8s %6.2f %8s\n", th, s->kind, s->M, s->N, s->K,
                           ta ? 'T' : 'N', tb ? 'T' : 'N', cell[IMPL_ATTN], peak > 0 ? 100 * g[IMPL_ATTN] / (peak * th) : 0,
                           cell[IMPL_OPENBLAS], cell[IMPL_BLIS], cell[IMPL_DNNL], cell[IMPL_XSMM], best > 0 ? g[IMPL_ATTN] / best : 0,
                           cell[IMPL_REF]);
                    fflush(stdout);
                    if (csv)
                        fprintf(csv, "%d,%s,%d,%d,%d,%c%c,%.2f,%.3f,%.2f,%.2f,%.2f,%.2f,%.2f,%.3f,%.3f\n", th, s->kind, s->M, s->N, s->K,
                                ta ? 'T' : 'N', tb ? 'T' : 'N', g[IMPL_ATTN], peak > 0 ? g[IMPL_ATTN] / (peak * th) : 0, g[IMPL_OPENBLAS],
                                g[IMPL_BLIS], g[IMPL_DNNL], g[IMPL_XSMM], best, best > 0 ? g[IMPL_ATTN] / best : 0, g[IMPL_REF]);
                }
    }
    if (csv) fclose(csv);
    free(Araw); free(Braw); free(Craw);
    (void)impl_name;
    return 0;
}
