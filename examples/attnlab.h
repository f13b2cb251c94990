/* attnlab.h: what attnlab's files share. attnlab.c holds the driver, the expressive-attention
   paper's part, the option parsers and the progress line; hyla.c the HYLA paper's part; lm.c the
   Cog paper's miniature language models. */
#ifndef ATTNLAB_H
#define ATTNLAB_H
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
/* A whole decimal integer in [lo, 1e9] into *out; 0 (and *out untouched) if s is not one. */
int parse_int(const char *s, int lo, int *out);
/* A whole, finite floating-point number into *out; 0 if s is not one. */
int parse_double(const char *s, double *out);
/* The most seeds (runs per setting) a command takes, and the largest model width, context and
   batch (so that the widths the models derive, 4 d for an MLP say, stay far inside int). */
#define MAX_SEEDS 10000
#define MAX_THREADS 512 /* --threads: more fail in the OpenMP runtime, and no machine here has them */
#define MAX_WIDTH 65536
/* The sparse attention patterns the transformer commands share (include attn.h first):
   --window W, --dilation D, --global G (Longformer), --bigbird-block B, --bigbird-random R,
   --bigbird-seed S (BigBird), --linformer-k K (Linformer), --kv-heads KH (grouped-query
   attention) and --qk-norm 1 (QK-norm). sparse_option returns 1 when a is one of them (its value v parsed, *ok 0 if v is not
   valid), 0 when not; sparse_apply sets them in a model configuration. */
typedef struct {
    int window, dilation, global, bigbird_block, bigbird_random, bigbird_seed, linformer_k, kv_heads, qk_norm;
} sparse_opts;
int sparse_option(sparse_opts *s, const char *a, const char *v, int *ok);
#ifdef ATTN_H_INCLUDED
void sparse_apply(const sparse_opts *s, attn_transformer_config *c);
#endif
#define SPARSE_HELP                                                                                  \
    "  --window W, --dilation D, --global G   a sliding window (Longformer) in every layer: keys\n"    \
    "                   within W steps of D, and the first G tokens                  [0, 1, 0]\n"   \
    "  --bigbird-block B, --bigbird-random R, --bigbird-seed S   BigBird blocks of B tokens in\n"    \
    "                   every layer, R random blocks per row, the layout's seed      [0, 0, 0]\n"   \
    "  --linformer-k K  Linformer: keys and values compressed to K rows in every layer\n"            \
    "                   (non-causal models without T5 biases or documents)           [0]\n"     \
    "  --kv-heads KH    grouped-query attention: KH key and value heads (1: multi-query;\n"      \
    "                   0: one per head; softmax-family kinds)                        [0]\n"      \
    "  --qk-norm 1      QK-norm: each head's q and k RMS-normalised with learned gains\n"        \
    "                   before the scores (OLMo 2, Gemma 3)                          [0]\n"

/* Whether a file can be written at path (NULL: nothing to write), checked before any work starts: a
   file that is not there is created and removed again. Prints "attnlab: cannot write PATH: why" and
   returns 0 if not. */
int output_ok(const char *path);
/* Where run TAG of a grid of nruns saves its model (--save F): F itself for one run, else F with
   "-TAG" before its extension (TAG: kind-sSEED, and the setting where a grid has several). */
void run_save_path(const char *save, int nruns, const char *tag, char *path, size_t size);
/* A command's CSV as its runs go: csv_begin truncates the file and writes the header line; csv_row
   appends one line (from any thread, flushed at once, so an interrupted run leaves a well-formed
   prefix); csv_end closes it. At the end the command rewrites the whole file in its fixed order, so
   a finished run's CSV does not depend on which run finished first. path NULL: all do nothing. */
typedef struct {
    FILE *f;
    const char *path;
} csv_stream;
int csv_begin(csv_stream *c, const char *path, const char *header);
void csv_row(csv_stream *c, const char *line);
int csv_end(csv_stream *c); /* 0 if a write failed */
/* A write that failed (a full disk, /dev/full): the first is reported with path and why, and
   attnlab exits non-zero at the end. */
extern int write_failed;
void write_failure(const char *path);
/* The line of evaluation k of run j of a command's results ctx into line [n]; 0 (nothing written)
   when run j has no evaluation k. csv_write writes the whole file in run order with it; 0 (and a
   message) if the file cannot be written. */
typedef int (*csv_line_fn)(const void *ctx, int j, int k, char *line, size_t n);
int csv_write(const char *path, const char *header, int njobs, csv_line_fn fn, const void *ctx);
/* Set by SIGINT and SIGTERM once catch_stop() ran: the runs stop, the command reports what was
   done and exits 130. */
