/* jobs.c: how attnlab runs the (kind, seed, setting) runs of a command: in parallel on the cores,
   recorded in a journal beside the CSV so that --resume skips what is done, and, in attnlab-mpi
   (built with mpicc and -DATTNLAB_MPI), spread over MPI ranks: rank 0 hands runs out as ranks
   free up, computes runs itself meanwhile, and gathers every result into the same tables and
   files a single process writes. See attnlab.h for the interface. */
#include "../attn.h"
#include "attnlab.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef ATTNLAB_MPI
#include <mpi.h>
#include <pthread.h>
#include <unistd.h>
#endif

int resume_runs = 0, rank_timeout = 60;
static uint64_t run_key = 0; /* the hash of the command line: a journal is used only by the same one */
static char run_line[512];  /* its start, for the message when they differ */

void jb_io(jobbuf *b, void *x, size_t n)
{
    if (b->bad) return;
    if (b->reading) {
        if (b->n - b->pos < n) { b->bad = 1; return; }
        memcpy(x, b->p + b->pos, n);
        b->pos += n;
        return;
    }
    if (b->cap - b->n < n) {
        size_t cap = b->cap * 2 + n + 256;
        unsigned char *q = (unsigned char *)realloc(b->p, cap);
        if (!q) { b->bad = 1; return; }
        b->p = q; b->cap = cap;
    }
    memcpy(b->p + b->n, x, n);
    b->n += n;
}

void jb_count(jobbuf *b, int *n, int max)
{
    jb_io(b, n, sizeof *n);
    if (*n < 0 || *n > max) { b->bad = 1; *n = 0; }
}

static uint64_t fnv(const void *p, size_t n, uint64_t h)
{
    const unsigned char *s = (const unsigned char *)p;
    while (n--) h = (h ^ *s++) * 1099511628211ull;
    return h;
}

void jobs_key(int argc, char **argv)
{
    int i;
    size_t used = 0;
    run_key = 14695981039346656037ull;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads")) { i++; continue; } /* does not change a result */
        run_key = fnv(argv[i], strlen(argv[i]) + 1, run_key);
        if (used + 1 < sizeof run_line) used += (size_t)snprintf(run_line + used, sizeof run_line - used, "%s%s", i > 1 ? " " : "", argv[i]);
        if (used >= sizeof run_line) used = sizeof run_line - 1;
    }
}

/* ---- the journal: FILE.jobs beside the CSV ----
   A header line "attnlab-jobs 1 NJOBS KEY COMMAND-LINE", then a record per finished run: its index
   and byte count (two uint32), the bytes of its result, and their FNV-1a hash (uint64). A record
   cut short by a kill, or one whose hash does not match, is skipped with a warning: the reader
   looks for the next whole record after it, and --resume rewrites the journal without it (to a
   temporary, renamed over it) before appending, so no later record sits behind a torn one. */

static FILE *journal;

static void journal_path(const job_set *js, char *path, size_t n) { snprintf(path, n, "%s.jobs", js->csv_path); }

/* The whole record at b [n] (index < njobs, its hash right), or 0 with *len unset. */
static int journal_record(const unsigned char *b, size_t n, int njobs, uint32_t *jn, size_t *len)
{
    uint64_t h;
    if (n < 16) return 0;
    memcpy(jn, b, 8);
    if (jn[0] >= (uint32_t)njobs || jn[1] > n - 16) return 0;
    memcpy(&h, b + 8 + jn[1], 8);
    if (h != fnv(b + 8, jn[1], run_key)) return 0;
    *len = 16 + (size_t)jn[1];
    return 1;
}

/* Reads the finished runs of an earlier run of this command line into the results, marking done[j],
   and drops torn records from the file; the count, or -1 (and a message) if the journal belongs to
   another command line or cannot be repaired. */
