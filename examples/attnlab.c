/* attnlab: the experiment driver for the expressive-attention paper (Gros 2024,
   arXiv:2407.18601).

     attnlab train  --task nt --N 16 --tau 2 --ncon 32 --attn softmax,ea --seeds 4 --epochs 2000 ...
     attnlab census --task nt --N 16 --tau 2
     attnlab params --N 2 --ncon 16

   `train` runs every (attention, seed) pair, the pairs in parallel over the cores (OpenMP), each one
   reproducible on its own: seed s draws the initial weights, the training series and the evaluation
   series from its own streams, the same for every attention, so the attentions see the same data.
   Run `attnlab --help` for every option. */
#define ATTN_IMPLEMENTATION
#include "../attn.h"
#include "attnlab.h"
#include <errno.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define MAX_ATTN 8
#define NBATCH 40 /* predictions per epoch (the paper's N_batch) */

typedef struct {
    attn_nt_task task;
    int N, tau, ncon, seeds, nattn, update_epoch, eval_every, eval_early, ntest, ng, final_test, lr_drop_epoch, threads;
    int rollout_len, rollout_series; /* the final rollouts: tokens each (0: ng) and series (at most) */
    long epochs;
    double lr, momentum, scale, plateau; /* plateau: a reference level drawn in the figure (NaN: none) */
    attn_kind attn[MAX_ATTN];
    attn_cis_vec vec;
    int init_uniform, qk_raw, loss_mean; /* qk_raw: --qk-input raw; loss_mean: --loss mean over the d outputs */
    double init_gain;                    /* --init-gain: the initial matrices times this */
    int decoder, layers, dmodel, heads; /* --model decoder and its shape */
    int full_nan;                       /* --full-nan: keep computing runs whose parameters are all NaN */
    sparse_opts sparse;                 /* --model decoder: sparse attention patterns */
    attn_pos_kind pos;
    const char *csv, *svg, *save, *load;
    int attn_given, N_given, ncon_given, scale_given;
    const struct model *start; /* the model --load read, or NULL */
} options;

/* A run's model: the cisformer (Gros 2024), or the shared-weight decoder (attn_transformer: pre-LN
   blocks, GELU MLP of width 4 d_model, read out at the window's last position into N outputs),
   behind one interface. p is the parameter block of whichever it is. */
typedef struct model {
    int decoder, N, ncon;
    int nan; /* every parameter is NaN (run_one found it): every output is NaN, not computed */
    attn_cisformer cis;
    attn_transformer tf;
    attn_params *p;
} model;

/* One (attention, seed) run: its evaluation curve and final numbers. */
typedef struct {
    int nevals, epoch_100; /* epoch_100: first evaluation at 100% (teacher-forced), -1: never */
    int *epoch;
    double *acc, *acc_task[2], *loss; /* acc_task: per rule of the mixture (NT, NT-S) */
    double final_tf, final_rollout, final_perfect, final_task[2];
    int final_series; /* distinct series of the final evaluation (fewer than asked if the states run out) */
    run_progress prog; /* epochs done and the latest accuracy, for the progress line */
    int failed;
} run_result;


void progress_begin(progress_set *p, const void *runs, size_t stride, size_t offset, int njobs, long total, const char *unit,
                    const char *metric)
{
    p->tty = isatty(fileno(stderr));
    p->start = p->last = time(NULL);
    p->runs = (const char *)runs; p->stride = stride; p->offset = offset;
    p->njobs = njobs; p->finished = 0; p->total = total; p->unit = unit; p->metric = metric;
}

void progress_report(progress_set *p, int force)
{
#ifdef _OPENMP
#pragma omp critical(progress)
#endif
    if (mpi_rank() == 0) {
        time_t now = time(NULL);
        if (force || difftime(now, p->last) >= (p->tty ? 1 : 30)) {
            long done = 0;
            double sum = 0, el;
            int k, n = 0;
            p->last = now;
            el = difftime(now, p->start);
            for (k = 0; k < p->njobs; k++) {
                const run_progress *r = (const run_progress *)(p->runs + (size_t)k * p->stride + p->offset);
                done += r->done;
                if (r->evaluated) { sum += r->latest; n++; }
            }
            fprintf(stderr, "%s  %d/%d runs done, %ld/%ld %s, %s %.3f, %.0fs elapsed, ~%.0fs left   %s", p->tty ? "\r" : "", p->finished,
                    p->njobs, done, p->total, p->unit, p->metric, n ? sum / n : 0, el, done ? el * (double)(p->total - done) / done : 0,
                    p->tty ? "" : "\n");
            fflush(stderr);
        }
    }
}

static progress_set progress;
static csv_stream train_csv; /* the train command's CSV, a line per evaluation as it happens */

#define NT_CSV_HEADER "attention,seed,epoch,acc_tf,loss,acc_nt,acc_nts"
/* Evaluation k of run (kind, seed) as a CSV line. */
static void nt_row(char *line, size_t n, attn_kind kind, int seed, const run_result *r, int k)
{
    double loss = r->loss[k] == r->loss[k] ? r->loss[k] : fabs(r->loss[k]); /* NaN printed as "nan", whatever its sign */
    snprintf(line, n, "%s,%d,%d,%.6f,%.6f,%.6f,%.6f", attn_kind_get(kind)->name, seed, r->epoch[k], r->acc[k], loss, r->acc_task[0][k],
             r->acc_task[1][k]);
}

/* The commands (a screen); with full, then the train command's options. */
static void usage(FILE *f, int full)
{
    fprintf(f,
            "usage: attnlab COMMAND [options]\n"
            "\n"
            "commands:\n"
            "  train    train models on an NT task, every attention x seed, and report\n"
            "  preset   run one of the papers' experiments: attnlab preset E1 .. E12, hyla-fuzzy,\n"
            "           hyla-sraven, cog-lm, cog-probes, seq2seq, thesis [--quick]\n"
            "           [--out DIR] [train options, which override the preset's]; writes\n"
            "           DIR/E1.csv and .svg (DIR: results); `attnlab preset` lists them\n"
            "  eval     evaluate a saved model: attnlab eval --load F [--task ...] [--final-test N]\n"
            "  census   print the cycle census of a task's state map (Gros 2024)\n"
            "  params   print the model's parameter count\n"
            "  sample   text from a model attnlab lm --save wrote (attnlab sample --help)\n"
            "  convert  an attn.h checkpoint to Hugging Face's GPT-2 or Llama layout, or back\n"
            "  embed    sentence embeddings of a BERT in Hugging Face's layout (all-MiniLM-L6-v2),\n"
            "           one line of a file per sentence (attnlab embed --help)\n"
            "  search   rank a file's lines by similarity to a query (attnlab search --help)\n"
            "  ambiguity  SRAVEN: the fraction of instances with another answer, by two definitions,\n"
            "           beside the HYLA paper's Table A2 (attnlab ambiguity --help)\n"
            "  lm       byte-level Cogformers: softmax, Cog placements, EA, differential,\n"
            "           centered (attnlab lm --help)\n"            "  seq2seq  the thesis' encoder-decoder on digit strings, greedy vs beam search, and\n"
            "           the band + sparse-error analysis of its heads (attnlab seq2seq --help)\n"
            "  plot     a figure redrawn from the CSVs of runs (attnlab plot --help)\n"
            "\n"
            "attnlab help COMMAND (or fuzzy, sraven) shows a command's options; attnlab --version\n"
            "the version and the kernels.\n"
            "Any command takes --dry-run (check the options, the models' configurations and the\noutputs; allocate and run nothing)\n"
            "and --opt=value as well as --opt value. Every command that runs a grid also takes:\n"
            "  --resume          with --csv F: skip the runs an earlier run of the same command line\n"
            "                    finished (their results are kept in F.jobs as each run ends)\n"
            "  --data-parallel   (train, lm) every batch cut into --dp-chunks C [16] chunks whose\n"
            "                    gradients are summed exactly: the same bits on any number of ranks\n"
            "  --force           go on past the estimate's limits, checked before any run starts (train,\n"
            "                    lm, seq2seq): half this machine's memory for the runs at once, 48 hours a run\n"
            "  --snapshot-every S  (train, lm) with --csv F: every S steps (epochs) a run in progress is\n"
            "                    saved to F.run-J, from which --resume goes on (the same bits) [0: off]\n"
            "  --rank-timeout S  attnlab-mpi: a rank silent for S seconds has died [60]\n"
            "attnlab-mpi (make attnlab-mpi) is attnlab over MPI ranks: mpirun -n R build/attnlab-mpi\n"
            "COMMAND ...; rank 0 hands the runs out and writes what attnlab writes (docs/scaling.md).\n"
            "\n");
    if (!full) {
        fprintf(f, "attnlab help train (or attnlab train --help) gives the NT tasks' options.\n");
        return;
    }
    fprintf(f,
            "task options (all commands):\n"
            "  --task nt|nts|ntr|mix   the series rule (mix: NT or NT-S per series)   [nt]\n"
            "                          (fuzzy|sraven: the HYLA paper's tasks, with their own\n"
            "                          options: attnlab train --task fuzzy --help)\n"
            "  --N N                   alphabet size (= model width d), >= 2          [16]\n"
            "  --tau T                 delay, >= 1                                     [2]\n"
            "  --ncon C                context length (window) of the model            [32]\n");
    fprintf(f,
            "model and training options:\n"
            "  --model cisformer|decoder  the paper's cisformer, or a standard decoder with\n"
            "                          weights shared across positions                 [cisformer]\n"
            "  --attn K1,K2,...        attention kinds (softmax, ea, cog, centered, sigmoid,\n"
            "                          linear_raw, kernel, taylor; the decoder takes every\n"
            "                          kind of attn.h's table)                         [softmax,ea]\n"
            "  --vec ffn_bias|ln_bias|ln_gains   cisformer: the per-position vector (the paper leaves it open)\n"
            "                                                                          [ffn_bias]\n"
            "  --layers L, --dmodel D, --heads H   decoder: blocks, width, heads (D/H each)\n"
            "                                                                          [2, 64, 4]\n"
            "  --pos learned|none|rope decoder: positional encoding                   [learned]\n"
            "  (the decoder:)\n" SPARSE_HELP
            "  --scale S               score scale (decoder default 1/sqrt(D/H))      [1]\n"
            "  --init-gain G           the initial matrices times G                     [1]\n"
            "  --qk-input ln|raw       cisformer: q, k from LN(x) like v, or from the raw\n"
            "                          one-hot x (the paper's other reading)           [ln]\n"
            "  --loss sum|mean         a prediction's squared error summed or averaged\n"
            "                          over the d outputs (the step is the mean over the\n"
            "                          predictions either way)                        [sum]\n"
            "  --init uniform|normal   matrices U(+-1/sqrt(fan_in)) (PyTorch's default),\n"
            "                          or N(0, 1/fan_in) (diverges at lr 0.02) [uniform]\n"
            "  --seeds S               seeds per attention                             [4]\n"
            "  --epochs E              epochs (one series of ncon + 40 symbols each)   [2000]\n");
    fprintf(f,
            "  --full-nan 0|1          1: keep computing a run whose parameters are all NaN;\n"
            "                          0 skips its steps and repeats its first evaluation at\n"
            "                          NaN, which is what computing them gives        [0]\n"
            "  --update epoch|sample   one SGD step per epoch on the mean of the 40\n"
            "                          losses, or one per prediction (the paper leaves it open)          [epoch]\n"
            "  --lr X, --momentum X    SGD (PyTorch momentum)                          [0.02, 0.8]\n"
            "  --lr-drop E             divide the rate by 4 after epoch E (0: never)   [0]\n"
            "  --eval-every E          evaluate every E epochs                         [50]\n"
            "  --eval-early E          also every 10 epochs up to epoch E (a plateau)  [0]\n"
            "  --plateau Y             draw the level Y (the paper's plateau) in the figure\n"
            "  --ntest N, --ng G       evaluation: N distinct series, G predictions   [100, 50]\n"
            "  --final-test N          final evaluation series (capped at the number of\n"
            "                          distinct initial conditions)                    [10000]\n"
            "  --rollout-len R, --rollout-series S   final greedy rollouts: R tokens each\n"
            "                          (0: --ng) on at most S of those series         [0, 1000]\n"
            "  --threads T             parallel runs (0: all cores)                    [0]\n"
            "  --csv FILE, --svg FILE  the curves as CSV and as an SVG figure\n"
            "  --dry-run               check the options, the model's configuration and the outputs\n"
            "  --save F                save each run's final model (F-ATTENTION-sSEED.ckpt when\n"
            "                          there are several runs; attn.h's checkpoint format)\n"
            "  --load F                start every run from a saved model (its N, N_con and\n"
            "                          attention are then the checkpoint's; momentum starts at 0)\n"
            "\n"
            "The loss of a prediction is sum_i (y_i - onehot(target)_i)^2 (the paper's \"basic squared difference\"); curves are teacher-\n"
            "forced per-token accuracy; the final evaluation also reports greedy rollouts.\n");
}