extern volatile sig_atomic_t stop_requested;
/* --dry-run (any command): parse and check everything (options, the models' configurations, the
   corpus, that the outputs can be written), print what would run, and exit 0 before anything is
   allocated or run. A real run builds each kind's model once before the runs start. */
extern int dry_run;
/* The estimate before the first run (attnlab.c): limits_ok refuses, unless --force (force_limits),
   runs past half this machine's memory or 48 hours; transformer_probe gives a transformer's bytes
   a run and one sequence's forward time. */
extern int force_limits;
int limits_ok(const char *cmd, double run_bytes, int runs, int threads, double fwd_secs, double train_seqs,
              double eval_seqs);
int transformer_probe(const attn_transformer_config *cf, int B, int T, double *bytes, double *secs);
/* Set when an option parser printed the help for --help: the command then exits 0 (the parsers never
   call exit, so attnlab can run inside another program, such as its fuzz target). */
extern int help_shown;
void catch_stop(void);
/* The mean of x [n] and, in *sd, its sample standard deviation (0 for n = 1). */
double mean_sd(const double *x, int n, double *sd);
/* A figure title's "seed" suffix: "s (band: +-1 sd)" for several seeds, "" for one (no band). */
const char *seeds_note(int seeds);
/* Welch's test of mean(b) - mean(a) (see attnlab.c); 0 when it cannot be computed. */
typedef struct { double diff, lo, hi, t, df, p; } welch_result;
int welch(const double *a, int na, const double *b, int nb, welch_result *w);
/* The paired t test of b - a over n pairs (a [i] and b [i] one unit, such as one seed): the mean
   difference, its 95% interval, t, n - 1 and p; 0 when n < 2 or the differences have no spread. */
int paired_t(const double *a, const double *b, int n, welch_result *w);
/* The progress line of a set of parallel runs, on stderr: on a terminal every second, in place; into a
   file or pipe every 30 s, one line each: "  F/N runs done, D/T UNIT, METRIC V, Es elapsed, ~Ls left",
   V the mean of the runs' latest evaluations. Each run record embeds a run_progress, which the run
   updates; progress_report (from any thread) prints when the line is due, or always with force. */
typedef struct {
    volatile long done;       /* units done */
    volatile double latest;   /* the latest evaluation, once evaluated is set */
    volatile int evaluated;
} run_progress;
typedef struct {
    int tty, njobs;
    volatile int finished;
    long total;
    time_t start, last;
    const char *runs, *unit, *metric;
    size_t stride, offset; /* run k's run_progress is at runs + k stride + offset */
} progress_set;
void progress_begin(progress_set *p, const void *runs, size_t stride, size_t offset, int njobs, long total, const char *unit,
                    const char *metric);
void progress_report(progress_set *p, int force);
/* A run's result as bytes (jobs.c), for the journal that --resume reads and for the MPI ranks: a
   command's xfer(ctx, j, b) passes every field of run j's result through jb_io, which appends n
   bytes at x to b (b->reading 0) or reads them back into x (1; b->bad once b runs out), and
   returns whether run j succeeded (only those count as done). jb_count passes a count the same way
   and marks b bad if it is outside [0, max] (an array's length, read before the array). */
typedef struct {
    unsigned char *p;
    size_t n, cap, pos;
    int reading, bad;
} jobbuf;
void jb_io(jobbuf *b, void *x, size_t n);
void jb_count(jobbuf *b, int *n, int max);
/* A command's runs: one(ctx, j) computes run j into the command's results; xfer as above; line gives
   the CSV rows of run j; csv is the command's CSV stream, which run_jobs begins at csv_path with
   the header line csv_header (csv_path NULL: no CSV, no journal) and to which it writes the rows of
   the runs computed elsewhere or done before a --resume; the journal is csv_path.jobs. */
typedef struct {
    void (*one)(void *ctx, int j);
    int (*xfer)(void *ctx, int j, jobbuf *b);
    csv_line_fn line;
    csv_stream *csv;
    const char *csv_path, *csv_header;
    void *ctx;
} job_set;
/* Runs the runs j = 0 .. njobs - 1: in parallel over the cores (threads of them, 0: all; the
   library single-threaded inside each), or over the MPI ranks in attnlab-mpi; each finished run is
   appended to the journal; with --resume (resume_runs) the runs the journal holds are read back
   instead of run. Counts each finished run on p's line; then a newline. Returns the number of runs
   lost (a rank died), which the table then lacks; or -1 (and a message) when nothing could start
   (--resume without a CSV, a journal of another command line, a file that cannot be written), and
   then nothing was written. */