static int journal_read(const job_set *js, int njobs, char *done)
{
    char path[1100], tmp[1110], head[64];
    unsigned long nj = 0;
    unsigned long long key = 0;
    unsigned char *all = NULL, *q;
    size_t n = 0, cap = 0, at, w, len, skipped = 0, got;
    int count = 0, ok = 1;
    FILE *f;
    journal_path(js, path, sizeof path);
    if (!(f = fopen(path, "rb"))) return 0; /* nothing done yet */
    do { /* the whole file, and a NUL after it (fread stops with room left) */
        if (n == cap) {
            if (!(q = (unsigned char *)realloc(all, cap = 2 * cap + 65536))) { ok = 0; break; }
            all = q;
        }
        n += got = fread(all + n, 1, cap - n, f);
    } while (got > 0);
    fclose(f);
    if (ok) all[n] = 0;
    if (!ok || sscanf((const char *)all, "%63s %*d %lu %llx", head, &nj, &key) != 3 || strcmp(head, "attnlab-jobs") ||
        key != run_key || nj != (unsigned long)njobs || !memchr(all, '\n', n)) {
        if (ok) fprintf(stderr, "attnlab: %s was written by another command line; --resume needs the same one (this one: %s)\n",
                        path, run_line);
        else fprintf(stderr, "attnlab: out of memory reading %s\n", path);
        free(all);
        return -1;
    }
    w = at = (size_t)((unsigned char *)memchr(all, '\n', n) - all) + 1;
    while (at < n) {
        uint32_t jn[2];
        jobbuf b = {0};
        if (!journal_record(all + at, n - at, njobs, jn, &len)) { /* torn: look from the next byte */
            at++, skipped++;
            continue;
        }
        b.p = all + at + 8;
        b.n = jn[1];
        b.reading = 1;
        if (!done[jn[0]] && js->xfer(js->ctx, (int)jn[0], &b) && !b.bad) { done[jn[0]] = 1; count++; }
        memmove(all + w, all + at, len); /* the good records, packed */
        w += len, at += len;
    }
    n = w;
    if (skipped) { /* the good records alone, in the journal's place */
        fprintf(stderr, "attnlab: %s: %lu bytes of torn records skipped; %d runs kept\n", path, (unsigned long)skipped,
                count);
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        ok = (f = fopen(tmp, "wb")) != NULL;
        if (ok) ok = fwrite(all, 1, n, f) == n, ok = fclose(f) == 0 && ok;
        if (!ok || rename(tmp, path) != 0) {
            fprintf(stderr, "attnlab: cannot rewrite %s: %s\n", path, strerror(errno));
            remove(tmp);
            count = -1;
        }
    }
    free(all);
    return count;
}

/* Opens the journal: appended to when resuming, new otherwise; 0 (and a message) if it cannot be. */
static int journal_open(const job_set *js, int njobs, int append)
{
    char path[1100];
    journal_path(js, path, sizeof path);
    if (!(journal = fopen(path, append ? "ab" : "wb"))) {
        fprintf(stderr, "attnlab: cannot write %s: %s\n", path, strerror(errno));
        return 0;
    }
    if ((!append || ftell(journal) == 0) &&
        fprintf(journal, "attnlab-jobs 1 %d %016llx %s\n", njobs, (unsigned long long)run_key, run_line) < 0)
        write_failure(path);
    if (fflush(journal) != 0) write_failure(path);
    return 1;
}

/* Appends run j's result (its n bytes at q) to the journal; the caller holds the lock. */
static void journal_add(const job_set *js, int j, const unsigned char *q, size_t n)
{
    uint32_t jn[2];
    uint64_t h = fnv(q, n, run_key);
    char path[1100];
    if (!journal) return;
    jn[0] = (uint32_t)j; jn[1] = (uint32_t)n;
    if (fwrite(jn, sizeof jn, 1, journal) != 1 || fwrite(q, 1, n, journal) != n || fwrite(&h, sizeof h, 1, journal) != 1 ||
        fflush(journal) != 0) {
        journal_path(js, path, sizeof path);
        write_failure(path);
    }
}

/* Run j finished (locally, or its bytes came from a rank): into the journal if it succeeded, its rows
   into the CSV stream if it ran elsewhere, and counted on the progress line. */
/* ---- snapshots of a run in progress: FILE.run-J beside the CSV ----
   "attnlab-run 1 KEY J BYTES\n", the bytes, their FNV-1a hash; written to a temporary file and
   renamed over the last one, so a kill leaves the previous snapshot whole. */