int parse_int(const char *s, int lo, int *out)
{
    char *end;
    long v;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > 1000000000L) return 0;
    *out = (int)v;
    return 1;
}

int sparse_option(sparse_opts *s, const char *a, const char *v, int *ok)
{
    static const char *names[9] = {"--window",         "--dilation",     "--global",      "--bigbird-block",
                                   "--bigbird-random", "--bigbird-seed", "--linformer-k", "--kv-heads",
                                   "--qk-norm"};
    int *field[9], i;
    field[0] = &s->window; field[1] = &s->dilation; field[2] = &s->global; field[3] = &s->bigbird_block;
    field[4] = &s->bigbird_random; field[5] = &s->bigbird_seed; field[6] = &s->linformer_k; field[7] = &s->kv_heads;
    field[8] = &s->qk_norm;
    for (i = 0; i < 9; i++)
        if (!strcmp(a, names[i])) {
            *ok = parse_int(v, i == 1, field[i]) && *field[i] <= (i == 8 ? 1 : MAX_WIDTH);
            return 1;
        }
    return 0;
}

void sparse_apply(const sparse_opts *s, attn_transformer_config *c)
{
    c->window = s->window; c->dilation = s->dilation; c->global = s->global;
    c->bigbird_block = s->bigbird_block; c->bigbird_random = s->bigbird_random; c->bigbird_seed = s->bigbird_seed;
    c->linformer_k = s->linformer_k; c->kv_heads = s->kv_heads; c->qk_norm = s->qk_norm;
}

int parse_double(const char *s, double *out)
{
    char *end;
    double v;
    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || *end || !(v - v == 0)) return 0; /* v - v is NaN for Inf and NaN */
    *out = v;
    return 1;
}

int output_ok(const char *path)
{
    FILE *f;
    int existed;
    if (!path || mpi_rank() > 0) return 1; /* rank 0 checks */
    f = fopen(path, "rb");
    existed = f != NULL;
    if (f) fclose(f);
    if (!(f = fopen(path, "ab"))) {
        fprintf(stderr, "attnlab: cannot write %s: %s\n", path, strerror(errno));
        return 0;
    }
    fclose(f);
    if (!existed) remove(path);
    return 1;
}

volatile sig_atomic_t stop_requested = 0;
int dry_run = 0, help_shown = 0;
static void on_stop(int sig) { (void)sig; stop_requested = 1; }
void catch_stop(void)
{
    signal(SIGINT, on_stop);
    signal(SIGTERM, on_stop);
}

int write_failed = 0;

void write_failure(const char *path)
{
    if (!write_failed) fprintf(stderr, "\nattnlab: cannot write %s: %s\n", path, strerror(errno));
    write_failed = 1;
}

int csv_begin(csv_stream *c, const char *path, const char *header)
{
    c->f = NULL;
    c->path = path;
    if (!path || mpi_rank() > 0) return 1; /* rank 0 writes the files */
    if (!(c->f = fopen(path, "w"))) {
        fprintf(stderr, "attnlab: cannot write %s: %s\n", path, strerror(errno));
        return 0;
    }
    if (fprintf(c->f, "%s\n", header) < 0 || fflush(c->f) != 0) write_failure(path);
    return 1;
}

void csv_row(csv_stream *c, const char *line)
{
    if (!c->f) return;
#ifdef _OPENMP
#pragma omp critical(csv)
#endif
    {
        if (fprintf(c->f, "%s\n", line) < 0 || fflush(c->f) != 0) write_failure(c->path);
    }
}

int csv_end(csv_stream *c)
{
    int ok = !c->f || (!ferror(c->f) && fclose(c->f) == 0);
    if (!ok) write_failure(c->path);
    c->f = NULL;
    return ok;
}

int csv_write(const char *path, const char *header, int njobs, csv_line_fn fn, const void *ctx)
{
    csv_stream c;
    char line[512], tmp[1100];
    int j, k, ok;
    if (!path || mpi_rank() > 0) return 1;
    snprintf(tmp, sizeof tmp, "%s.tmp", path); /* the whole file, then in the stream's place */
    if (!csv_begin(&c, tmp, header)) return 0;
    for (j = 0; j < njobs; j++)
        for (k = 0; fn(ctx, j, k, line, sizeof line); k++) csv_row(&c, line);
    ok = csv_end(&c) && !write_failed;
    if (ok && rename(tmp, path) != 0) write_failure(path), ok = 0;
    if (!ok) {
        remove(tmp);
        return 0;
    }
    printf("wrote %s\n", path);
    return 1;
}

/* ---- the model ---- */

/* The configurations the options ask for. */
static attn_cisformer_config cis_config(const options *o, attn_kind kind)
{
    attn_cisformer_config c;
    memset(&c, 0, sizeof c);
    c.d = o->N; c.ncon = o->ncon; c.kind = kind; c.scale = (attn_float)o->scale; c.vec = o->vec; c.init_uniform = o->init_uniform;
    c.qk_raw = o->qk_raw;
    return c;
}

static attn_transformer_config decoder_config(const options *o, attn_kind kind)
{
    attn_transformer_config c;
    int l;
    memset(&c, 0, sizeof c);
    c.vocab = c.out = o->N; c.d = o->dmodel; c.layers = o->layers; c.heads = o->heads; c.dk = c.dv = o->dmodel / o->heads;
    c.mlp = 4 * o->dmodel; c.max_T = o->ncon; c.readout = 1; c.causal = 1; c.scale = (attn_float)o->scale; c.pos = o->pos;
    sparse_apply(&o->sparse, &c);
    c.norm = ATTN_NORM_LAYER; c.eps = (attn_float)1e-5; c.act = ATTN_ACT_GELU_TANH; c.bias = 1;
    c.init = o->init_uniform ? ATTN_INIT_UNIFORM : ATTN_INIT_NORMAL;
    for (l = 0; l < c.layers; l++) c.kinds[l] = kind;
    return c;
}

static size_t model_param_count(const options *o)
{
    attn_cisformer_config c = cis_config(o, ATTN_SOFTMAX);
    attn_transformer_config t = decoder_config(o, o->attn[0]);
    return o->decoder ? attn_transformer_param_count(&t) : attn_cisformer_param_count(&c);
}

static attn_status model_init(model *m, const options *o, attn_kind kind, attn_rng *r)
{
    attn_cisformer_config c = cis_config(o, kind);
    attn_transformer_config t = decoder_config(o, kind);
    attn_status s = o->decoder ? attn_transformer_init(&m->tf, &t, r) : attn_cisformer_init(&m->cis, &c, r);
    m->decoder = o->decoder; m->N = o->N; m->ncon = o->ncon; m->nan = 0;
    m->p = o->decoder ? &m->tf.p : &m->cis.p;
    return s;
}

static void model_free(model *m)
{
    if (m->decoder) attn_transformer_free(&m->tf);
    else attn_cisformer_free(&m->cis);
}

static attn_status model_save(const model *m, const char *path)
{
    return m->decoder ? attn_transformer_save(&m->tf, path) : attn_cisformer_save(&m->cis, path);
}

static attn_kind model_kind(const model *m) { return m->decoder ? m->tf.cfg.kinds[0] : m->cis.cfg.kind; }

/* Buffers for nb windows at once: outputs y, one-hot targets and dL/dy [nb, N], the decoder's
   windows [nb, ncon], the cache and the workspace. */
typedef struct {
    attn_float *y, *target, *dy, *cache;
    int *win;
    void *work;
    size_t cf, wb; /* the cache's floats, the workspace's bytes */
    int nb;
} model_buf;

static int buf_alloc(model_buf *b, const model *m, int nb)
{
    size_t out = sizeof(attn_float) * (size_t)nb * m->N;
    b->nb = nb;
    b->y = (attn_float *)malloc(out);
    b->target = (attn_float *)malloc(out);
    b->dy = (attn_float *)malloc(out);
    b->win = (int *)malloc(sizeof(int) * (size_t)nb * m->ncon);
    b->cf = m->decoder ? attn_transformer_cache_floats(&m->tf, nb, m->ncon) : attn_cisformer_cache_floats(&m->cis, nb);
    b->cache = (attn_float *)malloc(sizeof(attn_float) * b->cf);
    b->wb = m->decoder ? attn_transformer_work_bytes(&m->tf, nb, m->ncon) : attn_cisformer_work_bytes(&m->cis, nb);
    b->work = malloc(b->wb);
    return b->y && b->target && b->dy && b->win && b->cache && b->work;
}

static void buf_free(model_buf *b) { free(b->y); free(b->target); free(b->dy); free(b->win); free(b->cache); free(b->work); }

/* b->y [nb, N] for the nb windows tokens[i stride .. i stride + ncon) (nb <= b->nb). */
static void model_forward(const model *m, model_buf *b, const int *tokens, int stride, int nb)
{
    int i;
    if (m->nan) { /* what the model computes from all-NaN parameters (their NaN, sign and all) */
        for (i = 0; i < nb * m->N; i++) b->y[i] = m->p->data[0];
        return;
    }
    if (!m->decoder) {
        attn_cisformer_forward(&m->cis, b->y, b->cache, b->cf, tokens, stride, nb, b->work, b->wb);
        return;
    }
    for (i = 0; i < nb; i++) memcpy(b->win + (size_t)i * m->ncon, tokens + (size_t)i * stride, sizeof(int) * (size_t)m->ncon);
    attn_transformer_forward(&m->tf, b->y, b->cache, b->cf, b->win, NULL, nb, m->ncon, b->work, b->wb);
}

/* The gradient (in m->p's gradient block) for dL/dy = b->dy from the last model_forward over nb
   windows. */
static void model_grad(model *m, model_buf *b, int nb)
{
    attn_params_zero_grad(m->p);
    if (m->decoder) attn_transformer_backward(&m->tf, b->dy, b->cache, b->cf, b->win, NULL, nb, m->ncon, b->work, b->wb);
    else attn_cisformer_backward(&m->cis, b->dy, b->cache, b->cf, nb, b->work, b->wb);
}

/* One step of SGD with momentum for the same (the cisformer's backward pass applies it as it goes). */
static void model_sgd_step(model *m, model_buf *b, int nb, attn_float *vel, double lr, double momentum, long step)
{
    if (!m->decoder) {
        attn_cisformer_backward_sgd(&m->cis, b->dy, b->cache, b->cf, nb, vel, (attn_float)lr, (attn_float)momentum, step, b->work, b->wb);
        return;
    }
    model_grad(m, b, nb);
    attn_sgd_step(m->p, vel, (attn_float)lr, (attn_float)momentum, step);
}

/* dL/dy into b->dy for the nb windows of series whose targets follow them (after model_forward): the
   loss is the mean over the windows of sum_e (y_e - onehot_e)^2, over d too with --loss mean; its
   share of a batch of B windows. */
static void model_loss_grad(const options *o, model_buf *b, const int *series, int nb, int B)
{
    attn_one_hot(b->target, series + o->ncon, nb, o->N);
    memset(b->dy, 0, sizeof(attn_float) * (size_t)nb * o->N);
    attn_mse_backward(b->dy, b->y, b->target, (size_t)nb * o->N, ATTN_REDUCE_SUM, (attn_float)(1.0 / B / (o->loss_mean ? o->N : 1)));
}

/* --load: reads the checkpoint once (the program keeps it; every run copies its parameters) and
   takes the model's kind, shape, width, window and attention from it; options that name others are
   an error. */
