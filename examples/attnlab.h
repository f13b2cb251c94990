/* attnlab.h: what attnlab's files share. attnlab.c holds the driver, the expressive-attention
   paper's part, the option parsers and the progress line; hyla.c the HYLA paper's part; lm.c the
   Cog paper's miniature language models. */
#ifndef ATTNLAB_H
#define ATTNLAB_H
#include <time.h>
/* A whole decimal integer in [lo, 1e9] into *out; 0 (and *out untouched) if s is not one. */
int parse_int(const char *s, int lo, int *out);
/* A whole floating-point number into *out; 0 if s is not one. */
int parse_double(const char *s, double *out);
/* The progress line of a set of parallel runs: on a terminal every second, in place; into a file
   or pipe every 30 s, one line each. progress_due says whether it is time (and restarts the
   interval); progress_line prints "  F/N runs done, D/T UNIT, METRIC V, Es elapsed, ~Ls left". */
typedef struct {
    int tty;
    time_t start, last;
} progress_clock;
void progress_start(progress_clock *c);
int progress_due(progress_clock *c, int force);
void progress_line(const progress_clock *c, int finished, int njobs, long done, long total, const char *unit, const char *metric,
                   double value);
/* Whether the command line is for the HYLA paper's tasks (--task fuzzy|sraven, preset hyla-*), and
   the program for those. */
int hyla_wants(int argc, char **argv);
int hyla_main(int argc, char **argv);
/* attnlab lm: the Cog paper's language models in miniature (lm.c). */
int lm_main(int argc, char **argv);
#endif