int snapshot_every = 0;
static const char *snap_csv; /* the CSV of the runs under way */

static void snap_path(int j, char *path, size_t n, int tmp) { snprintf(path, n, "%s.run-%d%s", snap_csv, j, tmp ? ".tmp" : ""); }

int snap_due(long step) { return snapshot_every > 0 && snap_csv && step % snapshot_every == 0; }

void snap_save(int j, const jobbuf *b)
{
    char path[1100], final[1100];
    uint64_t h = fnv(b->p, b->n, run_key);
    FILE *f;
    if (mpi_rank() > 0 || !snap_csv || b->bad) return;
    snap_path(j, path, sizeof path, 1);
    snap_path(j, final, sizeof final, 0);
    if (!(f = fopen(path, "wb"))) { fprintf(stderr, "\nattnlab: cannot write %s: %s\n", path, strerror(errno)); return; }
    fprintf(f, "attnlab-run 1 %016llx %d %lu\n", (unsigned long long)run_key, j, (unsigned long)b->n);
    if (fwrite(b->p, 1, b->n, f) != b->n || fwrite(&h, sizeof h, 1, f) != 1 || fclose(f) != 0 || rename(path, final) != 0)
        fprintf(stderr, "\nattnlab: cannot write %s: %s\n", final, strerror(errno));
}

int snap_resumed(int j, jobbuf *b, long step)
{
    int ok = !b->bad && b->pos == b->n;
    free(b->p);
    b->p = NULL;
    if (!ok) /* written by another build: its state is not this run's */
        fprintf(stderr, "\nattnlab: run %d's snapshot does not fit this build's run; remove it, or rerun without --resume\n", j);
    else if (mpi_rank() == 0)
        fprintf(stderr, "\nattnlab: run %d goes on from its snapshot at step %ld\n", j, step);
    return ok;
}

int snap_resume(int j, jobbuf *b)
{
    char path[1100];
    unsigned long long key = 0;
    unsigned long n = 0;
    int jj = -1;
    uint64_t h = 0;
    FILE *f;
    memset(b, 0, sizeof *b);
    if (!resume_runs || !snap_csv) return 0;
    snap_path(j, path, sizeof path, 0);
    if (!(f = fopen(path, "rb"))) return 0;
    if (fscanf(f, "attnlab-run 1 %llx %d %lu", &key, &jj, &n) == 3 && fgetc(f) == '\n' && key == run_key && jj == j &&
        n < (1ul << 31) && (b->p = (unsigned char *)malloc(n ? n : 1)) && fread(b->p, 1, n, f) == n &&
        fread(&h, sizeof h, 1, f) == 1 && h == fnv(b->p, n, run_key)) {
        b->n = n;
        b->reading = 1;
        fclose(f);
        return 1;
    }
    fclose(f);
    free(b->p);
    b->p = NULL;
    fprintf(stderr, "\nattnlab: %s is not a snapshot of this command line's run %d; the run starts afresh\n", path, j);
    return 0;
}

static void snap_remove(int j)
{
    char path[1100];
    if (!snap_csv || mpi_rank() > 0) return;
    snap_path(j, path, sizeof path, 0);
    remove(path);
}

static run_progress *prog_of(progress_set *p, int j) { return (run_progress *)(p->runs + (size_t)j * p->stride + p->offset); }

static void finished(const job_set *js, int j, jobbuf *b, int remote, progress_set *p)
{
    size_t start = b->pos; /* a rank's bytes start with the run's index */
    int ok = js->xfer(js->ctx, j, b);
    if (ok && !b->bad && !stop_requested) {
        journal_add(js, j, b->p + start, b->n - start);
        snap_remove(j); /* the journal has it all now */
    }
    if (remote) {
        char line[512];
        int k;
        for (k = 0; js->csv && js->line(js->ctx, j, k, line, sizeof line); k++) csv_row(js->csv, line);
        prog_of(p, j)->done = p->total / p->njobs;
    }
    p->finished++;
}

#ifdef ATTNLAB_MPI
static int run_jobs_mpi(int njobs, const job_set *js, progress_set *p, char *done);
#endif