static int load_config(options *o)
{
    static model m;
    static const char *path = NULL;
    attn_checkpoint_header h;
    void *buf;
    size_t n;
    int l, same = 1;
    attn_kind k;
    if (!path || strcmp(path, o->load) != 0) {
        if (path) model_free(&m);
        path = NULL;
        if (attn_checkpoint_load_file(o->load, &buf, &n, &h) != ATTN_OK) {
            fprintf(stderr, "attnlab: %s\n", attn_last_error());
            return 0;
        }
        free(buf);
        m.decoder = !strcmp(h.model, "transformer");
        if ((m.decoder ? attn_transformer_load(&m.tf, o->load) : attn_cisformer_load(&m.cis, o->load)) != ATTN_OK) {
            fprintf(stderr, "attnlab: %s\n", attn_last_error());
            return 0;
        }
        m.p = m.decoder ? &m.tf.p : &m.cis.p;
        m.N = m.decoder ? m.tf.cfg.vocab : m.cis.cfg.d;
        m.ncon = m.decoder ? m.tf.cfg.max_T : m.cis.cfg.ncon;
        path = o->load;
    }
    k = model_kind(&m);
    for (l = 1; m.decoder && l < m.tf.cfg.layers; l++) same = same && m.tf.cfg.kinds[l] == k;
    if (m.decoder && (m.tf.cfg.out != m.N || m.tf.cfg.readout != 1 || m.tf.cfg.dk * m.tf.cfg.heads != m.tf.cfg.d || !same)) {
        fprintf(stderr, "attnlab: %s holds a transformer that is not attnlab's decoder (N outputs at the last position, one kind)\n", o->load);
        return 0;
    }
    if ((o->N_given && o->N != m.N) || (o->ncon_given && o->ncon != m.ncon) || (o->attn_given && (o->nattn != 1 || o->attn[0] != k))) {
        fprintf(stderr, "attnlab: %s holds a %s with N %d, ncon %d, attention %s; the options ask for another\n", o->load,
                m.decoder ? "decoder" : "cisformer", m.N, m.ncon, attn_kind_get(k)->name);
        return 0;
    }
    o->decoder = m.decoder; o->N = m.N; o->ncon = m.ncon; o->nattn = 1; o->attn[0] = k; o->scale_given = 1;
    if (m.decoder) {
        o->layers = m.tf.cfg.layers; o->dmodel = m.tf.cfg.d; o->heads = m.tf.cfg.heads; o->pos = m.tf.cfg.pos; o->scale = m.tf.cfg.scale;
        o->init_uniform = m.tf.cfg.init == ATTN_INIT_UNIFORM;
    } else {
        o->vec = m.cis.cfg.vec; o->scale = m.cis.cfg.scale; o->qk_raw = m.cis.cfg.qk_raw;
    }
    o->start = &m;
    return 1;
}

/* Parses argv[2..]; prints one line and returns 0 on a bad option. */
static int parse_options(int argc, char **argv, options *o)
{
    int i;
    memset(o, 0, sizeof *o);
    o->task = ATTN_NT; o->N = 16; o->tau = 2; o->ncon = 32; o->seeds = 4; o->epochs = 2000; o->update_epoch = 1;
    o->eval_every = 50; o->plateau = NAN; o->ntest = 100; o->ng = 50; o->final_test = 10000; o->rollout_series = 1000; o->lr = 0.02; o->momentum = 0.8; o->scale = 1;
    o->nattn = 2; o->attn[0] = ATTN_SOFTMAX; o->attn[1] = ATTN_EXPRESSIVE; o->vec = ATTN_CIS_FFN_BIAS; o->init_uniform = 1;
    o->init_gain = 1;
    o->layers = 2; o->dmodel = 64; o->heads = 4; o->pos = ATTN_POS_LEARNED;
    for (i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = v != NULL, e;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout, 1); help_shown = 1; return 0; }
        if (!v) { fprintf(stderr, "attnlab: %s needs a value (or is unknown; see --help)\n", a); return 0; }
        if (!strcmp(a, "--task")) ok = (e = attn_nt_from_name(v)) >= 0 && (o->task = (attn_nt_task)e, 1);
        else if (!strcmp(a, "--N")) ok = parse_int(v, 2, &o->N) && (o->N_given = 1);
        else if (!strcmp(a, "--tau")) ok = parse_int(v, 1, &o->tau);
        else if (!strcmp(a, "--ncon")) ok = parse_int(v, 1, &o->ncon) && (o->ncon_given = 1);
        else if (!strcmp(a, "--seeds")) ok = parse_int(v, 1, &o->seeds) && o->seeds <= MAX_SEEDS;
        else if (!strcmp(a, "--epochs")) ok = parse_int(v, 1, &e) && (o->epochs = e, 1);
        else if (!strcmp(a, "--eval-every")) ok = parse_int(v, 1, &o->eval_every);
        else if (!strcmp(a, "--eval-early")) ok = parse_int(v, 0, &o->eval_early);
        else if (!strcmp(a, "--plateau")) ok = parse_double(v, &o->plateau) && o->plateau >= 0 && o->plateau <= 1;
        else if (!strcmp(a, "--ntest")) ok = parse_int(v, 1, &o->ntest);
        else if (!strcmp(a, "--ng")) ok = parse_int(v, 1, &o->ng);
        else if (!strcmp(a, "--final-test")) ok = parse_int(v, 0, &o->final_test);
        else if (!strcmp(a, "--rollout-len")) ok = parse_int(v, 0, &o->rollout_len) && o->rollout_len <= MAX_WIDTH;
        else if (!strcmp(a, "--rollout-series")) ok = parse_int(v, 1, &o->rollout_series);
        else if (!strcmp(a, "--lr-drop")) ok = parse_int(v, 0, &o->lr_drop_epoch);
        else if (!strcmp(a, "--threads")) ok = parse_int(v, 0, &o->threads) && o->threads <= MAX_THREADS;
        else if (!strcmp(a, "--lr")) ok = parse_double(v, &o->lr) && o->lr > 0;
        else if (!strcmp(a, "--momentum")) ok = parse_double(v, &o->momentum) && o->momentum >= 0 && o->momentum < 1;
        else if (!strcmp(a, "--scale")) ok = parse_double(v, &o->scale) && o->scale > 0 && (o->scale_given = 1);
        else if (!strcmp(a, "--layers")) ok = parse_int(v, 1, &o->layers) && o->layers <= ATTN_MAX_LAYERS;
        else if (!strcmp(a, "--dmodel")) ok = parse_int(v, 1, &o->dmodel) && o->dmodel <= MAX_WIDTH;
        else if (!strcmp(a, "--heads")) ok = parse_int(v, 1, &o->heads);
        else if (sparse_option(&o->sparse, a, v, &ok)) { /* ok says whether v is valid */ }
        else if (!strcmp(a, "--pos"))
            ok = !strcmp(v, "learned") ? (o->pos = ATTN_POS_LEARNED, 1) : !strcmp(v, "none") ? (o->pos = ATTN_POS_NONE, 1)
               : !strcmp(v, "rope") ? (o->pos = ATTN_POS_ROPE, 1) : 0;
        else if (!strcmp(a, "--csv")) o->csv = v;
        else if (!strcmp(a, "--svg")) o->svg = v;
        else if (!strcmp(a, "--save")) o->save = v;
        else if (!strcmp(a, "--load")) o->load = v;
        else if (!strcmp(a, "--full-nan")) ok = parse_int(v, 0, &o->full_nan) && o->full_nan <= 1;
        else if (!strcmp(a, "--update")) ok = (!strcmp(v, "epoch") || !strcmp(v, "sample")) && (o->update_epoch = !strcmp(v, "epoch"), 1);
        else if (!strcmp(a, "--vec"))
            ok = !strcmp(v, "ffn_bias") ? (o->vec = ATTN_CIS_FFN_BIAS, 1) : !strcmp(v, "ln_bias") ? (o->vec = ATTN_CIS_LN_BIAS, 1)
               : !strcmp(v, "ln_gains") ? (o->vec = ATTN_CIS_LN_GAINS, 1) : 0;
        else if (!strcmp(a, "--init")) ok = (!strcmp(v, "normal") || !strcmp(v, "uniform")) && (o->init_uniform = !strcmp(v, "uniform"), 1);
        else if (!strcmp(a, "--init-gain")) ok = parse_double(v, &o->init_gain) && o->init_gain > 0;
        else if (!strcmp(a, "--qk-input")) ok = (!strcmp(v, "ln") || !strcmp(v, "raw")) && (o->qk_raw = !strcmp(v, "raw"), 1);
        else if (!strcmp(a, "--loss")) ok = (!strcmp(v, "sum") || !strcmp(v, "mean")) && (o->loss_mean = !strcmp(v, "mean"), 1);
        else if (!strcmp(a, "--model")) ok = (!strcmp(v, "cisformer") || !strcmp(v, "decoder")) && (o->decoder = !strcmp(v, "decoder"), 1);
        else if (!strcmp(a, "--attn")) {
            char buf[256], *tok, *save = NULL;
            snprintf(buf, sizeof buf, "%s", v);
            o->nattn = 0;
            for (tok = strtok_r(buf, ",", &save); tok && ok; tok = strtok_r(NULL, ",", &save)) {
                int k = attn_kind_from_name(tok);
                ok = k >= 0 && o->nattn < MAX_ATTN;
                if (ok) o->attn[o->nattn++] = (attn_kind)k;
            }
            ok = ok && o->nattn > 0;
            o->attn_given = 1;
        } else { fprintf(stderr, "attnlab: unknown option %s (see --help)\n", a); return 0; }
        if (!ok) { fprintf(stderr, "attnlab: bad value '%s' for %s (see --help)\n", v, a); return 0; }
        i++;
    }
    if (o->load && !load_config(o)) return 0;
    if (!o->decoder && !o->scale_given) o->scale = 1; /* the paper's runs */
    if (o->decoder && !o->scale_given) o->scale = 0;  /* 1/sqrt(dk) */
    for (i = 0; i < o->nattn && !o->decoder; i++)
        if (attn_kind_get(o->attn[i])->flags & (ATTN_KF_MIXES_HEADS | ATTN_KF_SUBHEADS | ATTN_KF_PARAMS)) {
            fprintf(stderr, "attnlab: the cisformer has one head: %s attention needs --model decoder\n", attn_kind_get(o->attn[i])->name);
            return 0;
        }
    if (o->decoder && o->dmodel % o->heads) {
        fprintf(stderr, "attnlab: --dmodel %d is not a multiple of --heads %d\n", o->dmodel, o->heads);
        return 0;
    }
    if (o->ncon < o->tau + 1) {
        fprintf(stderr, "attnlab: --ncon %d is too short for tau = %d: a window must hold the tau + 1 symbols the rule reads\n", o->ncon, o->tau);
        return 0;
    }
    return 1;
}

/* ---- evaluation ---- */

/* count series of length len with distinct initial conditions (while the state space allows it),
   from r; returns how many were drawn. rules [count] receives each series' rule. */
static int draw_series(const options *o, int *x, int *rules, int count, int len, attn_rng *r)
{
    double states = pow((double)o->N, o->tau + 1);
    unsigned char *seen = states <= (double)(1 << 26) ? (unsigned char *)calloc((size_t)states, 1) : NULL;
    int n = 0, tries = 0;
    if (seen && count > states) count = (int)states;
    while (n < count && tries < 100 * count + 1000) {
        attn_nt_task rule;
        int *s = x + (size_t)n * len, t;
        size_t id = 0;
        tries++;
        attn_nt_series(s, len, o->task, o->N, o->tau, NULL, r, &rule);
        for (t = 0; t <= o->tau; t++) id = id * (size_t)o->N + (size_t)s[t];
        if (seen && seen[id]) continue;
        if (seen) seen[id] = 1;
        rules[n++] = rule == ATTN_NT_S;
    }
    free(seen);
    return n;
}

static int argmax(const attn_float *y, int d)
{
    int i, best = 0;
    for (i = 1; i < d; i++)
        if (y[i] > y[best]) best = i;
    return best;
}

/* Teacher-forced accuracy over ns series x [ns, len] (the first ng predictions of each, len >= ncon +
   ng), per rule too; returns the accuracy and the mean loss in *loss. */
static double eval_tf(const model *m, model_buf *b, const int *x, const int *rules, int ns, int ng, int len, double *loss,
                      double acc_task[2])
{
    int s, j, d = m->N;
    long right = 0, rt[2] = {0, 0}, nt[2] = {0, 0};
    double l = 0;
    for (s = 0; s < ns; s++) {
        const int *next = x + (size_t)s * len + m->ncon;
        attn_float ls;
        model_forward(m, b, x + (size_t)s * len, 1, ng);
        attn_one_hot(b->target, next, ng, d);
        attn_mse_forward(&ls, b->y, b->target, (size_t)ng * d, ATTN_REDUCE_SUM);
        l += ls;
        for (j = 0; j < ng; j++) {
            int ok = argmax(b->y + (size_t)j * d, d) == next[j];
            right += ok;
            rt[rules[s]] += ok;
            nt[rules[s]]++;
        }
    }
    *loss = l / ((double)ns * ng);
    acc_task[0] = nt[0] ? (double)rt[0] / nt[0] : -1;
    acc_task[1] = nt[1] ? (double)rt[1] / nt[1] : -1;
    return (double)right / ((double)ns * ng);
}

/* Greedy rollouts: from the first ncon true symbols of each series of x [ns, len], ng <= len - ncon
   predictions fed back; the per-token accuracy and the fraction of series entirely right. The series
   are rolled out b->nb at a time (each window's forward pass is independent of the others'). */
