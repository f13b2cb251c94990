/* bench.h - what the benchmarks share: a monotonic clock, a comparison for qsort (medians), and
   strict parsing of the options' numbers (a bad one is an error, not 0). */
#ifndef ATTN_BENCH_H
#define ATTN_BENCH_H
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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