int runs_end(int lost, int failed, int njobs, const char *who, int *rc)
{
    if (lost < 0) { *rc = 1; return 0; }
    if (mpi_rank() > 0) { *rc = stop_requested ? 130 : 0; return 0; }
    if (stop_requested) printf("interrupted: reporting what was done\n");
    failed += lost;
    if (failed) fprintf(stderr, "%s: %d of %d runs failed or were lost (see above); no table\n", who, failed, njobs);
    *rc = failed ? 1 : stop_requested ? 130 : 0;
    return failed ? 1 : 2;
}

int run_jobs(int njobs, int threads, const job_set *js, progress_set *p)
{
    char *done = (char *)calloc((size_t)(njobs > 0 ? njobs : 1), 1);
    int j, resumed = 0, lost = 0, bad = 0;
    if (!done) { fprintf(stderr, "attnlab: out of memory\n"); return -1; }
    attn_set_threads(1); /* parallel over runs, each run on one thread */
    snap_csv = js->csv_path;
    if (js->csv_path && mpi_rank() == 0) {
        bad = (resume_runs && (resumed = journal_read(js, njobs, done)) < 0) || !journal_open(js, njobs, resume_runs) ||
              !csv_begin(js->csv, js->csv_path, js->csv_header);
        for (j = 0; !bad && j < njobs; j++)
            if (done[j]) {
                char line[512];
                int k;
                for (k = 0; js->csv && js->line(js->ctx, j, k, line, sizeof line); k++) csv_row(js->csv, line);
                prog_of(p, j)->done = p->total / njobs;
                p->finished++;
            }
        if (resumed > 0) fprintf(stderr, "attnlab: --resume: %d of %d runs were done already (%s.jobs)\n", resumed, njobs, js->csv_path);
    } else if (resume_runs && mpi_rank() == 0) {
        fprintf(stderr, "attnlab: --resume needs --csv (the journal of finished runs is kept beside the CSV)\n");
        bad = 1;
    }
#ifdef ATTNLAB_MPI
    if (mpi_size() > 1 && data_parallel) { /* every rank runs every run: each learns what to skip */
        MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Bcast(done, njobs, MPI_CHAR, 0, MPI_COMM_WORLD);
    }
#endif
    if (bad) {
        if (journal) fclose(journal);
        journal = NULL;
        free(done);
        return -1;
    }
    if (data_parallel) threads = 1; /* the ranks share each run; the runs go in order */
#ifdef ATTNLAB_MPI
    if (mpi_size() > 1 && !data_parallel) {
        lost = run_jobs_mpi(njobs, js, p, done);
    } else
#endif
    {
#ifdef _OPENMP
        if (threads > 0) omp_set_num_threads(threads);
#pragma omp parallel for schedule(dynamic, 1)
#else
        (void)threads;
#endif
        for (j = 0; j < njobs; j++) {
            jobbuf b = {0};
            if (done[j]) continue;
            js->one(js->ctx, j);
            if (mpi_rank() > 0) continue; /* data-parallel: rank 0 keeps the results */
#ifdef _OPENMP
#pragma omp critical(journal)
#endif
            finished(js, j, &b, 0, p);
            free(b.p);
            progress_report(p, 1);
        }
    }
    fprintf(stderr, "\n");
    if (journal) fclose(journal);
    journal = NULL;
    snap_csv = NULL;
    free(done);
    return lost;
}

/* ---- data-parallel gradients ----
   The chunks' gradients are added as integers: each is scaled by its weight and 2^e, rounded to an
   int64, and the int64 sums are added up over the ranks. Integer addition does not depend on its
   order, so the sum is the same bits on any number of ranks; e makes the largest |w g| of the step
   (the maximum over every rank, also order-free) take 2^62 / nchunks, so no sum can overflow. */
int data_parallel = 0, dp_chunks = 16;

int dp_mine(int c) { return c % mpi_size() == mpi_rank(); }