static double eval_rollout(const model *m, model_buf *b, const int *x, int ns, int ng, int len, double *perfect)
{
    int s0, i, j, n = m->ncon, *w = (int *)malloc(sizeof(int) * (size_t)b->nb * len);
    long right = 0, all = 0;
    for (s0 = 0; s0 < ns; s0 += b->nb) {
        int cnt = ns - s0 < b->nb ? ns - s0 : b->nb;
        for (i = 0; i < cnt; i++) memcpy(w + (size_t)i * len, x + (size_t)(s0 + i) * len, sizeof(int) * (size_t)n);
        for (j = 0; j < ng; j++) {
            model_forward(m, b, w + j, len, cnt);
            for (i = 0; i < cnt; i++) w[(size_t)i * len + n + j] = argmax(b->y + (size_t)i * m->N, m->N);
        }
        for (i = 0; i < cnt; i++) {
            const int *truth = x + (size_t)(s0 + i) * len + n, *got = w + (size_t)i * len + n;
            int ok_all = 1;
            for (j = 0; j < ng; j++) {
                right += got[j] == truth[j];
                ok_all = ok_all && got[j] == truth[j];
            }
            all += ok_all;
        }
    }
    free(w);
    *perfect = (double)all / ns;
    return (double)right / ((double)ns * ng);
}

/* ---- one run ---- */

/* Where run (kind, seed) saves its model: --save F itself when there is one run, else F with
   "-ATTENTION-sSEED" before its extension. */
void run_save_path(const char *save, int nruns, const char *tag, char *path, size_t size)
{
    const char *dot = strrchr(save, '.'), *slash = strrchr(save, '/');
    int stem = dot && (!slash || dot > slash) ? (int)(dot - save) : (int)strlen(save);
    if (nruns == 1) snprintf(path, size, "%s", save);
    else snprintf(path, size, "%.*s-%s%s", stem, save, tag, save + stem);
}

static void save_path(const options *o, attn_kind kind, int seed, char *path, size_t size)
{
    char tag[64];
    snprintf(tag, sizeof tag, "%s-s%d", attn_kind_get(kind)->name, seed);
    run_save_path(o->save, o->nattn * o->seeds, tag, path, size);
}

/* The final rollouts' length: --rollout-len, or --ng when it is 0. */
static int rollout_len(const options *o) { return o->rollout_len > 0 ? o->rollout_len : o->ng; }

/* A run in progress as bytes (a snapshot, attnlab.h): the epoch it goes on from, the step count
   and training stream, its curve so far (room for cap evaluations), the parameters and velocity. */
typedef struct {
    long epoch, step;
    attn_rng train;
} nt_state;
/* A run's curve so far through jb_io (room for cap evaluations). */
static void nt_curve_io(jobbuf *b, run_result *r, int cap)
{
    jb_count(b, &r->nevals, cap);
    jb_io(b, r->epoch, sizeof(int) * (size_t)r->nevals);
    jb_io(b, r->acc, sizeof(double) * (size_t)r->nevals);
    jb_io(b, r->acc_task[0], sizeof(double) * (size_t)r->nevals);
    jb_io(b, r->acc_task[1], sizeof(double) * (size_t)r->nevals);
    jb_io(b, r->loss, sizeof(double) * (size_t)r->nevals);
    jb_io(b, &r->epoch_100, sizeof r->epoch_100);
}

static void nt_state_io(jobbuf *b, nt_state *t, run_result *r, attn_params *p, attn_float *vel, int cap)
{
    jb_io(b, t, sizeof *t);
    nt_curve_io(b, r, cap);
    jb_io(b, p->data, sizeof(attn_float) * p->total);
    jb_io(b, vel, sizeof(attn_float) * p->total);
}

/* Run jj (res) of the grid: kind and seed; cap: the evaluations res has room for. */
/* Whether every parameter is NaN: then every later step leaves them NaN, every output is NaN and
   every later evaluation gives what the first one at NaN gave, so run_one computes none of them
   (unless --full-nan 1). */
static int all_nan(const attn_params *p)
{
    int i;
    for (i = 0; i < p->count; i++) {
        const attn_float *v = p->value[i].data;
        size_t k, n = attn_tensor_numel(&p->value[i]);
        for (k = 0; k < n; k++)
            if (v[k] == v[k]) return 0;
    }
    return 1;
}

static void run_one(const options *o, attn_kind kind, int seed, run_result *res, int jj, int cap)
{
    model m;
    attn_rng init_rng, eval_rng;
    nt_state t = {0, 0, {0, 0}};
    jobbuf snap;
    model_buf tb, eb;
    int len = o->ncon + NBATCH, elen = o->ncon + o->ng, *series = (int *)malloc(sizeof(int) * (size_t)len), *ev, *rules, nev, j;
    attn_float *vel = NULL;
    long epoch;
    char line[256];
    int C = dp_chunks < NBATCH ? dp_chunks : NBATCH, evaluate = !data_parallel || mpi_rank() == 0; /* data-parallel: rank 0 */
    int nan = 0, nan_k = -1; /* the parameters are all NaN; the first evaluation since */
    dp_sum dp = {0};
    attn_rng_seed(&init_rng, (uint64_t)seed, 1);
    attn_rng_seed(&t.train, (uint64_t)seed, 2);
    attn_rng_seed(&eval_rng, (uint64_t)seed, 3);
    res->failed = model_init(&m, o, kind, &init_rng) != ATTN_OK;
    for (j = 0; !res->failed && o->init_gain != 1 && j < m.p->count; j++) /* --init-gain: the matrices scaled */
        if (m.p->value[j].ndim >= 2) attn_scale(attn_tensor_numel(&m.p->value[j]), (attn_float)o->init_gain, m.p->value[j].data);
    if (res->failed) { fprintf(stderr, "attnlab: %s\n", attn_last_error()); free(series); return; }
    if (o->start) memcpy(m.p->data, o->start->p->data, sizeof(attn_float) * m.p->total); /* the same configuration, so the same block */
    vel = (attn_float *)calloc(m.p->total, sizeof(attn_float));
    if (data_parallel && !dp_begin(&dp, m.p->total, C)) res->failed = 1; /* the run then reports nothing */
    ev = (int *)malloc(sizeof(int) * (size_t)o->ntest * elen);
    rules = (int *)malloc(sizeof(int) * (size_t)o->ntest);
    nev = draw_series(o, ev, rules, o->ntest, elen, &eval_rng);
    buf_alloc(&tb, &m, o->update_epoch ? NBATCH : 1);
    buf_alloc(&eb, &m, o->ng);
    res->epoch_100 = -1;
    if (!res->failed && snap_resume(jj, &snap)) { /* --resume: on from the snapshot */
        nt_state_io(&snap, &t, res, m.p, vel, cap);
        res->failed = !snap_resumed(jj, &snap, t.epoch);
    }
    for (epoch = t.epoch; epoch <= o->epochs && !stop_requested && !res->failed; epoch++) {
        if (epoch % o->eval_every == 0 || epoch == o->epochs || (epoch <= o->eval_early && epoch % 10 == 0)) {
            /* evaluate before training epoch `epoch` */
            int k = res->nevals++;
            res->epoch[k] = (int)epoch;
            double at[2] = {0, 0};
            if (nan && nan_k >= 0) { /* what computing it gives */
                res->acc[k] = res->acc[nan_k]; res->loss[k] = res->loss[nan_k];
                at[0] = res->acc_task[0][nan_k]; at[1] = res->acc_task[1][nan_k];
            } else {
                res->acc[k] = evaluate ? eval_tf(&m, &eb, ev, rules, nev, o->ng, elen, &res->loss[k], at) : 0;
                if (nan) nan_k = k;
            }
            res->prog.latest = res->acc[k];
            res->prog.evaluated = 1;
            res->acc_task[0][k] = at[0];
            res->acc_task[1][k] = at[1];
            if (res->acc[k] >= 1 && res->epoch_100 < 0) res->epoch_100 = (int)epoch;
            nt_row(line, sizeof line, kind, seed, res, k);
            csv_row(&train_csv, line);
        }
        if (epoch == o->epochs) break;
        {
            double lr = o->lr * (o->lr_drop_epoch && epoch >= o->lr_drop_epoch ? 0.25 : 1);
            attn_nt_series(series, len, o->task, o->N, o->tau, NULL, &t.train, NULL);
            for (j = 0; !data_parallel && j < (o->update_epoch ? 1 : NBATCH); j++) {
                int nb = o->update_epoch ? NBATCH : 1;
                if (nan) { t.step++; continue; } /* NaN stays NaN */
                model_forward(&m, &tb, series + j, 1, nb);
                model_loss_grad(o, &tb, series + j, nb, nb);
                model_sgd_step(&m, &tb, nb, vel, lr, o->momentum, t.step++);
            }
            if (!nan && !data_parallel && !o->full_nan) m.nan = nan = all_nan(m.p);
            for (j = 0; data_parallel && j < C; j++) { /* this rank's chunks of the epoch's windows */
                int a = j * NBATCH / C, nb = (j + 1) * NBATCH / C - a;
                if (!dp_mine(j)) continue;
                model_forward(&m, &tb, series + a, 1, nb);
                model_loss_grad(o, &tb, series + a, nb, nb);
                model_grad(&m, &tb, nb);
                dp_add(&dp, j, m.p->gdata, (double)nb / NBATCH, 0);
            }
            if (data_parallel) {
                dp_end(&dp, m.p->gdata);
                attn_sgd_step(m.p, vel, (attn_float)lr, (attn_float)o->momentum, t.step++);
            }
        }
        res->prog.done = epoch + 1;
        if (epoch % 64 == 0) progress_report(&progress, 0);
        if (snap_due(epoch + 1) && epoch + 1 < o->epochs) { /* the state before epoch + 1 */
            nt_state next = t;
            next.epoch = epoch + 1;
            memset(&snap, 0, sizeof snap);
            nt_state_io(&snap, &next, res, m.p, vel, cap);
            snap_save(jj, &snap);
            free(snap.p);
        }
    }
    if (!stop_requested && o->final_test > 0 && evaluate) { /* the final evaluation on fresh distinct series */
        int nf, rl = rollout_len(o), flen = o->ncon + (rl > o->ng ? rl : o->ng);
        int *fx = (int *)malloc(sizeof(int) * (size_t)o->final_test * flen), *fr = (int *)malloc(sizeof(int) * (size_t)o->final_test);
        double l;
        attn_rng fin;
        attn_rng_seed(&fin, (uint64_t)seed, 4);
        nf = res->final_series = draw_series(o, fx, fr, o->final_test, flen, &fin);
        res->final_tf = eval_tf(&m, &eb, fx, fr, nf, o->ng, flen, &l, res->final_task);
        res->final_rollout = eval_rollout(&m, &eb, fx, nf < o->rollout_series ? nf : o->rollout_series, rl, flen,
                                          &res->final_perfect);
        free(fx); free(fr);
    }
    if (o->save && evaluate) {
        char path[1024];
        save_path(o, kind, seed, path, sizeof path);
        if (model_save(&m, path) != ATTN_OK) {
            fprintf(stderr, "\nattnlab: %s\n", attn_last_error());
            res->failed = 1;
        }
    }
    buf_free(&tb); buf_free(&eb);
    free(series); free(vel); free(ev); free(rules);
    dp_free(&dp);
    model_free(&m);
}

/* ---- reporting ---- */

const char *seeds_note(int seeds) { return seeds == 1 ? "" : "s (band: +-1 sd)"; }

double mean_sd(const double *x, int n, double *sd)
{
    double m = 0, v = 0;
    int i;
    for (i = 0; i < n; i++) m += x[i] / n;
    for (i = 0; i < n; i++) v += (x[i] - m) * (x[i] - m);
    *sd = n > 1 ? sqrt(v / (n - 1)) : 0;
    return m;
}

/* The expressive-attention paper's colours (its Fig. 2: softmax maroon, EA blue); the palette's for
   the other kinds. */
static const char *kind_rgb(attn_kind k)
{
    const char *name = attn_kind_get(k)->name;
    return !strcmp(name, "softmax") ? "#800000" : !strcmp(name, "ea") ? "#1f4e9c" : NULL;
}

/* Welch's test of mean(b) - mean(a): the difference, its 95% interval [*lo, *hi], t, the degrees
   of freedom and the two-sided p (the t distribution through the regularised incomplete beta
   function, Numerical Recipes' continued fraction). 0 when a side has fewer than 2 values or no
   spread. */