int run_jobs(int njobs, int threads, const job_set *js, progress_set *p);
/* Snapshots of a run in progress (--snapshot-every S, with --csv F): a run whose step s satisfies
   snap_due(s) passes its whole state (parameters, optimizer state, RNG streams, its curve so far)
   through jb_io into a jobbuf and snap_save(j, b) writes it to F.run-J (rank 0; the last one
   replaced whole); with --resume, snap_resume(j, b) gives the state back for reading (1) or 0 (none,
   or not of this command line: then said, and the run starts afresh); after reading it through
   jb_io, snap_resumed(j, b, step) frees b and says whether it fitted (a message either way). The
   run then goes on from there and ends with the same bits as if never stopped. A run's snapshot
   goes when it finishes. */
extern int snapshot_every;
int snap_due(long step);
void snap_save(int j, const jobbuf *b);
int snap_resume(int j, jobbuf *b);
int snap_resumed(int j, jobbuf *b, long step);
/* After run_jobs returned lost, with failed of the njobs runs failed: says what happened (an
   interruption; the runs failed or lost, by program who), sets the exit status *rc, and returns what
   this process writes: 0 nothing (a rank above 0, or nothing ran), 1 the CSV of what was done, 2 the
   tables and figures too. */
int runs_end(int lost, int failed, int njobs, const char *who, int *rc);
/* The command line that a journal must match (--threads aside), set once by main. */
void jobs_key(int argc, char **argv);
/* --resume; --rank-timeout S: the seconds of silence after which a rank counts as dead [60]. */
extern int resume_runs, rank_timeout;
/* Data-parallel training (--data-parallel, --dp-chunks C [16]): every batch is cut into C fixed
   chunks; chunk c is rank c mod ranks' (dp_mine); each rank passes the gradient of each of its
   chunks, computed on its own, to dp_add with its weight w (its share of the batch: the batch
   gradient is the sum of w g) and its loss; dp_end writes the batch gradient into g [n] on every
   rank and returns the batch loss. The sum is exact integer arithmetic on scaled gradients (jobs.c),
   so 1, 2 or C ranks (and attnlab itself) give the same bits. In run_jobs, every rank then runs
   every run, in order. */
extern int data_parallel, dp_chunks;
typedef struct {
    size_t n;
    int nchunks, have;
    attn_float *g;      /* [have, n]: this rank's chunks' gradients */
    double *w, *loss;   /* [have] weights; [nchunks] weighted losses */
    int64_t *q;         /* [n]: the scaled sum */
} dp_sum;
int dp_mine(int c);
int dp_begin(dp_sum *d, size_t n, int nchunks);
void dp_add(dp_sum *d, int c, const attn_float *g, double w, double loss);
double dp_end(dp_sum *d, attn_float *g);
void dp_free(dp_sum *d);
/* MPI (attnlab-mpi): start and end it (nothing in attnlab); this process' rank and the number of
   ranks (0 and 1 in attnlab). Ranks above 0 run what rank 0 hands out and write no CSV, no
   report (stdout goes to /dev/null), no progress line (a run's own files, such as --save, are
   written by the rank that runs it); rank 0 checks the outputs. */
void mpi_start(int *argc, char ***argv);
void mpi_end(void);
int mpi_rank(void);
int mpi_size(void);
/* Whether the command line is for the HYLA paper's tasks (--task fuzzy|sraven, preset hyla-*), and
   the program for those. */
int hyla_wants(int argc, char **argv);
int hyla_main(int argc, char **argv);
/* attnlab lm: the Cog paper's language models in miniature (lm.c). */
int lm_main(int argc, char **argv);
int lm_sample(int argc, char **argv);
int lm_convert(int argc, char **argv);
/* attnlab embed and search (examples/embed.c): sentence embeddings of a BERT in HF layout. */
int embed_main(int argc, char **argv);
/* attnlab seq2seq and its presets: the thesis' encoder-decoder (seq2seq.c). */
int s2s_main(int argc, char **argv);
/* The command line of `attnlab preset NAME [--quick] [options]` as `attnlab CMD preset-options
   [options]` in args [max] (tokens of full, or of quick when --quick is among the options, split
   into buf [bufsz]; --quick itself dropped); returns the count, *is_quick whether it was quick.
   Creates results/ when the preset writes there. */
int preset_argv(int argc, char **argv, const char *cmd, const char *full, const char *quick, char *buf, size_t bufsz, char **args, int max,
                int *is_quick);
#endif