int dp_begin(dp_sum *d, size_t n, int nchunks)
{
    int mine = 0, c;
    for (c = 0; c < nchunks; c++) mine += dp_mine(c);
    memset(d, 0, sizeof *d);
    d->n = n; d->nchunks = nchunks;
    d->g = (attn_float *)malloc(sizeof(attn_float) * n * (size_t)(mine ? mine : 1));
    d->w = (double *)malloc(sizeof(double) * (size_t)(mine ? mine : 1));
    d->q = (int64_t *)malloc(sizeof(int64_t) * n);
    d->loss = (double *)calloc((size_t)nchunks, sizeof(double));
    return d->g && d->w && d->q && d->loss;
}

void dp_free(dp_sum *d) { free(d->g); free(d->w); free(d->q); free(d->loss); }

void dp_add(dp_sum *d, int c, const attn_float *g, double w, double loss)
{
    memcpy(d->g + (size_t)d->have * d->n, g, sizeof(attn_float) * d->n);
    d->w[d->have++] = w;
    d->loss[c] = w * loss;
}

double dp_end(dp_sum *d, attn_float *g)
{
    double big = 0, scale, loss = 0;
    size_t i;
    int k, c;
    for (k = 0; k < d->have; k++)
        for (i = 0; i < d->n; i++) {
            double a = fabs(d->w[k] * d->g[(size_t)k * d->n + i]);
            if (!(a <= big)) big = a; /* NaN and inf win */
        }
#ifdef ATTNLAB_MPI
    MPI_Allreduce(MPI_IN_PLACE, &big, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, d->loss, d->nchunks, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* one nonzero per slot */
#endif
    for (c = 0; c < d->nchunks; c++) loss += d->loss[c];
    memset(d->loss, 0, sizeof(double) * (size_t)d->nchunks);
    if (!isfinite(big)) { /* as the single process would: the step goes ahead with NaN */
        for (i = 0; i < d->n; i++) g[i] = (attn_float)NAN;
        d->have = 0;
        return loss;
    }
    scale = big > 0 ? ldexp(1, 62 - (int)ceil(log2(big * d->nchunks)) - 1) : 1;
    memset(d->q, 0, sizeof(int64_t) * d->n);
    for (k = 0; k < d->have; k++)
        for (i = 0; i < d->n; i++) d->q[i] += (int64_t)llrint(d->w[k] * d->g[(size_t)k * d->n + i] * scale);
#ifdef ATTNLAB_MPI
    MPI_Allreduce(MPI_IN_PLACE, d->q, (int)d->n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
#endif
    for (i = 0; i < d->n; i++) g[i] = (attn_float)((double)d->q[i] / scale);
    d->have = 0;
    return loss;
}

#ifndef ATTNLAB_MPI
int mpi_rank(void) { return 0; }
int mpi_size(void) { return 1; }
void mpi_start(int *argc, char ***argv) { (void)argc; (void)argv; }
void mpi_end(void) {}
#else
/* ---- over MPI ranks ----
   Tags: a rank asks for work (READY), gets a run index (RUN) or the end (STOP), sends back the run's
   bytes (RESULT: the index, then the bytes) and, from a thread, every second a HEARTBEAT with the
   index of its run and the units done. Rank 0 runs a dispatcher thread beside its own runs; a rank
   that sends no heartbeat for --rank-timeout seconds has died: its run is reported lost. */
enum { TAG_READY = 1, TAG_RUN, TAG_STOP, TAG_RESULT, TAG_HEARTBEAT };
static int rank = 0, size = 1;
static volatile int beating = 0, current_run = -1;
static pthread_t beat_thread;
static progress_set *beat_prog;

static void nap(void) { struct timespec t = {0, 2000000}; nanosleep(&t, NULL); }

static void *beat(void *arg)
{
    (void)arg;
    while (beating) {
        long msg[2];
        int i;
        msg[0] = current_run;
        msg[1] = current_run >= 0 && beat_prog ? prog_of(beat_prog, current_run)->done : 0;
        MPI_Send(msg, 2, MPI_LONG, 0, TAG_HEARTBEAT, MPI_COMM_WORLD);
        for (i = 0; i < 500 && beating; i++) nap();
    }
    return NULL;
}

int mpi_rank(void) { return rank; }
int mpi_size(void) { return size; }

void mpi_start(int *argc, char ***argv)
{
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (provided < MPI_THREAD_MULTIPLE && size > 1) {
        if (rank == 0) fprintf(stderr, "attnlab-mpi: this MPI library lacks MPI_THREAD_MULTIPLE; run on one rank\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank > 0 && !freopen("/dev/null", "w", stdout)) exit(1); /* rank 0 prints the reports */
    if (rank > 0) {
        beating = 1;
        pthread_create(&beat_thread, NULL, beat, NULL);
    }
}

static void beat_stop(void)
{
    if (!beating) return;
    beating = 0;
    pthread_join(beat_thread, NULL);
}

static int dispatched = 0, deaths = 0; /* rank 0 handed out runs (if not, the others wait for its stop); ranks died */

void mpi_end(void)
{
    int r, stop = -1;
    beat_stop();
    for (r = 1; rank == 0 && !dispatched && r < size; r++) MPI_Send(&stop, 1, MPI_INT, r, TAG_STOP, MPI_COMM_WORLD);
    if (deaths) { /* MPI_Finalize waits for every rank, the dead too: the reports are written, so end the job */
        fflush(NULL);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Finalize();
}

/* A rank above 0: runs what rank 0 hands out until it says stop (the reports are rank 0's). */
static void worker(const job_set *js, progress_set *p)
{
    int j;
    beat_prog = p;
    MPI_Send(NULL, 0, MPI_INT, 0, TAG_READY, MPI_COMM_WORLD);
    for (;;) {
        MPI_Status st;
        int flag = 0;
        jobbuf b = {0};
        while (!flag && !stop_requested) { MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st); if (!flag) nap(); }
        if (stop_requested) break;
        MPI_Recv(&j, 1, MPI_INT, 0, st.MPI_TAG, MPI_COMM_WORLD, &st);
        if (st.MPI_TAG == TAG_STOP) break;
        current_run = j;
        js->one(js->ctx, j);
        current_run = -1;
        if (stop_requested) break; /* an interrupted run is not a result */
        jb_io(&b, &j, sizeof j);
        js->xfer(js->ctx, j, &b);
        MPI_Send(b.p, b.bad ? 0 : (int)b.n, MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD);
        free(b.p);
    }
    beat_prog = NULL;
}

/* Rank 0's bookkeeping, shared by its dispatcher thread and its own runs. */
typedef struct {
    pthread_mutex_t lock;
    const job_set *js;
    progress_set *p;
    char *state;     /* per run: 0 to do, 1 running, 2 done, 3 lost */
    int *holder;     /* per rank: the run it holds, or -1 */
    time_t *seen;    /* per rank: its last message */
    char *gone;      /* per rank: stopped, or dead */
    int njobs, next, local_done, lost;
} hub;

/* The next run to do, marked running, or -1. Under the lock. */
static int take(hub *h)
{
    while (h->next < h->njobs && h->state[h->next]) h->next++;
    if (h->next >= h->njobs || stop_requested) return -1;
    h->state[h->next] = 1;
    return h->next++;
}

static void hand_out(hub *h, int r)
{
    int j = take(h);
    h->holder[r] = j;
    h->seen[r] = time(NULL);
    if (j < 0) { MPI_Send(&j, 1, MPI_INT, r, TAG_STOP, MPI_COMM_WORLD); h->gone[r] = 1; }
    else MPI_Send(&j, 1, MPI_INT, r, TAG_RUN, MPI_COMM_WORLD);
}

static void *dispatch(void *arg)
{
    hub *h = (hub *)arg;
    int r, busy = 1;
    while (busy) {
        MPI_Status st;
        int flag = 0, n;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (!flag) nap();
        pthread_mutex_lock(&h->lock);
        if (flag) {
            r = st.MPI_SOURCE;
            h->seen[r] = time(NULL);
            if (st.MPI_TAG == TAG_HEARTBEAT) {
                long msg[2];
                MPI_Recv(msg, 2, MPI_LONG, r, TAG_HEARTBEAT, MPI_COMM_WORLD, &st);
                if (msg[0] >= 0 && msg[0] == h->holder[r]) prog_of(h->p, (int)msg[0])->done = msg[1];
            } else if (st.MPI_TAG == TAG_READY) {
                MPI_Recv(NULL, 0, MPI_INT, r, TAG_READY, MPI_COMM_WORLD, &st);
                hand_out(h, r);
            } else if (st.MPI_TAG == TAG_RESULT) {
                jobbuf b = {0};
                int j = -1;
                MPI_Get_count(&st, MPI_BYTE, &n);
                b.p = (unsigned char *)malloc((size_t)n + 1);
                b.n = (size_t)n;
                b.reading = 1;
                MPI_Recv(b.p, n, MPI_BYTE, r, TAG_RESULT, MPI_COMM_WORLD, &st);
                jb_io(&b, &j, sizeof j);
                if (!b.bad && j == h->holder[r]) {
                    finished(h->js, j, &b, 1, h->p);
                    h->state[j] = b.bad ? 3 : 2;
                    if (b.bad) { h->lost++; fprintf(stderr, "\nattnlab-mpi: rank %d sent a broken result for run %d\n", r, j); }
                }
                free(b.p);
                hand_out(h, r);
            }
        }
        for (r = 1; r < size; r++) /* a rank that fell silent has died */
            if (!h->gone[r] && difftime(time(NULL), h->seen[r]) > rank_timeout) {
                if (h->holder[r] >= 0) {
                    fprintf(stderr, "\nattnlab-mpi: rank %d has sent nothing for %d s: run %d is lost (rerun with --resume)\n", r,
                            rank_timeout, h->holder[r]);
                    h->state[h->holder[r]] = 3;
                    h->lost++;
                } else fprintf(stderr, "\nattnlab-mpi: rank %d has sent nothing for %d s: going on without it\n", r, rank_timeout);
                h->gone[r] = 1;
                h->holder[r] = -1;
                deaths++;
            }
        busy = !h->local_done;
        for (r = 1; r < size; r++) busy |= !h->gone[r] && (h->holder[r] >= 0 || !stop_requested);
        if (stop_requested) /* nothing more is handed out; the runs out there are interrupted too */
            for (r = 1; r < size; r++) if (h->holder[r] >= 0 && !h->gone[r]) { h->gone[r] = 1; h->holder[r] = -1; }
        pthread_mutex_unlock(&h->lock);
        progress_report(h->p, 0);
    }
    return NULL;
}

static int run_jobs_mpi(int njobs, const job_set *js, progress_set *p, char *done)
{
    hub h;
    pthread_t t;
    int j, r;
    if (rank > 0) { worker(js, p); return 0; }
    dispatched = 1;
    memset(&h, 0, sizeof h);
    pthread_mutex_init(&h.lock, NULL);
    h.js = js; h.p = p; h.njobs = njobs;
    h.state = (char *)calloc((size_t)njobs, 1);
    h.holder = (int *)malloc(sizeof(int) * (size_t)size);
    h.seen = (time_t *)calloc((size_t)size, sizeof(time_t));
    h.gone = (char *)calloc((size_t)size, 1);
    if (!h.state || !h.holder || !h.seen || !h.gone) { fprintf(stderr, "attnlab: out of memory\n"); exit(1); }
    for (j = 0; j < njobs; j++) h.state[j] = done[j] ? 2 : 0;
    for (r = 0; r < size; r++) { h.holder[r] = -1; h.seen[r] = time(NULL); }
    pthread_create(&t, NULL, dispatch, &h);
    for (;;) { /* rank 0's own runs */
        jobbuf b = {0};
        pthread_mutex_lock(&h.lock);
        j = take(&h);
        pthread_mutex_unlock(&h.lock);
        if (j < 0) break;
        js->one(js->ctx, j);
        pthread_mutex_lock(&h.lock);
        finished(js, j, &b, 0, p);
        h.state[j] = 2;
        pthread_mutex_unlock(&h.lock);
        free(b.p);
        progress_report(p, 1);
    }
    pthread_mutex_lock(&h.lock);
    h.local_done = 1;
    pthread_mutex_unlock(&h.lock);
    pthread_join(t, NULL);
    if (h.lost) fprintf(stderr, "attnlab-mpi: %d of %d runs were lost; the table needs them: rerun with --resume\n", h.lost, njobs);
    free(h.state); free(h.holder); free(h.seen); free(h.gone);
    pthread_mutex_destroy(&h.lock);
    return h.lost;
}
#endif