static double betacf(double a, double b, double x)
{
    double c = 1, d = 1 - (a + b) * x / (a + 1), h, aa, del;
    int m;
    d = 1 / (fabs(d) < 1e-300 ? 1e-300 : d);
    h = d;
    for (m = 1; m <= 300; m++) {
        aa = m * (b - m) * x / ((a - 1 + 2 * m) * (a + 2 * m));
        d = 1 + aa * d; d = 1 / (fabs(d) < 1e-300 ? 1e-300 : d); c = 1 + aa / c; c = fabs(c) < 1e-300 ? 1e-300 : c;
        h *= d * c;
        aa = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1 + 2 * m));
        d = 1 + aa * d; d = 1 / (fabs(d) < 1e-300 ? 1e-300 : d); c = 1 + aa / c; c = fabs(c) < 1e-300 ? 1e-300 : c;
        del = d * c;
        h *= del;
        if (fabs(del - 1) < 3e-14) break;
    }
    return h;
}
static double ibeta(double a, double b, double x)
{
    double bt;
    if (x <= 0 || x >= 1) return x <= 0 ? 0 : 1;
    bt = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log(1 - x));
    return x < (a + 1) / (a + b + 2) ? bt * betacf(a, b, x) / a : 1 - bt * betacf(b, a, 1 - x) / b;
}
static double t_cdf(double t, double df)
{
    double p = 0.5 * ibeta(df / 2, 0.5, df / (df + t * t));
    return t > 0 ? 1 - p : p;
}
/* t, p and the 95% interval of w->diff with standard error se on w->df degrees of freedom. */
static void t_interval(welch_result *w, double se)
{
    double lo = 0, hi = 100;
    int i;
    w->t = w->diff / se;
    w->p = 2 * (1 - t_cdf(fabs(w->t), w->df));
    for (i = 0; i < 100; i++) { /* the 97.5% quantile by bisection */
        double mid = (lo + hi) / 2;
        if (t_cdf(mid, w->df) < 0.975) lo = mid; else hi = mid;
    }
    w->lo = w->diff - lo * se; w->hi = w->diff + lo * se;
}
int welch(const double *a, int na, const double *b, int nb, welch_result *w)
{
    double sa, sb, ma = mean_sd(a, na, &sa), mb = mean_sd(b, nb, &sb), va, vb, se;
    if (na < 2 || nb < 2) return 0;
    va = sa * sa / na; vb = sb * sb / nb; se = sqrt(va + vb);
    if (!(se > 0)) return 0;
    w->diff = mb - ma;
    w->df = (va + vb) * (va + vb) / (va * va / (na - 1) + vb * vb / (nb - 1));
    t_interval(w, se);
    return 1;
}
int paired_t(const double *a, const double *b, int n, welch_result *w)
{
    double sd, *d = n >= 2 ? (double *)malloc(sizeof(double) * (size_t)n) : NULL;
    int i;
    if (!d) return 0;
    for (i = 0; i < n; i++) d[i] = b[i] - a[i];
    w->diff = mean_sd(d, n, &sd);
    free(d);
    if (!(sd > 0)) return 0;
    w->df = n - 1;
    t_interval(w, sd / sqrt(n));
    return 1;
}

/* The curves as the paper draws them: mean teacher-forced accuracy per attention with a band of
   +-1 sd over seeds (left axis), mean loss dashed (right axis); 0 if it cannot be written. */
static int write_svg(const options *o, run_result *res)
{
    attn_plot p;
    attn_plot_series s[2 * MAX_ATTN + 1];
    double level[2], ends[2];
    char title[160];
    int a, k, r, n = res[0].nevals, ns;
    double *x, *col = (double *)malloc(sizeof(double) * (size_t)o->seeds), *buf;
    for (r = 0; r < o->nattn * o->seeds; r++) n = res[r].nevals < n ? res[r].nevals : n;
    if (n < 1) { free(col); return 1; }
    buf = (double *)malloc(sizeof(double) * (size_t)n * (1 + 4 * o->nattn));
    x = buf;
    for (k = 0; k < n; k++) x[k] = res[0].epoch[k];
    for (a = 0; a < o->nattn; a++) {
        double *acc = buf + (size_t)n * (1 + 4 * a), *lo = acc + n, *hi = lo + n, *loss = hi + n, sd;
        for (k = 0; k < n; k++) {
            for (r = 0; r < o->seeds; r++) col[r] = res[a * o->seeds + r].acc[k];
            acc[k] = mean_sd(col, o->seeds, &sd);
            lo[k] = fmax(0, acc[k] - sd); hi[k] = fmin(1, acc[k] + sd);
            for (r = 0; r < o->seeds; r++) col[r] = res[a * o->seeds + r].loss[k];
            loss[k] = mean_sd(col, o->seeds, &sd);
        }
        memset(&s[2 * a], 0, 2 * sizeof s[0]);
        s[2 * a].label = attn_kind_get(o->attn[a])->name; s[2 * a].x = x; s[2 * a].y = acc; s[2 * a].lo = lo; s[2 * a].hi = hi;
        s[2 * a + 1].x = x; s[2 * a + 1].y = loss; s[2 * a + 1].right = 1;
        s[2 * a].n = s[2 * a + 1].n = n; s[2 * a].colour = s[2 * a + 1].colour = a;
        s[2 * a].rgb = s[2 * a + 1].rgb = kind_rgb(o->attn[a]);
    }
    ns = 2 * o->nattn;
    if (o->plateau == o->plateau) { /* the paper's plateau, across the whole run */
        memset(&s[ns], 0, sizeof s[ns]);
        level[0] = level[1] = o->plateau;
        ends[0] = x[0]; ends[1] = x[n - 1];
        s[ns].label = "the paper's plateau"; s[ns].x = ends; s[ns].y = level; s[ns].n = 2; s[ns].rgb = "#888888";
        s[ns].style = ATTN_LINE_DOTTED;
        ns++;
    }
    snprintf(title, sizeof title, "%s N%dT%d, N_con = %d, %s, %d seed%s", attn_nt_name(o->task), o->N, o->tau,
             o->ncon, o->decoder ? "decoder" : "cisformer", o->seeds, seeds_note(o->seeds));
    memset(&p, 0, sizeof p);
    p.title = title; p.xlabel = "epoch"; p.ylabel = "accuracy (teacher-forced)"; p.y2label = "loss (dashed)"; p.ymin = 0; p.ymax = 1;
    n = attn_plot_svg(o->svg, &p, s, ns) == ATTN_OK;
    if (n) printf("wrote %s\n", o->svg);
    else fprintf(stderr, "attnlab: %s\n", attn_last_error());
    free(buf); free(col);
    return n;
}

/* Mean and sd over the seeds of attention a of the double field at offset `off` of run_result. */
static double over_seeds(const options *o, const run_result *res, int a, size_t off, double *sd)
{
    double *x = (double *)malloc(sizeof(double) * (size_t)o->seeds), m;
    int s;
    for (s = 0; s < o->seeds; s++) x[s] = *(const double *)((const char *)&res[a * o->seeds + s] + off);
    m = mean_sd(x, o->seeds, sd);
    free(x);
    return m;
}

/* Two kinds compared, kind 1 minus kind 0: the final accuracy and the epochs to 100% (over the runs
   that got there), each with Welch's 95% interval and test, and what the numbers support. */
static void print_comparison(const options *o, const run_result *res)
{
    const char *k0 = attn_kind_get(o->attn[0])->name, *k1 = attn_kind_get(o->attn[1])->name;
    double *v = (double *)malloc(sizeof(double) * 4 * (size_t)o->seeds), *e0 = v + 2 * o->seeds, *e1 = e0 + o->seeds;
    int s, n0 = 0, n1 = 0;
    welch_result w;
    for (s = 0; s < o->seeds; s++) {
        const run_result *r0 = &res[s], *r1 = &res[o->seeds + s];
        v[s] = r0->final_tf; v[o->seeds + s] = r1->final_tf;
        if (r0->epoch_100 >= 0) e0[n0++] = r0->epoch_100;
        if (r1->epoch_100 >= 0) e1[n1++] = r1->epoch_100;
    }
    printf("\n%s - %s, n = %d seeds each (Welch's test, 95%% interval):\n", k1, k0, o->seeds);
    if (welch(v, o->seeds, v + o->seeds, o->seeds, &w))
        printf("  final accuracy: %+.4f [%+.4f, %+.4f], t = %.2f, df = %.1f, p = %.2g\n", w.diff, w.lo, w.hi, w.t, w.df, w.p);
    else printf("  final accuracy: no spread to test\n");
    printf("  runs at 100%%: %d and %d of %d\n", n0, n1, o->seeds);
    if (welch(e0, n0, e1, n1, &w)) {
        printf("  epochs to 100%%: %+.0f [%+.0f, %+.0f], t = %.2f, df = %.1f, p = %.2g\n", w.diff, w.lo, w.hi, w.t, w.df, w.p);
        if (w.p < 0.05) printf("  verdict: %s reaches 100%% first\n", w.diff > 0 ? k0 : k1);
        else printf("  verdict: no difference in the time to 100%% at this n\n");
    }
    free(v);
}

static void print_table(const options *o, run_result *res)
{
    int a, s;
    double *ep = (double *)malloc(sizeof(double) * (size_t)o->seeds);
    printf("\n%-10s %-17s %-17s %-9s %-10s %s\n", "attention", "final acc (tf)", "rollout acc", "100% runs", "epochs>100%", "all-correct rollouts");
    for (a = 0; a < o->nattn; a++) {
        double m1, s1, m2, s2, m3, s3, me = 0, se = 0;
        int n100 = 0, nan = 0;
        for (s = 0; s < o->seeds; s++) {
            const run_result *r = &res[a * o->seeds + s];
            if (r->epoch_100 >= 0) ep[n100++] = r->epoch_100;
            nan += r->nevals > 0 && !(r->loss[r->nevals - 1] == r->loss[r->nevals - 1]); /* diverged: the loss is NaN */
        }
        m1 = over_seeds(o, res, a, offsetof(run_result, final_tf), &s1);
        m2 = over_seeds(o, res, a, offsetof(run_result, final_rollout), &s2);
        m3 = over_seeds(o, res, a, offsetof(run_result, final_perfect), &s3);
        if (n100) me = mean_sd(ep, n100, &se);
        printf("%-10s %.4f +- %.4f  %.4f +- %.4f  %2d / %-4d ", attn_kind_get(o->attn[a])->name, m1, s1, m2, s2, n100, o->seeds);
        if (n100) printf("%6.0f +- %-5.0f", me, se);
        else printf("%-13s", "never");
        printf(" %.3f", m3);
        if (nan) printf("  (%d diverged: NaN loss)", nan);
        printf("\n");
        if (o->task == ATTN_NT_MIX) {
            m1 = over_seeds(o, res, a, offsetof(run_result, final_task[0]), &s1);
            m2 = over_seeds(o, res, a, offsetof(run_result, final_task[1]), &s2);
            printf("           per task: NT %.4f +- %.4f, NT-S %.4f +- %.4f\n", m1, s1, m2, s2);
        }
    }
    free(ep);
    printf("(final: teacher-forced on %d distinct series x %d predictions; rollouts of %d tokens on up to %d of them;\n"
           " \"epochs>100%%\": the first evaluation at 100%%, mean over the runs that got there)\n", res[0].final_series, o->ng,
           rollout_len(o), o->rollout_series);
    if (o->nattn == 2) print_comparison(o, res);
}

/* Run j of the (attention, seed) grid, for run_jobs. */
struct train_jobs {
    const options *o; run_result *res;
    int nev; /* the evaluations a run has room for */
};
static void train_job(void *ctx, int j)
{
    struct train_jobs *t = (struct train_jobs *)ctx;
    run_one(t->o, t->o->attn[j / t->o->seeds], j % t->o->seeds, &t->res[j], j, t->nev);
}
static int train_xfer(void *ctx, int j, jobbuf *b)
{
    struct train_jobs *t = (struct train_jobs *)ctx;
    run_result *r = &t->res[j];
    nt_curve_io(b, r, t->nev);
    jb_io(b, &r->final_tf, sizeof r->final_tf);
    jb_io(b, &r->final_rollout, sizeof r->final_rollout);
    jb_io(b, &r->final_perfect, sizeof r->final_perfect);
    jb_io(b, r->final_task, sizeof r->final_task);
    jb_io(b, &r->final_series, sizeof r->final_series);
    jb_io(b, &r->failed, sizeof r->failed);
    return !r->failed;
}
static int train_line(const void *ctx, int j, int k, char *line, size_t n)
{
    const struct train_jobs *t = (const struct train_jobs *)ctx;
    if (k >= t->res[j].nevals) return 0;
    nt_row(line, n, t->o->attn[j / t->o->seeds], j % t->o->seeds, &t->res[j], k);
    return 1;
}

