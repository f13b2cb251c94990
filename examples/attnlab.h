/* attnlab.h: what attnlab's files share. attnlab.c holds the driver, the expressive-attention
   paper's part, the option parsers and the progress line; hyla.c the HYLA paper's part; lm.c the
   Cog paper's miniature language models. */
#ifndef ATTNLAB_H
#define ATTNLAB_H
#include <signal.h>
#include <stdio.h>
#include <time.h>
/* A whole decimal integer in [lo, 1e9] into *out; 0 (and *out untouched) if s is not one. */
int parse_int(const char *s, int lo, int *out);
/* A whole, finite floating-point number into *out; 0 if s is not one. */
int parse_double(const char *s, double *out);
/* The most seeds (runs per setting) a command takes, and the largest model width, context and
   batch (so that the widths the models derive, 4 d for an MLP say, stay far inside int). */
#define MAX_SEEDS 10000
#define MAX_WIDTH 65536
/* Whether a file can be written at path (NULL: nothing to write), checked before any work starts: a
   file that is not there is created and removed again. Prints "attnlab: cannot write PATH: why" and
   returns 0 if not. */
int output_ok(const char *path);
/* A command's CSV as its runs go: csv_begin truncates the file and writes the header line; csv_row
   appends one line (from any thread, flushed at once, so an interrupted run leaves a well-formed
   prefix); csv_end closes it. At the end the command rewrites the whole file in its fixed order, so
   a finished run's CSV does not depend on which run finished first. path NULL: all do nothing. */
typedef struct {
    FILE *f;
} csv_stream;
int csv_begin(csv_stream *c, const char *path, const char *header);
void csv_row(csv_stream *c, const char *line);
void csv_end(csv_stream *c);
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
/* Set when an option parser printed the help for --help: the command then exits 0 (the parsers never
   call exit, so attnlab can run inside another program, such as its fuzz target). */
extern int help_shown;
void catch_stop(void);
/* The mean of x [n] and, in *sd, its sample standard deviation (0 for n = 1). */
double mean_sd(const double *x, int n, double *sd);
/* Welch's test of mean(b) - mean(a) (see attnlab.c); 0 when it cannot be computed. */
typedef struct { double diff, lo, hi, t, df, p; } welch_result;
int welch(const double *a, int na, const double *b, int nb, welch_result *w);
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
/* Runs one(ctx, j) for j = 0 .. njobs - 1 in parallel over the runs (threads of them, 0: all cores;
   the library single-threaded inside each), counting each finished run on p's line; then a newline. */
void run_jobs(int njobs, int threads, void (*one)(void *ctx, int j), void *ctx, progress_set *p);
/* Whether the command line is for the HYLA paper's tasks (--task fuzzy|sraven, preset hyla-*), and
   the program for those. */
int hyla_wants(int argc, char **argv);
int hyla_main(int argc, char **argv);
/* attnlab lm: the Cog paper's language models in miniature (lm.c). */
int lm_main(int argc, char **argv);
int lm_sample(int argc, char **argv);
/* attnlab seq2seq and its presets: the thesis' encoder-decoder (seq2seq.c). */
int s2s_main(int argc, char **argv);
/* The command line of `attnlab preset NAME [--quick] [options]` as `attnlab CMD preset-options
   [options]` in args [max] (tokens of full, or of quick when --quick is among the options, split
   into buf [bufsz]; --quick itself dropped); returns the count, *is_quick whether it was quick.
   Creates results/ when the preset writes there. */
int preset_argv(int argc, char **argv, const char *cmd, const char *full, const char *quick, char *buf, size_t bufsz, char **args, int max,
                int *is_quick);
#endif
