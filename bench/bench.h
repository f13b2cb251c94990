/* bench.h - what the benchmarks share: a monotonic clock and a comparison for qsort (medians). */
#ifndef ATTN_BENCH_H
#define ATTN_BENCH_H
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
#endif