/* The limits every command checks before its first run: the runs that go at once (at most the
   thread count) may take half this machine's memory, run_bytes each, and a run 48 hours: fwd_secs
   is one timed forward pass of one sequence; a training step takes three per sequence it trains on
   (train_seqs in all), an evaluation one (eval_seqs). Past them the command is refused unless
   --force. 1: go on. */
int force_limits = 0;
static double memory_limit(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && psize > 0 ? (double)pages * psize / 2 : 8e9;
}
int limits_ok(const char *cmd, double run_bytes, int runs, int threads, double fwd_secs, double train_seqs,
              double eval_seqs)
{
    int conc = threads > 0 ? threads : attn_get_threads();
    double ram = memory_limit(), gb, hours;
    char each[64];
    conc = conc < runs ? conc : runs;
    gb = run_bytes * conc / 1e9;
    hours = fwd_secs * (3 * train_seqs + eval_seqs) / 3600;
    if (gb < ram / 1e9 && hours < 48) return 1;
    snprintf(each, sizeof each, fwd_secs > 0 ? "each about %.0f hours" : "each of them was not timed", hours);
    fprintf(stderr, "%s: %d run(s) at once need %.1f GB, and %s; the limits are %.1f GB (half this machine's "
            "memory) and 48 hours a run%s\n", cmd, conc, gb, each, ram / 1e9,
            force_limits ? "; going on (--force)" : ": use a smaller model, fewer --threads or steps, or --force");
    return force_limits;
}

/* A transformer's share of the estimate for runs on B sequences of T tokens (or dense inputs of
   in_dim): *bytes a run (parameters, gradients and two moments, the caches, workspace and three
   [B, T, out] logit buffers) and *secs one forward pass of one sequence, timed when the bytes are
   within reach (else 0). 0 when the model cannot be built (attn_last_error says why). */
int transformer_probe(const attn_transformer_config *cf, int B, int T, double *bytes, double *secs)
{
    attn_transformer m;
    attn_rng r;
    attn_float *cache, *y, *x;
    int *tok;
    void *work;
    size_t wb, nc;
    struct timespec t0, t1;
    attn_rng_seed(&r, 0, 0);
    if (attn_transformer_init(&m, cf, &r) != ATTN_OK) return 0;
    *bytes = (double)sizeof(attn_float) * (4.0 * m.p.total + (double)attn_transformer_cache_floats(&m, B, T) +
                                           3.0 * B * T * cf->out) + (double)attn_transformer_work_bytes(&m, B, T);
    *secs = 0;
    if (*bytes > memory_limit()) return attn_transformer_free(&m), 1; /* refused without the time */
    wb = attn_transformer_work_bytes(&m, 1, T);
    cache = (attn_float *)malloc(sizeof(attn_float) * (nc = attn_transformer_cache_floats(&m, 1, T)));
    y = (attn_float *)malloc(sizeof(attn_float) * T * cf->out);
    x = (attn_float *)calloc((size_t)T * (cf->in_dim > 0 ? cf->in_dim : 1), sizeof(attn_float));
    tok = (int *)calloc((size_t)T, sizeof(int));
    work = malloc(wb);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (cache && y && x && tok && work)
        attn_transformer_forward(&m, y, cache, nc, cf->vocab > 0 ? tok : NULL, cf->vocab > 0 ? NULL : x, 1, T, work, wb);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    free(cache); free(y); free(x); free(tok); free(work);
    attn_transformer_free(&m);
    return 1;
}

/* The resources a grid asks for, estimated before any model is built: the memory of the runs that
   go at once (their parameters, gradients and momentum, from the parameter count; the caches come
   on top), and each run's time: one forward pass over one window of a probe model with N_con at
   most 128, timed, scaled by (N_con / 128)^2 (attention's cost; an over-estimate where the
   positions' weights dominate), times the window passes of the run (three per training window for
   the backward, its evaluations and its final test). 1: go on. */
