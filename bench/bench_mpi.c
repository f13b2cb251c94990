/* bench_mpi.c - what a data-parallel step of attnlab-mpi spends in communication: the all-reduce of a
   gradient block, as float sums (what an ordinary data-parallel step would send) and as the int64
   sums attnlab's exact summation sends, plus the two small reductions of each step (the largest
   |gradient| and the chunks' losses), for the gradient sizes of the models attnlab trains. Medians
   of --reps timed calls after a warm-up, on every rank count mpirun gives. The FMA peak is printed
   first, as in every benchmark (the all-reduce does not depend on it).

   mpirun -n 2 build/bench_mpi [--reps N] [--sizes N1,N2,...]          (make bench-mpi) */
#include "bench.h"
#include <mpi.h>
#include <stdint.h>
#include <string.h>

static double median_time(int reps, void (*op)(void *), void *ctx)
{
    double *t = (double *)malloc(sizeof(double) * (size_t)reps), m;
    int i;
    for (i = 0; i < 3; i++) op(ctx); /* warm-up */
    for (i = 0; i < reps; i++) {
        double t0;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = now();
        op(ctx);
        t[i] = now() - t0;
        MPI_Allreduce(MPI_IN_PLACE, &t[i], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD); /* the slowest rank's */
    }
    qsort(t, (size_t)reps, sizeof(double), cmp_double);
    m = t[reps / 2];
    free(t);
    return m;
}

typedef struct {
    int n;
    float *f;
    int64_t *q;
    double small[17];
} block;

static void sum_float(void *c) { block *b = (block *)c; MPI_Allreduce(MPI_IN_PLACE, b->f, b->n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); }
static void sum_int64(void *c) { block *b = (block *)c; MPI_Allreduce(MPI_IN_PLACE, b->q, b->n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD); }
static void small(void *c)
{
    block *b = (block *)c;
    MPI_Allreduce(MPI_IN_PLACE, b->small, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, b->small + 1, 16, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    const char *names[8] = {"HYLA fuzzy (2 layers, E 128)", "SRAVEN width 1 (4 layers)", "Cogformer (attnlab lm: 4 layers, d 128)"};
    int sizes[8] = {151265, 402824, 857472}, nsizes = 3, reps = 21, rank, size, i;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = arg_int("--reps", argv[++i], 1, 100000);
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            char *s = argv[++i], *tok;
            for (nsizes = 0, tok = strtok(s, ","); tok && nsizes < 8; tok = strtok(NULL, ","))
                names[nsizes] = "", sizes[nsizes++] = arg_int("--sizes", tok, 1, 1 << 28);
        } else {
            if (rank == 0)
                printf("usage: mpirun -n R bench_mpi [--reps N] [--sizes N1,N2,...]\n"
                       "  the all-reduce of a gradient block (float and int64 sums) and a data-parallel\n"
                       "  step's two small reductions, medians of N timed calls [21]\n");
            MPI_Finalize();
            return strcmp(argv[i], "--help") && strcmp(argv[i], "-h");
        }
    }
    if (rank == 0) {
        printf("CPU: %s; FMA peak (one core): %.1f GFLOP/s\n", cpu_model(), fma_peak_gflops());
        printf("%d rank(s), medians of %d calls (the slowest rank's time of each)\n\n", size, reps);
        printf("| gradient block | floats | float32 all-reduce | int64 all-reduce (exact sum) | max + losses |\n");
        printf("|---|---:|---:|---:|---:|\n");
    }
    for (i = 0; i < nsizes; i++) {
        block b;
        double tf, tq, ts;
        int k;
        b.n = sizes[i];
        b.f = (float *)malloc(sizeof(float) * (size_t)b.n);
        b.q = (int64_t *)malloc(sizeof(int64_t) * (size_t)b.n);
        for (k = 0; k < b.n; k++) { b.f[k] = 1e-3f * (float)(k % 97); b.q[k] = k % 97; }
        memset(b.small, 0, sizeof b.small);
        tf = median_time(reps, sum_float, &b);
        tq = median_time(reps, sum_int64, &b);
        ts = median_time(reps, small, &b);
        if (rank == 0)
            printf("| %s | %d | %.3f ms (%.2f GB/s) | %.3f ms (%.2f GB/s) | %.1f us |\n", names[i], b.n, 1e3 * tf,
                   4.0 * b.n / tf / 1e9, 1e3 * tq, 8.0 * b.n / tq / 1e9, 1e6 * ts);
        free(b.f);
        free(b.q);
    }
    MPI_Finalize();
    return 0;
}
