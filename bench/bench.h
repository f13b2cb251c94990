/* bench.h - what the benchmarks share: a monotonic clock, a comparison for qsort (medians), and
   strict parsing of the options' numbers (a bad one is an error, not 0). */
#ifndef ATTN_BENCH_H
#define ATTN_BENCH_H
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The value of option `flag`: a whole number (or, for arg_double, a finite number) in [lo, hi];
   anything else ends the program with a message. */
static inline double arg_number(const char *flag, const char *s, double lo, double hi, int whole)
{
    char *end;
    double v;
    errno = 0;
    v = whole ? (double)strtol(s, &end, 10) : strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi)) {
        fprintf(stderr, "bad value '%s' for %s: a %s in [%g, %g]\n", s, flag, whole ? "whole number" : "number", lo, hi);
        exit(1);
    }
    return v;
}
static inline int arg_int(const char *flag, const char *s, int lo, int hi) { return (int)arg_number(flag, s, lo, hi, 1); }
static inline double arg_double(const char *flag, const char *s, double lo, double hi) { return arg_number(flag, s, lo, hi, 0); }

static inline double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The machine's FP32 FMA peak on one core, GFLOP/s: 12 independent chains of W-float vector FMAs
   (GCC and clang vector extensions; on AVX2 12 chains and their two constants fit 16 registers), the
   best of 5 runs of about 50 ms; 0 without vector extensions. Every benchmark prints its figures
   beside the peak of the ISA attn.h's kernels run (attn_simd_name, chosen at run time by a build for
   x86-64's baseline), or without attn.h of the build's widest vectors. */
#if defined(__GNUC__) || defined(__clang__)
#define BENCH_PEAK_FN(NAME, W, ATTR)                                                                  \
    ATTR __attribute__((unused)) static double NAME(void)                                             \
    {                                                                                                 \
        typedef float vf __attribute__((vector_size(4 * W)));                                        \
        vf m, a, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11;                                    \
        double best = 0;                                                                              \
        long it, n = 2000000;                                                                         \
        int r, j;                                                                                     \
        for (j = 0; j < W; j++) m[j] = 0.999999f, a[j] = 1e-7f;                                       \
        for (r = 0; r < 5; r++) {                                                                     \
            double t0 = now(), t;                                                                     \
            c0 = a; c1 = a * 2; c2 = a * 3; c3 = a * 4; c4 = a * 5; c5 = a * 6; /* 12 real chains */  \
            c6 = a * 7; c7 = a * 8; c8 = a * 9; c9 = a * 10; c10 = a * 11; c11 = a * 12;              \
            for (it = 0; it < n; it++) { /* 12 independent chains hide the FMA latency */            \
                c0 = c0 * m + a; c1 = c1 * m + a; c2 = c2 * m + a; c3 = c3 * m + a;                  \
                c4 = c4 * m + a; c5 = c5 * m + a; c6 = c6 * m + a; c7 = c7 * m + a;                  \
                c8 = c8 * m + a; c9 = c9 * m + a; c10 = c10 * m + a; c11 = c11 * m + a;              \
            }                                                                                         \
            t = now() - t0;                                                                           \
            c0 = c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7 + c8 + c9 + c10 + c11;                         \
            if (c0[0] == 12345.f) printf(" "); /* keeps the loop */                                   \
            if (2.0 * W * 12 * n / t / 1e9 > best) best = 2.0 * W * 12 * n / t / 1e9;                \
        }                                                                                             \
        return best;                                                                                  \
    }
#if defined(__x86_64__)
BENCH_PEAK_FN(bench_peak16, 16, __attribute__((target("avx512f,fma"))))
BENCH_PEAK_FN(bench_peak8, 8, __attribute__((target("avx2,fma"))))
#endif
BENCH_PEAK_FN(bench_peak4, 4, )
#endif

static inline double fma_peak_gflops(void)
{
#if defined(__GNUC__) || defined(__clang__)
#if defined(ATTN_H_INCLUDED) && defined(__x86_64__)
    const char *isa = attn_simd_name();
    if (!strcmp(isa, "avx512")) return bench_peak16();
    if (!strcmp(isa, "avx2")) return bench_peak8();
    return bench_peak4();
#elif defined(__AVX512F__)
    return bench_peak16();
#elif defined(__AVX__)
    return bench_peak8();
#else
    return bench_peak4();
#endif
#else
    return 0;
#endif
}

/* The processor's name from /proc/cpuinfo (Linux), or "unknown". */
static inline const char *cpu_model(void)
{
    static char name[128] = "unknown";
    char line[256];
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
            snprintf(name, sizeof name, "%s", strchr(line, ':') + 2);
            name[strcspn(name, "\n")] = 0;
            break;
        }
    if (f) fclose(f);
    return name;
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
#endif