static int resources_ok(const options *o, attn_kind kind, int njobs)
{
    options po = *o;
    model probe;
    model_buf b;
    attn_rng r;
    struct timespec t0, t1;
    double secs, scale;
    int *tok;
    po.ncon = o->ncon < 128 ? o->ncon : 128;
    scale = (double)o->ncon / po.ncon;
    attn_rng_seed(&r, 0, 0);
    if (model_init(&probe, &po, kind, &r) != ATTN_OK) return 1; /* the full model's build says why */
    if (!(tok = (int *)calloc((size_t)po.ncon, sizeof(int))) || !buf_alloc(&b, &probe, 1)) {
        free(tok);
        model_free(&probe);
        fprintf(stderr, "attnlab: out of memory for the probe model\n");
        return 0;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    model_forward(&probe, &b, tok, 0, 1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    buf_free(&b);
    free(tok);
    model_free(&probe);
    secs = ((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec)) * scale * scale;
    return limits_ok("attnlab", 3.0 * sizeof(attn_float) * (double)model_param_count(o), njobs, o->threads, secs,
                     (double)o->epochs * NBATCH,
                     ((double)o->epochs / o->eval_every + o->eval_early / 10.0) * o->ntest * o->ng +
                         (double)o->final_test * o->ng + (double)o->rollout_series * rollout_len(o));
}

static int cmd_train(const options *o)
{
    int njobs = o->nattn * o->seeds, j, nev = (int)(o->epochs / o->eval_every) + o->eval_early / 10 + 3, failed = 0, lost, out, rc;
    run_result *res;
    struct train_jobs jobs;
    char first[1024];
    if (!dry_run && !resources_ok(o, o->attn[0], njobs)) return 1;
    for (j = 0; j < o->nattn; j++) { /* each kind's model is built once before any run starts (a dry run: counted) */
        model trial;
        attn_rng r;
        attn_rng_seed(&r, 0, 0);
        if (dry_run ? !model_param_count(o) : model_init(&trial, o, o->attn[j], &r) != ATTN_OK) {
            fprintf(stderr, "attnlab: the model cannot be built: %s\n", attn_last_error());
            return 1;
        }
        if (!dry_run) model_free(&trial);
    }
    if (o->save) save_path(o, o->attn[0], 0, first, sizeof first);
    if (!output_ok(o->csv) || !output_ok(o->svg) || !output_ok(o->save ? first : NULL)) return 1;
    if (dry_run) { printf("dry run: %d run(s) would start; the options, the model and the outputs are fine\n", njobs); return 0; }
    if (!(res = (run_result *)calloc((size_t)njobs, sizeof(run_result)))) { fprintf(stderr, "attnlab: out of memory\n"); return 1; }
    for (j = 0; j < njobs; j++) {
        res[j].epoch = (int *)calloc((size_t)nev, sizeof(int));
        res[j].acc = (double *)calloc((size_t)nev, sizeof(double));
        res[j].loss = (double *)calloc((size_t)nev, sizeof(double));
        res[j].acc_task[0] = (double *)calloc((size_t)nev, sizeof(double));
        res[j].acc_task[1] = (double *)calloc((size_t)nev, sizeof(double));
        if (!res[j].epoch || !res[j].acc || !res[j].loss || !res[j].acc_task[0] || !res[j].acc_task[1]) {
            fprintf(stderr, "attnlab: out of memory\n");
            return 1;
        }
    }
    jobs.o = o; jobs.res = res; jobs.nev = nev;
    printf("attnlab train: %s N%dT%d, N_con = %d, %s (%lu parameters), %d attention(s) x %d seeds, %ld epochs, a step per %s, lr %g, momentum %g\n",
           attn_nt_name(o->task), o->N, o->tau, o->ncon, o->decoder ? "decoder" : "cisformer", (unsigned long)model_param_count(o), o->nattn, o->seeds, o->epochs,
           o->update_epoch ? "epoch" : "prediction", o->lr, o->momentum);
    progress_begin(&progress, res, sizeof *res, offsetof(run_result, prog), njobs, (long)njobs * o->epochs, "epochs", "mean latest accuracy");
    catch_stop();
    {
        job_set js = {train_job, train_xfer, train_line, &train_csv, o->csv, NT_CSV_HEADER, &jobs};
        lost = run_jobs(njobs, o->threads, &js, &progress);
    }
    csv_end(&train_csv);
    for (j = 0; j < njobs; j++) failed += res[j].failed;
    out = runs_end(lost, failed, njobs, "attnlab", &rc);
    if (out == 2) print_table(o, res);
    if (out && o->csv && !csv_write(o->csv, NT_CSV_HEADER, njobs, train_line, &jobs)) rc = 1;
    if (out == 2 && o->svg && !write_svg(o, res)) rc = 1;
    for (j = 0; j < njobs; j++) { free(res[j].epoch); free(res[j].acc); free(res[j].loss); free(res[j].acc_task[0]); free(res[j].acc_task[1]); }
    free(res);
    return rc;
}

/* attnlab eval --load F: the final evaluation of a saved model on --final-test fresh series. */
static int cmd_eval(const options *o)
{
    const model *m = o->start; /* parse_options read it */
    model_buf eb;
    attn_rng r;
    int rl = rollout_len(o), elen = o->ncon + (rl > o->ng ? rl : o->ng), n = o->final_test > 0 ? o->final_test : 1, *x, *rules,
        ns, nr;
    double loss, at[2], tf, ro, perfect;
    if (!m) { fprintf(stderr, "attnlab eval: --load FILE names the model to evaluate\n"); return 1; }
    if (dry_run) { printf("dry run: %s would be evaluated\n", o->load); return 0; }
    x = (int *)malloc(sizeof(int) * (size_t)n * elen);
    rules = (int *)malloc(sizeof(int) * (size_t)n);
    if (!x || !rules || !buf_alloc(&eb, m, o->ng)) { fprintf(stderr, "attnlab eval: out of memory\n"); return 1; }
    attn_rng_seed(&r, 0, 4);
    ns = draw_series(o, x, rules, n, elen, &r);
    nr = ns < o->rollout_series ? ns : o->rollout_series;
    tf = eval_tf(m, &eb, x, rules, ns, o->ng, elen, &loss, at);
    ro = eval_rollout(m, &eb, x, nr, rl, elen, &perfect);
    printf("%s (%s, N %d, ncon %d) on %s N%dT%d, %d series x %d predictions:\n  teacher-forced accuracy %.4f, loss %.4f;"
           " rollout accuracy %.4f (%d series of %d tokens), all-correct rollouts %.3f\n",
           o->load, attn_kind_get(model_kind(m))->name, m->N, m->ncon, attn_nt_name(o->task), o->N, o->tau, ns, o->ng, tf, loss, ro, nr,
           rl, perfect);
    if (o->task == ATTN_NT_MIX) printf("  per task: NT %.4f, NT-S %.4f\n", at[0], at[1]);
    buf_free(&eb);
    free(x); free(rules);
    return 0;
}

static int cmd_census(const options *o)
{
    attn_nt_census c;
    int k;
    if (o->task == ATTN_NT_MIX) { fprintf(stderr, "attnlab census: the mixture has no single state map; use nt or nts\n"); return 1; }
    if (dry_run) return 0;
    if (attn_nt_census_compute(&c, o->task, o->N, o->tau) != ATTN_OK) { fprintf(stderr, "attnlab census: %s\n", attn_last_error()); return 1; }
    printf("%s N%dT%d:", attn_nt_name(o->task), o->N, o->tau);
    for (k = 0; k < c.nlengths; k++) printf(" %ldx%ld", c.count[k], c.length[k]);
    printf("\nstates %ld, cycles %ld, states on cycles %ld, transient %ld, mean cycle length %.2f\n", c.states, c.cycles, c.cycle_states,
           c.transient, (double)c.cycle_states / (double)c.cycles);
    return 0;
}

/* ---- presets: the paper's settings (Gros 2024, Sec. 3-4) ---- */

/* A preset is one or more runs, each an option string for `train` (or `census` for E12); the quick
   variant cuts seeds and epochs so that it finishes in minutes on two cores (none: the runs are
   quick already). Budgets are the paper's
   defaults (the paper does not state them), 16 seeds as the paper averages. */
typedef struct {
    const char *name, *claim;
    const char *runs[4], *quick[4];
} preset;

#define P_NT16 "--task nt --N 16 --tau 2 --attn softmax,ea "
#define P_T5 "--task nt --N 16 --tau 5 "
static const preset presets[] = {
    {"E1", "N16T2, N_con 32: both rise to a plateau ~0.55; softmax stays, EA escapes slowly",
     {P_NT16 "--ncon 32 --seeds 16 --epochs 10000 --eval-every 100"},
     {P_NT16 "--ncon 32 --seeds 4 --epochs 2000 --eval-every 50 --final-test 1000"}},
    {"E2", "N16T2, N_con 52: softmax trapped at ~0.55, EA reaches 100%",
     {P_NT16 "--ncon 52 --seeds 16 --epochs 2000 --eval-every 50"},
     {P_NT16 "--ncon 52 --seeds 4 --epochs 1000 --eval-every 50 --final-test 1000"}},
    {"E3", "N16T2, N_con 56: both reach 100% within ~100 epochs",
     {P_NT16 "--ncon 56 --seeds 16 --epochs 500 --eval-every 10"},
     {P_NT16 "--ncon 56 --seeds 4 --epochs 300 --eval-every 10 --final-test 1000"}},
    {"E4", "N16T2, N_con 16: EA converges to 100% after ~2000 epochs",
     {P_NT16 "--ncon 16 --seeds 16 --epochs 5000 --eval-every 50"},
     {P_NT16 "--ncon 16 --seeds 4 --epochs 3000 --eval-every 50 --final-test 1000"}},
    {"E5", "N2T5, N_con 16 (802 parameters): softmax waits long at 50% before converging, EA shorter",
     {"--task nt --N 2 --tau 5 --attn softmax,ea --ncon 16 --seeds 16 --epochs 20000 --eval-every 100"},
     {"--task nt --N 2 --tau 5 --attn softmax,ea --ncon 16 --seeds 4 --epochs 5000 --eval-every 50"}},
    {"E6", "N16T5, N_con 128: both reach a plateau ~0.2; softmax stuck, EA escapes slowly",
     {P_T5 "--attn softmax,ea --ncon 128 --seeds 16 --epochs 10000 --eval-every 100"},
     {P_T5 "--attn softmax,ea --ncon 128 --seeds 2 --epochs 1000 --eval-every 50 --final-test 1000"}},
    {"E7", "N16T5, N_con 256, softmax: trapped at ~0.44",
     {P_T5 "--attn softmax --ncon 256 --seeds 16 --epochs 10000 --eval-every 100"},
     {P_T5 "--attn softmax --ncon 256 --seeds 2 --epochs 500 --eval-every 50 --final-test 1000"}},
    {"E8", "N16T5, N_con 512: training unstable for both at momentum 0.8, lr 0.02",
     {P_T5 "--attn softmax,ea --ncon 512 --seeds 16 --epochs 2000 --eval-every 50"},
     {P_T5 "--attn softmax,ea --ncon 512 --seeds 2 --epochs 300 --eval-every 25 --final-test 500"}},
    {"E9", "NT + NT-S mixture, N_con 32, lr / 4 after epoch 2500: EA ~99% on both, softmax ~0.34 on NT",
     {"--task mix --N 16 --tau 2 --attn softmax,ea --ncon 32 --seeds 16 --epochs 5000 --lr-drop 2500 --eval-every 50"},
     {"--task mix --N 16 --tau 2 --attn softmax,ea --ncon 32 --seeds 4 --epochs 3000 --lr-drop 1500 --eval-every 50 --final-test 1000"}},
    {"E10", "NT-S alone (N16T2, N_con 32): both reach 100%",
     {"--task nts --N 16 --tau 2 --attn softmax,ea --ncon 32 --seeds 16 --epochs 1000 --eval-every 25"},
     {"--task nts --N 16 --tau 2 --attn softmax,ea --ncon 32 --seeds 4 --epochs 500 --eval-every 25 --final-test 1000"}},
    {"E11", "NT-R, N_con 64 / 128: softmax ~0.36 / 0.72, EA 98.8% / 99.9%",
     {"--task ntr --N 16 --tau 2 --attn softmax,ea --ncon 64 --seeds 16 --epochs 20000 --eval-every 200",
      "--task ntr --N 16 --tau 2 --attn softmax,ea --ncon 128 --seeds 16 --epochs 20000 --eval-every 200"},
     {"--task ntr --N 16 --tau 2 --attn softmax,ea --ncon 64 --seeds 2 --epochs 2000 --eval-every 50 --final-test 1000"}},
    {"E12", "cycle census: N16T3, N16T2 (mean length 47.6), N16T2-S (23.8), N2T5 = 63 + 1",
     {"--task nt --N 16 --tau 3", "--task nt --N 16 --tau 2", "--task nts --N 16 --tau 2", "--task nt --N 2 --tau 5"},
     {NULL}},
};
#define NPRESETS (int)(sizeof presets / sizeof presets[0])

/* attnlab preset NAME [--quick] [--out DIR] [train options]: each run of the preset, with the
   user's options after the preset's (so they win), writing DIR/NAME[-ncon C].csv and .svg. */
static int cmd_preset(int argc, char **argv)
{
    const preset *p = NULL;
    const char *out = "results", *const *runs;
    int i, k, quick = 0, nuser = 0, rc = 0;
    char **user = (char **)malloc(sizeof(char *) * (size_t)argc);
    for (i = 0; i < NPRESETS && argc > 2; i++)
        if (!strcmp(argv[2], presets[i].name)) p = &presets[i];
    if (!p) {
        if (argc > 2) fprintf(stderr, "attnlab preset: unknown preset '%s'\n", argv[2]);
        fprintf(stderr, "usage: attnlab preset NAME [--quick] [--out DIR] [train options]; the presets:\n");
        for (i = 0; i < NPRESETS; i++) fprintf(stderr, "  %-4s %s\n", presets[i].name, presets[i].claim);
        fprintf(stderr, "  hyla-fuzzy, hyla-sraven  the HYLA paper's Table A1 columns (attnlab train --task fuzzy --help)\n"
                        "  cog-lm, cog-probes       the Cog paper's Table 4 and collapse probes in miniature (attnlab lm --help)\n"
                        "  seq2seq, thesis          the thesis' encoder-decoder, and its Tables 16 / 17 (attnlab seq2seq --help)\n");
        free(user);
        return 1;
    }
    for (i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else user[nuser++] = argv[i];
    }
    runs = quick && p->quick[0] ? p->quick : p->runs;
    printf("preset %s%s: %s\n", p->name, quick ? " (quick)" : "", p->claim);
    for (k = 0; k < 4 && runs[k] && rc == 0 && !stop_requested; k++) {
        char buf[512], *tok, *save = NULL, *args[64], csv[512], svg[512], label[64];
        int n = 2;
        options o;
        snprintf(buf, sizeof buf, "%s", runs[k]);
        args[0] = argv[0];
        args[1] = argv[1];
        for (tok = strtok_r(buf, " ", &save); tok && n < 48; tok = strtok_r(NULL, " ", &save)) args[n++] = tok;
        for (i = 0; i < nuser && n < 63; i++) args[n++] = user[i];
        args[n] = NULL;
        if (!parse_options(n, args, &o)) { rc = !help_shown; break; }
        if (!strcmp(p->name, "E12")) { rc = cmd_census(&o); continue; }
        if (runs[1]) snprintf(label, sizeof label, "%s-ncon%d%s", p->name, o.ncon, quick ? "-quick" : "");
        else snprintf(label, sizeof label, "%s%s", p->name, quick ? "-quick" : "");
        snprintf(csv, sizeof csv, "%s/%s.csv", out, label);
        snprintf(svg, sizeof svg, "%s/%s.svg", out, label);
        if (!o.csv) o.csv = csv;
        if (!o.svg) o.svg = svg;
        if (mkdir(out, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "attnlab preset: cannot create %s: %s\n", out, strerror(errno));
            rc = 1;
            break;
        }
        rc = cmd_train(&o);
    }
    free(user);
    return rc;
}

int preset_argv(int argc, char **argv, const char *cmd, const char *full, const char *quick, char *buf, size_t bufsz, char **args, int max,
                int *is_quick)
{
    static char moved[64][1024]; /* the preset's results/ paths moved under --out DIR */
    char *tok, *save = NULL;
    const char *out = "results";
    int i, n = 2, nm = 0;
    for (*is_quick = 0, i = 3; i < argc; i++) {
        *is_quick |= !strcmp(argv[i], "--quick");
        if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
    }
    snprintf(buf, bufsz, "%s", *is_quick ? quick : full);
    args[0] = argv[0]; args[1] = (char *)cmd;
    for (tok = strtok_r(buf, " ", &save); tok && n < max; tok = strtok_r(NULL, " ", &save)) {
        if (!strncmp(tok, "results/", 8) && nm < 64) {
            snprintf(moved[nm], sizeof moved[nm], "%s/%s", out, tok + 8);
            tok = moved[nm++];
        }
        args[n++] = tok;
    }
    if (strstr(*is_quick ? quick : full, "results/") && mkdir(out, 0777) != 0 && errno != EEXIST)
        fprintf(stderr, "attnlab preset: cannot create %s/: %s\n", out, strerror(errno)); /* the writes will say so too */
    for (i = 3; i < argc && n < max; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc) { i++; continue; }
        if (strcmp(argv[i], "--quick")) args[n++] = argv[i];
    }
    return n;
}

/* argv with every "--opt=value" split into "--opt" "value" (the strings are argv's, cut at '='),
   and the options of every command taken out: --dry-run, --force, --resume, --rank-timeout S,
   --data-parallel, --dp-chunks C and --snapshot-every S (they set dry_run, force_limits,
   resume_runs, rank_timeout, data_parallel, dp_chunks and snapshot_every). */
static char **split_equals(int *argc, char **argv)
{
    char **out = (char **)malloc(sizeof(char *) * (size_t)(2 * *argc + 1));
    int i, n = 0;
    if (!out) return argv;
    for (i = 0; i < *argc; i++) {
        char *eq = strncmp(argv[i], "--", 2) == 0 ? strchr(argv[i], '=') : NULL;
        if (i > 0 && !strcmp(argv[i], "--dry-run")) { dry_run = 1; continue; }
        if (i > 0 && !strcmp(argv[i], "--force")) { force_limits = 1; continue; }
        if (i > 0 && !strcmp(argv[i], "--resume")) { resume_runs = 1; continue; }
        if (i > 0 && !strcmp(argv[i], "--data-parallel")) { data_parallel = 1; continue; }
        if (i > 0 && i + 1 < *argc && ((!strcmp(argv[i], "--rank-timeout") && parse_int(argv[i + 1], 1, &rank_timeout)) ||
                                       (!strcmp(argv[i], "--dp-chunks") && parse_int(argv[i + 1], 1, &dp_chunks)) ||
                                       (!strcmp(argv[i], "--snapshot-every") && parse_int(argv[i + 1], 0, &snapshot_every)))) {
            i++;
            continue;
        }
        out[n++] = argv[i];
        if (eq) { *eq = 0; out[n++] = eq + 1; }
    }
    out[n] = NULL;
    *argc = n;
    return out;
}

/* attnlab plot: a figure redrawn from the CSVs a grid wrote. The rows (those matching every --where
   KEY=VALUE) are grouped by --by's column, in order of first appearance; each group's curve is the
   mean of --y over its seeds at every --x value, with a band of +-1 sd, and with --loss the mean
   of that column dashed against the right axis. Empty cells (the loss before the first step) are
   left out. */
#define PLOT_MAX_COLS 32
#define PLOT_MAX_GROUPS 16
typedef struct {
    char name[64];
    double *x, *y; /* [n] the x value and the y value of each row, in file order */
    double *l;     /* [n] the --loss column's value, or NaN */
    int *seed, n, cap;
} plot_group;

/* Splits line at commas in place: up to max fields, their count. */
static int plot_fields(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;
    line[strcspn(line, "\r\n")] = 0;
    while (n < max) {
        f[n++] = p;
        if (!(p = strchr(p, ','))) break;
        *p++ = 0;
    }
    return n;
}

static int plot_col(char **head, int nh, const char *name)
{
    int i;
    for (i = 0; i < nh; i++)
        if (!strcmp(head[i], name)) return i;
    return -1;
}

/* Reads one CSV into the groups; 0 with a message if it cannot. */
static int plot_read(const char *path, const char *xc, const char *yc, const char *by, const char *lc,
                     char *const *where, int nwhere, plot_group *g, int *ng)
{
    char line[4096], hline[4096], *head[PLOT_MAX_COLS], *f[PLOT_MAX_COLS];
    int nh, c[5], wc[8], i, k, nf;
    FILE *fp = fopen(path, "r");
    if (!fp || !fgets(hline, sizeof hline, fp)) {
        fprintf(stderr, "attnlab plot: cannot read %s\n", path);
        if (fp) fclose(fp);
        return 0;
    }
    nh = plot_fields(hline, head, PLOT_MAX_COLS);
    c[0] = plot_col(head, nh, xc); c[1] = plot_col(head, nh, yc); c[2] = plot_col(head, nh, by);
    c[3] = lc ? plot_col(head, nh, lc) : -2; c[4] = plot_col(head, nh, "seed");
    for (k = 0; k < nwhere; k++) {
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)strcspn(where[k], "="), where[k]);
        if ((wc[k] = plot_col(head, nh, key)) < 0) c[0] = -1;
    }
    if (c[0] < 0 || c[1] < 0 || c[2] < 0 || c[3] == -1) {
        fprintf(stderr, "attnlab plot: %s has no column for one of --x %s, --y %s, --by %s%s%s or --where\n", path, xc,
                yc, by, lc ? ", --loss " : "", lc ? lc : "");
        fclose(fp);
        return 0;
    }
    while (fgets(line, sizeof line, fp)) {
        plot_group *q = NULL;
        double x, y, l = NAN;
        nf = plot_fields(line, f, PLOT_MAX_COLS);
        if (nf != nh) continue;
        for (k = 0; k < nwhere && !strcmp(f[wc[k]], where[k] + strcspn(where[k], "=") + 1); k++) {}
        if (k < nwhere || !parse_double(f[c[0]], &x)) continue;
        if (!parse_double(f[c[1]], &y)) y = NAN;
        if (c[3] >= 0 && !parse_double(f[c[3]], &l)) l = NAN;
        for (i = 0; i < *ng && !q; i++)
            if (!strcmp(g[i].name, f[c[2]])) q = &g[i];
        if (!q) {
            if (*ng == PLOT_MAX_GROUPS) continue;
            q = &g[(*ng)++];
            snprintf(q->name, sizeof q->name, "%s", f[c[2]]);
        }
        if (q->n == q->cap) {
            int cap = q->cap ? 2 * q->cap : 256;
            double *nx = (double *)realloc(q->x, sizeof(double) * 3 * (size_t)cap);
            int *ns;
            if (!nx) break;
            memmove(nx + 2 * (size_t)cap, nx + 2 * (size_t)q->cap, sizeof(double) * (size_t)q->n);
            memmove(nx + cap, nx + q->cap, sizeof(double) * (size_t)q->n);
            if (!(ns = (int *)realloc(q->seed, sizeof(int) * (size_t)cap))) { q->x = nx; break; }
            q->x = nx; q->y = nx + cap; q->l = nx + 2 * (size_t)cap; q->seed = ns; q->cap = cap;
        }
        q->x[q->n] = x; q->y[q->n] = y; q->l[q->n] = l;
        q->seed[q->n++] = c[4] >= 0 ? atoi(f[c[4]]) : 0;
    }
    fclose(fp);
    return 1;
}

static int plot_cmp_double(const void *a, const void *b)
{
    double u = *(const double *)a, v = *(const double *)b;
    return u < v ? -1 : u > v;
}

static int cmd_plot(int argc, char **argv)
{
    const char *xc = "step", *yc = NULL, *by = "attention", *lc = NULL, *svg = NULL, *title = NULL, *ylabel = NULL;
    char *csvs = NULL, *where[8], *tok, ttl[256], legend[PLOT_MAX_GROUPS][96];
    plot_group g[PLOT_MAX_GROUPS];
    attn_plot_series s[2 * PLOT_MAX_GROUPS];
    attn_plot p;
    int nwhere = 0, ng = 0, i, k, j, ns = 0, ok = 1, seeds = 0;
    double ymin = 0, ymax = 0;
    memset(g, 0, sizeof g);
    for (i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h") || !v) {
            printf("usage: attnlab plot --csv F[,F2..] --y COL --svg OUT [--x step] [--by attention]\n"
                   "                    [--loss COL] [--where KEY=VALUE]... [--title T] [--ylabel L]\n"
                   "                    [--ymin A --ymax B]\n"
                   "  redraws a figure from the CSVs a run wrote: one curve per value of --by (the ninth on\n"
                   "  dotted, the palette having 8 colours), the mean of --y over the seeds at each --x with\n"
                   "  a band of +-1 sd, and the mean of --loss dashed\n"
                   "  on a right axis; --where keeps the rows whose column KEY equals VALUE (up to 8);\n"
                   "  --ymin, --ymax fix the left axis (points outside are clipped).\n");
            return strcmp(a, "--help") && strcmp(a, "-h");
        }
        if (!strcmp(a, "--csv")) csvs = argv[++i];
        else if (!strcmp(a, "--x")) xc = argv[++i];
        else if (!strcmp(a, "--y")) yc = argv[++i];
        else if (!strcmp(a, "--by")) by = argv[++i];
        else if (!strcmp(a, "--loss")) lc = argv[++i];
        else if (!strcmp(a, "--svg")) svg = argv[++i];
        else if (!strcmp(a, "--title")) title = argv[++i];
        else if (!strcmp(a, "--ylabel")) ylabel = argv[++i];
        else if (!strcmp(a, "--ymin") && parse_double(v, &ymin)) i++;
        else if (!strcmp(a, "--ymax") && parse_double(v, &ymax)) i++;
        else if (!strcmp(a, "--where") && nwhere < 8 && strchr(v, '=')) where[nwhere++] = argv[++i];
        else {
            fprintf(stderr, "attnlab plot: unknown option or bad value %s %s (see attnlab plot --help)\n", a, v);
            return 1;
        }
    }
    if (!csvs || !yc || !svg) {
        fprintf(stderr, "attnlab plot: --csv, --y and --svg are needed (see attnlab plot --help)\n");
        return 1;
    }
    if (!output_ok(svg)) return 1;
    for (tok = strtok(csvs, ","); tok && ok; tok = strtok(NULL, ","))
        ok = plot_read(tok, xc, yc, by, lc, where, nwhere, g, &ng);
    if (ok && ng == 0) fprintf(stderr, "attnlab plot: no rows matched\n"), ok = 0;
    for (k = 0; k < ng && ok; k++) { /* each group: the distinct x values; at each, mean +- sd over its rows */
        plot_group *q = &g[k];
        double *ux = (double *)malloc(sizeof(double) * 6 * (size_t)q->n), *col = (double *)malloc(sizeof(double) * (size_t)q->n);
        int nu = 0, nc, nl, maxc = 0;
        if (!ux || !col) { free(ux); free(col); ok = 0; break; }
        memcpy(ux, q->x, sizeof(double) * (size_t)q->n);
        qsort(ux, (size_t)q->n, sizeof(double), plot_cmp_double);
        for (i = 0; i < q->n; i++)
            if (i == 0 || ux[i] != ux[nu - 1]) ux[nu++] = ux[i];
        for (i = 0; i < nu; i++) {
            double *y = ux + q->n, *lo = y + q->n, *hi = lo + q->n, *l = hi + q->n, sd, lsum = 0;
            for (nc = 0, nl = 0, j = 0; j < q->n; j++) {
                if (q->x[j] != ux[i]) continue;
                if (q->y[j] == q->y[j]) col[nc++] = q->y[j];
                if (q->l[j] == q->l[j]) lsum += q->l[j], nl++;
            }
            y[i] = nc ? mean_sd(col, nc, &sd) : NAN;
            lo[i] = nc > 1 ? y[i] - sd : NAN;
            hi[i] = nc > 1 ? y[i] + sd : NAN;
            l[i] = nl ? lsum / nl : NAN;
            maxc = nc > maxc ? nc : maxc;
        }
        seeds = maxc > seeds ? maxc : seeds;
        snprintf(legend[k], sizeof legend[k], "%.60s (n = %d)", q->name, maxc);
        memset(&s[ns], 0, sizeof s[ns]);
        s[ns].label = legend[k]; s[ns].x = ux; s[ns].y = ux + q->n; s[ns].lo = ux + 2 * q->n; s[ns].hi = ux + 3 * q->n;
        s[ns].n = nu; s[ns].colour = k;
        s[ns].style = k >= 8 ? ATTN_LINE_DOTTED : ATTN_LINE_DEFAULT; /* past the palette's 8 colours */
        ns++;
        if (lc) {
            memset(&s[ns], 0, sizeof s[ns]);
            s[ns].x = ux; s[ns].y = ux + 4 * q->n; s[ns].n = nu; s[ns].colour = k; s[ns].right = 1;
            ns++;
        }
        free(col);
    }
    if (ok) {
        memset(&p, 0, sizeof p);
        snprintf(ttl, sizeof ttl, "%s", title ? title : yc);
        p.title = ttl; p.xlabel = xc; p.ylabel = ylabel ? ylabel : yc; p.ymin = ymin; p.ymax = ymax;
        if (lc) {
            static char y2[80];
            snprintf(y2, sizeof y2, "%s (dashed)", lc);
            p.y2label = y2;
        }
        ok = attn_plot_svg(svg, &p, s, ns) == ATTN_OK;
        if (ok) printf("wrote %s (%d curve(s), up to %d run(s) per point)\n", svg, ng, seeds);
        else fprintf(stderr, "attnlab plot: %s\n", attn_last_error());
    }
    for (i = 0; i < ns; i++)
        if (!s[i].right) free((void *)s[i].x);
    for (k = 0; k < PLOT_MAX_GROUPS; k++) { free(g[k].x); free(g[k].seed); }
    return !ok;
}

/* The commands, on the command line as split_equals leaves it. */
static int attnlab_run(int argc, char **argv)
{
    options o;
    int s2s;
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || (!strcmp(argv[1], "help") && argc == 2)) {
        usage(argc < 2 ? stderr : stdout, 0);
        return argc < 2 ? 1 : 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("attnlab, attn.h %s (%s kernels, %d thread(s))\n", ATTN_VERSION_STRING, attn_simd_name(), attn_get_threads());
        return 0;
    }
    if (!strcmp(argv[1], "help")) { /* attnlab help COMMAND: that command's --help */
        char *h[4];
        h[0] = argv[0]; h[1] = argv[2]; h[2] = (char *)"--help"; h[3] = NULL;
        if (!strcmp(argv[2], "fuzzy") || !strcmp(argv[2], "sraven")) {
            char *t[5] = {argv[0], (char *)"train", (char *)"--task", argv[2], (char *)"--help"};
            return attnlab_run(5, t);
        }
        return attnlab_run(3, h);
    }
    if (hyla_wants(argc, argv)) return hyla_main(argc, argv);
    if (!strcmp(argv[1], "lm") || (argc >= 3 && !strcmp(argv[1], "preset") && (!strcmp(argv[2], "cog-lm") || !strcmp(argv[2], "cog-probes"))))
        return lm_main(argc, argv);
    s2s = !strcmp(argv[1], "seq2seq") || (argc >= 3 && !strcmp(argv[1], "preset") && (!strcmp(argv[2], "seq2seq") || !strcmp(argv[2], "thesis")));
    if (data_parallel && (s2s || (strcmp(argv[1], "train") && strcmp(argv[1], "preset")))) {
        fprintf(stderr, "attnlab: --data-parallel is for train and lm (and their presets)\n");
        return 1;
    }
    if (!strcmp(argv[1], "sample")) return lm_sample(argc, argv);
    if (!strcmp(argv[1], "convert")) return lm_convert(argc, argv);
    if (!strcmp(argv[1], "embed") || !strcmp(argv[1], "search")) return embed_main(argc, argv);
    if (!strcmp(argv[1], "plot")) return cmd_plot(argc, argv);
    if (s2s) return s2s_main(argc, argv);
    if (!strcmp(argv[1], "preset")) return cmd_preset(argc, argv);
    if (!parse_options(argc, argv, &o)) return !help_shown;
    if (data_parallel && !o.update_epoch) {
        fprintf(stderr, "attnlab: --data-parallel shares a batch over the ranks: it needs --update epoch\n");
        return 1;
    }
    if (!strcmp(argv[1], "train")) return cmd_train(&o);
    if (!strcmp(argv[1], "census")) return cmd_census(&o);
    if (!strcmp(argv[1], "eval")) return cmd_eval(&o);
    if (!strcmp(argv[1], "params")) {
        printf("%lu\n", (unsigned long)model_param_count(&o));
        return 0;
    }
    fprintf(stderr, "attnlab: unknown command '%s' (train, preset, eval, census, params; see --help)\n", argv[1]);
    return 1;
}

int main(int argc, char **argv)
{
    char **args;
    int rc;
    mpi_start(&argc, &argv);
    args = split_equals(&argc, argv);
    jobs_key(argc, args);
    rc = attnlab_run(argc, args);
    if (fflush(stdout) != 0 || ferror(stdout)) write_failure("the standard output");
    if (write_failed && rc == 0) rc = 1; /* a file or a report is incomplete */
    if (args != argv) free(args);
    mpi_end();
    return rc;
}
