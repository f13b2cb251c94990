/* attnlab's encoder-decoder part (the thesis' transformer, Conti 2024, Sec. 1.2, and its
   attention-structure analysis, Sec. 3): post-LN encoder-decoders trained on digit strings to reverse (or
   sort), greedy decoding against beam search on held-out strings, and the thesis' Tables 16 and
   17 (the band + sparse-error distances of each encoder head's attention matrix).

     attnlab seq2seq --task reverse --attn softmax --layers 1 --dmodel 64 --heads 8 --steps 2000
                     --seeds 2 --beam 4 --alpha 0.6 [--analysis] [--heatmap PREFIX]
     attnlab preset seq2seq [--quick]      attnlab preset thesis [--quick]

   One model per (attention kind, seed), the runs in parallel over the cores; Adam (no weight
   decay) with linear warmup and cosine decay, cross-entropy on the target tokens; every
   --eval-every steps the teacher-forced token accuracy on held-out strings and the greedy
   exact-match rate on a part of them; at the end, exact match of greedy decoding and of beam
   search on --test held-out strings. Held-out strings are never trained on (attn_digits_batch). */
#include "../attn.h"
#include "attnlab.h"
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S2S_MAX_KINDS 8
#define S2S_EVAL_EXACT 100 /* held-out strings decoded greedily at each evaluation */

typedef struct {
    const char *csv, *svg, *heatmap, *save, *load, *analysis_csv;
    int task, min_len, max_len, layers, dmodel, heads, mlp, steps, batch, warmup, seeds, eval_every, test, beam, threads, nkind, analysis;
    int analysis_len, candidates, sources;
    double lr, dropout, alpha;
    attn_kind kind[S2S_MAX_KINDS];
} s2s_opts;

typedef struct {
    int kind, seed, nevals, failed;
    int *step;
    double *loss, *tok_acc, *exact;
    double greedy, beam, final_tok;
    double *table; /* the analysis: [source][table 16 / 17][head][|A - 0|, band, S1, S2, S3, min] */
    run_progress prog;      /* steps done and the latest exact-match rate */
} s2s_run;

static progress_set s2s_prog;

static void s2s_usage(FILE *f)
{
    fprintf(f,
            "usage: attnlab seq2seq [options]   (the thesis' encoder-decoder on digit strings; Conti 2024)\n"
            "       attnlab preset seq2seq|thesis [--quick] [options]\n"
            "  --task reverse|sort   what the target does to the source's digits             [reverse]\n"
            "  --min-len N, --max-len N  source lengths in digits (an EOS follows)           [1, 15]\n"
            "  --attn K1,K2,..       attention kinds (softmax, ea, cog, ...; not diff, hyla_plus) [softmax]\n"
            "  --layers L            encoder and decoder layers each                         [1]\n"
            "  --dmodel D, --heads H, --mlp M  width, heads (D / H each), FFN width          [64, 8, 4D]\n"
            "  --dropout P           on the embeddings and every sublayer's output           [0.1]\n"
            "  --steps S, --batch B  Adam steps of B pairs                                   [2000, 64]\n"
            "  --lr X, --warmup W    peak rate; linear warmup, then cosine to 10%%            [1e-3, 100]\n"
            "  --seeds S             seeds per kind                                          [2]\n"
            "  --eval-every E        evaluate every E steps (token accuracy, greedy exact)   [250]\n"
            "  --test N              held-out strings of the final evaluation                [500]\n"
            "  --beam K, --alpha A   beam width and GNMT length penalty ((5+len)/6)^A          [4, 0.6]\n"
            "  --threads T           parallel runs (0: all cores)                            [0]\n"
            "  --csv F, --svg F      the curves\n"
            "  --save F              a checkpoint of seed 0 of the first kind\n"
            "  --load F              evaluate (and analyse) that checkpoint instead of training; the\n"
            "                        options must describe its model\n"
            "  --analysis            the thesis' Tables 16 and 17 on every model's encoder self-attention\n"
            "                        (layer 0) for held-out sources: per head |A - 0|, the distance to\n"
            "                        the w-band, and the least |A - X| over random Sigma_1/2/3 candidates;\n"
            "                        the tables of seed 0's first source, a summary over all\n"
            "  --analysis-len N      the sources' digits (n = N + 1 with EOS)                [15: n = 16]\n"
            "  --sources N           held-out sources per model (the first is always the same) [1]\n"
            "  --analysis-csv F      every (kind, seed, source, head, table)'s distances\n"
            "  --candidates C        candidates per family                                   [30]\n"
            "  --heatmap PREFIX      seed 0's maps for that source, heads side by side:\n"
            "                        PREFIX-KIND-enc.svg (encoder) and PREFIX-KIND-cross.svg\n");
}

static int s2s_parse(int argc, char **argv, s2s_opts *o)
{
    int i;
    memset(o, 0, sizeof *o);
    o->min_len = 1; o->max_len = 15; o->layers = 1; o->dmodel = 64; o->heads = 8; o->steps = 2000; o->batch = 64; o->warmup = 100;
    o->seeds = 2; o->eval_every = 250; o->test = 500; o->beam = 4; o->alpha = 0.6; o->lr = 1e-3; o->dropout = 0.1; o->nkind = 1;
    o->kind[0] = ATTN_SOFTMAX; o->analysis_len = 15; o->candidates = 30; o->sources = 1;
    for (i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { s2s_usage(stdout); help_shown = 1; return 0; }
        if (!strcmp(a, "--analysis")) { o->analysis = 1; continue; }
        if (!v) { fprintf(stderr, "attnlab seq2seq: %s needs a value (or is unknown; see --help)\n", a); return 0; }
        if (!strcmp(a, "--task")) { ok = !strcmp(v, "reverse") || !strcmp(v, "sort"); o->task = !strcmp(v, "sort"); }
        else if (!strcmp(a, "--min-len")) ok = parse_int(v, 1, &o->min_len);
        else if (!strcmp(a, "--max-len")) ok = parse_int(v, 1, &o->max_len) && o->max_len <= 254;
        else if (!strcmp(a, "--layers")) ok = parse_int(v, 1, &o->layers) && o->layers <= ATTN_MAX_LAYERS;
        else if (!strcmp(a, "--dmodel")) ok = parse_int(v, 2, &o->dmodel) && o->dmodel <= MAX_WIDTH;
        else if (!strcmp(a, "--heads")) ok = parse_int(v, 1, &o->heads) && o->heads <= 64;
        else if (!strcmp(a, "--mlp")) ok = parse_int(v, 1, &o->mlp) && o->mlp <= 16 * MAX_WIDTH;
        else if (!strcmp(a, "--dropout")) ok = parse_double(v, &o->dropout) && o->dropout >= 0 && o->dropout < 1;
        else if (!strcmp(a, "--steps")) ok = parse_int(v, 1, &o->steps);
        else if (!strcmp(a, "--batch")) ok = parse_int(v, 1, &o->batch) && o->batch <= MAX_WIDTH;
        else if (!strcmp(a, "--lr")) ok = parse_double(v, &o->lr) && o->lr > 0;
        else if (!strcmp(a, "--warmup")) ok = parse_int(v, 0, &o->warmup);
        else if (!strcmp(a, "--seeds")) ok = parse_int(v, 1, &o->seeds) && o->seeds <= MAX_SEEDS;
        else if (!strcmp(a, "--eval-every")) ok = parse_int(v, 1, &o->eval_every);
        else if (!strcmp(a, "--test")) ok = parse_int(v, 1, &o->test);
        else if (!strcmp(a, "--beam")) ok = parse_int(v, 1, &o->beam);
        else if (!strcmp(a, "--alpha")) ok = parse_double(v, &o->alpha) && o->alpha >= 0;
        else if (!strcmp(a, "--threads")) ok = parse_int(v, 0, &o->threads) && o->threads <= MAX_THREADS;
        else if (!strcmp(a, "--analysis-len")) ok = parse_int(v, 1, &o->analysis_len);
        else if (!strcmp(a, "--candidates")) ok = parse_int(v, 1, &o->candidates);
        else if (!strcmp(a, "--sources")) ok = parse_int(v, 1, &o->sources) && o->sources <= 1000;
        else if (!strcmp(a, "--analysis-csv")) o->analysis_csv = v;
        else if (!strcmp(a, "--csv")) o->csv = v;
        else if (!strcmp(a, "--svg")) o->svg = v;
        else if (!strcmp(a, "--heatmap")) o->heatmap = v;
        else if (!strcmp(a, "--save")) o->save = v;
        else if (!strcmp(a, "--load")) o->load = v;
        else if (!strcmp(a, "--attn")) {
            char buf[256], *tok, *save = NULL;
            snprintf(buf, sizeof buf, "%s", v);
            o->nkind = 0;
            for (tok = strtok_r(buf, ",", &save); tok && ok; tok = strtok_r(NULL, ",", &save)) {
                int k = attn_kind_from_name(tok);
                ok = k >= 0 && k != ATTN_DIFFERENTIAL && k != ATTN_HYLA_PLUS && o->nkind < S2S_MAX_KINDS;
                if (ok) o->kind[o->nkind++] = (attn_kind)k;
            }
            ok = ok && o->nkind > 0;
        } else { fprintf(stderr, "attnlab seq2seq: unknown option %s (see attnlab seq2seq --help)\n", a); return 0; }
        if (!ok) { fprintf(stderr, "attnlab seq2seq: bad value '%s' for %s (see attnlab seq2seq --help)\n", v, a); return 0; }
        i++;
    }
    if (!o->mlp) o->mlp = 4 * o->dmodel;
    if (o->load) o->seeds = o->nkind = 1; /* one model, evaluated (its kind must be --attn's first) */
    if (o->dmodel % o->heads) { fprintf(stderr, "attnlab seq2seq: --dmodel %d is not a multiple of --heads %d\n", o->dmodel, o->heads); return 0; }
    if (o->min_len > o->max_len) { fprintf(stderr, "attnlab seq2seq: --min-len %d exceeds --max-len %d\n", o->min_len, o->max_len); return 0; }
    if ((o->analysis || o->heatmap) && o->analysis_len > o->max_len) {
        fprintf(stderr, "attnlab seq2seq: --analysis-len %d exceeds --max-len %d: the analysed matrix would be %d x %d, the model reads at most %d tokens\n",
                o->analysis_len, o->max_len, o->analysis_len + 1, o->analysis_len + 1, o->max_len + 1);
        return 0;
    }
    if (!o->analysis && (o->analysis_csv || o->sources > 1)) {
        fprintf(stderr, "attnlab seq2seq: --sources and --analysis-csv need --analysis\n");
        return 0;
    }
    if (o->analysis && o->analysis_len + 1 < 11) {
        fprintf(stderr, "attnlab seq2seq: --analysis-len %d: Table 17's band of width 10 needs n = len + 1 >= 11\n", o->analysis_len);
        return 0;
    }
    if (o->warmup >= o->steps) o->warmup = o->steps / 10;
    return 1;
}

static attn_seq2seq_config s2s_config(const s2s_opts *o, attn_kind kind)
{
    attn_seq2seq_config c;
    memset(&c, 0, sizeof c);
    c.src_vocab = c.tgt_vocab = ATTN_DIGITS_VOCAB; c.pad = ATTN_DIGITS_PAD;
    c.d = o->dmodel; c.heads = o->heads; c.dk = c.dv = o->dmodel / o->heads; c.mlp = o->mlp;
    c.enc_layers = c.dec_layers = o->layers; c.max_src = c.max_tgt = o->max_len + 1;
    c.kind = kind; c.eps = (attn_float)1e-6; c.ln_eps = ATTN_LN_EPS_OUTSIDE; c.dropout = (attn_float)o->dropout; c.init = ATTN_INIT_UNIFORM;
    return c;
}

typedef struct {
    int *src, *tin, *tout, *dec;
    attn_float *logits, *dlogits, *probs, *loss, *cache;
    void *work;
    size_t cf, wb; /* the cache's floats, the workspace's bytes */
} s2s_buf;

/* Mean cross-entropy of a batch of B pairs and the share of target tokens whose argmax is right
   (teacher forcing, *acc); with grad, dL/dlogits of the mean into b->dlogits. */
static double s2s_loss(attn_seq2seq *m, s2s_buf *b, int B, int T, int grad, double *acc)
{
    int i, v, n = 0, hit = 0, V = ATTN_DIGITS_VOCAB;
    double l = 0;
    if (attn_seq2seq_forward(m, b->logits, b->cache, b->cf, b->src, b->tin, B, T, T, b->work, b->wb) != ATTN_OK) return NAN;
    attn_cross_entropy_forward(b->loss, b->probs, b->logits, b->tout, B * T, V);
    for (i = 0; i < B * T; i++) {
        const attn_float *z = b->logits + (size_t)i * V;
        int arg = 0;
        if (b->tout[i] < 0) continue;
        for (v = 1; v < V; v++) arg = z[v] > z[arg] ? v : arg;
        hit += arg == b->tout[i];
        l += b->loss[i];
        n++;
    }
    if (acc) *acc = (double)hit / n;
    if (grad) {
        for (i = 0; i < B * T; i++) b->loss[i] = (attn_float)(b->tout[i] < 0 ? 0 : 1.0 / n);
        memset(b->dlogits, 0, sizeof(attn_float) * (size_t)B * T * V);
        attn_cross_entropy_backward(b->dlogits, b->loss, 0, b->probs, b->tout, B * T, V);
    }
    return l / n;
}

/* Exact match of beam search (beam 1: greedy) over n held-out pairs in b->src / b->tout. */
static double s2s_exact(const attn_seq2seq *m, s2s_buf *b, int n, int T, int beam, double alpha)
{
    if (attn_seq2seq_decode(m, b->dec, NULL, b->src, n, T, ATTN_DIGITS_BOS, ATTN_DIGITS_EOS, T, beam, (attn_float)alpha) != ATTN_OK) return NAN;
    return attn_digits_exact(b->dec, T, b->tout, T, n);
}

/* The thesis' tables for one trained model: the encoder's layer-0 self-attention on o->sources
   held-out sources of analysis_len digits (n = len + 1), per head; seed 0's heatmaps of the first
   source when asked. The sources and the candidates are the same for every model. */
static void s2s_analyse(const s2s_opts *o, const attn_seq2seq *m, s2s_buf *b, s2s_run *res)
{
    int n = o->analysis_len + 1, H = o->heads, h, t, i, j, s;
    attn_float *w = (attn_float *)malloc(sizeof(attn_float) * (size_t)H * (o->max_len + 1) * (o->max_len + 1));
    attn_float *tile = (attn_float *)malloc(sizeof(attn_float) * (size_t)(n + 1) * (n + 1) * (H + 4)); /* the grid */
    attn_rng r, cand;
    attn_seq2seq fm = *m;
    fm.training = 0;
    if (!w || !tile) { fprintf(stderr, "\nattnlab seq2seq: analysis: out of memory\n"); res->failed = 1; }
    attn_rng_seed(&r, 2026, 7);
    for (s = 0; w && tile && !res->failed && s < (o->analysis ? o->sources : 1); s++)
        for (t = 0; t < 2; t++) {
            int sub = t ? 2 * o->layers + 1 : 0; /* the encoder's first self-attention, the first cross-attention */
            const char *which = t ? "cross" : "enc";
            int heat = o->heatmap && res->seed == 0 && s == 0;
            if (t && !heat) break;
            if ((!t && (attn_digits_batch((attn_digits_task)o->task, o->analysis_len, o->analysis_len, 1, 1, b->src, b->tin, b->tout, &r) != ATTN_OK ||
                        attn_seq2seq_forward(&fm, b->logits, b->cache, b->cf, b->src, b->tin, 1, n, n, b->work, b->wb) != ATTN_OK)) ||
                attn_seq2seq_weights(&fm, w, b->cache, b->cf, 1, n, n, sub, b->work, b->wb) != ATTN_OK) {
                fprintf(stderr, "\nattnlab seq2seq: analysis: %s\n", attn_last_error());
                res->failed = 1;
                break;
            }
            for (h = 0; !t && o->analysis && h < H; h++) { /* Table 16: w 3, num-pos 2; Table 17: w 10, num-pos 1 */
                const attn_float *A = w + (size_t)h * n * n;
                attn_float *P = tile;
                double mn[3], me[3];
                int k;
                for (k = 0; k < 2; k++) {
                    int bw = k ? 10 : 3, np = k ? 1 : 2;
                    double *d = res->table + (((size_t)s * 2 + k) * H + h) * 6;
                    attn_rng_seed(&cand, 16 + k, (uint64_t)h);
                    d[0] = attn_l1_distance(A, NULL, n);
                    d[1] = attn_band_project(P, A, n, bw);
                    if (attn_sigma_distances(mn, me, A, n, bw, np, o->candidates, 0.2, 0.05, 0.05, &cand) != ATTN_OK) {
                        fprintf(stderr, "\nattnlab seq2seq: %s\n", attn_last_error());
                        res->failed = 1;
                        continue;
                    }
                    d[2] = mn[0]; d[3] = mn[1]; d[4] = mn[2];
                    d[5] = fmin(mn[0], fmin(mn[1], mn[2]));
                }
            }
            if (heat) { /* the heads in a grid, 4 to a row, one empty row and column between them */
                char path[1024], title[200], (*lab)[4];
                int gc = H < 4 ? H : 4, gr = (H + gc - 1) / gc, R = gr * (n + 1) - 1, C = gc * (n + 1) - 1, neg;
                const char **rl = (const char **)malloc(sizeof(char *) * (size_t)(R + C)), **cl = rl + R;
                if (!rl || !(lab = (char (*)[4])malloc(8 * (size_t)n))) { free(rl); fprintf(stderr, "\nattnlab seq2seq: out of memory\n"); break; }
                for (i = 0; i < R * C; i++) tile[i] = 0;
                for (h = 0; h < H; h++)
                    for (i = 0; i < n; i++)
                        for (j = 0; j < n; j++)
                            tile[(size_t)((h / gc) * (n + 1) + i) * C + (h % gc) * (n + 1) + j] = w[((size_t)h * n + i) * n + j];
                for (i = 0; i < n; i++) /* the tokens: digits, BOS "<", EOS ">" */
                    for (j = 0; j < 2; j++) {
                        int tk = j == 0 && t ? b->tin[i] : b->src[i];
                        snprintf(lab[j * n + i], sizeof lab[0], "%c", tk >= ATTN_DIGITS_0 ? '0' + tk - ATTN_DIGITS_0 : tk == ATTN_DIGITS_BOS ? '<' : '>');
                    }
                for (i = 0; i < R; i++) rl[i] = i % (n + 1) < n ? lab[i % (n + 1)] : "";
                for (i = 0; i < C; i++) cl[i] = i % (n + 1) < n ? lab[n + i % (n + 1)] : "";
                snprintf(path, sizeof path, "%s-%s-%s.svg", o->heatmap, attn_kind_get(o->kind[res->kind])->name, which);
                snprintf(title, sizeof title, "%s: %s of heads 1-%d (rows of %d, left to right), one held-out %d-digit source", attn_kind_get(o->kind[res->kind])->name,
                         t ? "cross-attention (rows: target, columns: source)" : "encoder self-attention", H, gc, o->analysis_len);
                for (neg = 0, i = 0; i < R * C; i++) neg |= tile[i] < 0; /* Cog's negative weights: a signed scale */
                if (attn_heatmap_svg(path, title, tile, R, C, rl, cl, neg ? ATTN_HEAT_SIGNED : ATTN_HEAT_LINEAR) != ATTN_OK) {
                    fprintf(stderr, "\nattnlab seq2seq: %s\n", attn_last_error());
                    res->failed = 1;
                }
                free(rl); free(lab);
            }
        }
    free(w); free(tile);
}

static csv_stream s2s_csv; /* the CSV, a line per evaluation as it happens */

/* A run's analysis: sources x 2 tables x heads x 6 distances. */
static size_t s2s_table_bytes(const s2s_opts *o)
{
    return sizeof(double) * (size_t)o->sources * 2 * o->heads * 6;
}

#define S2S_CSV_HEADER "kind,seed,step,train_loss,token_accuracy,greedy_exact"
/* Evaluation q of a run as a CSV line (the training loss is empty before the first step). */
static void s2s_row(char *line, size_t n, const s2s_opts *o, const s2s_run *r, int q)
{
    char loss[32] = "";
    if (r->loss[q] == r->loss[q]) snprintf(loss, sizeof loss, "%.6f", r->loss[q]);
    snprintf(line, n, "%s,%d,%d,%s,%.6f,%.6f", attn_kind_get(o->kind[r->kind])->name, r->seed, r->step[q], loss, r->tok_acc[q], r->exact[q]);
}

static void s2s_train_one(const s2s_opts *o, s2s_run *res)
{
    attn_seq2seq_config cf = s2s_config(o, o->kind[res->kind]);
    attn_seq2seq m;
    attn_schedule sched;
    attn_rng init, data, test;
    s2s_buf b;
    attn_float *mom = NULL, *vel = NULL;
    int T = o->max_len + 1, nb = o->batch > o->test ? o->batch : o->test, step, V = ATTN_DIGITS_VOCAB;
    if (nb < S2S_EVAL_EXACT) nb = S2S_EVAL_EXACT;
    double lsum = 0;
    char line[256];
    int lcount = 0, loaded = o->load && res->kind == 0 && res->seed == 0;
    memset(&b, 0, sizeof b);
    attn_rng_seed(&init, (uint64_t)res->seed, 1);
    attn_rng_seed(&data, (uint64_t)res->seed, 2);
    if ((loaded ? attn_seq2seq_load(&m, o->load) : attn_seq2seq_init(&m, &cf, &init)) != ATTN_OK) {
        fprintf(stderr, "\nattnlab seq2seq: %s\n", attn_last_error());
        res->failed = 1;
        return;
    }
    if (loaded && memcmp(&m.cfg, &cf, sizeof cf)) {
        fprintf(stderr, "\nattnlab seq2seq: %s holds another configuration than the options ask for (layers, widths, kind, lengths)\n", o->load);
        res->failed = 1;
        attn_seq2seq_free(&m);
        return;
    }
    b.src = (int *)malloc(sizeof(int) * (size_t)nb * T); b.tin = (int *)malloc(sizeof(int) * (size_t)nb * T);
    b.tout = (int *)malloc(sizeof(int) * (size_t)nb * T); b.dec = (int *)malloc(sizeof(int) * (size_t)nb * T);
    b.logits = (attn_float *)malloc(sizeof(attn_float) * (size_t)nb * T * V); b.dlogits = (attn_float *)malloc(sizeof(attn_float) * (size_t)nb * T * V);
    b.probs = (attn_float *)malloc(sizeof(attn_float) * (size_t)nb * T * V); b.loss = (attn_float *)malloc(sizeof(attn_float) * (size_t)nb * T);
    b.cache = (attn_float *)malloc(sizeof(attn_float) * (b.cf = attn_seq2seq_cache_floats(&m, nb, T, T)));
    b.wb = attn_seq2seq_work_bytes(&m, nb, T, T);
    b.work = malloc(b.wb);
    mom = (attn_float *)calloc(m.p.total, sizeof(attn_float));
    vel = (attn_float *)calloc(m.p.total, sizeof(attn_float));
    if (!b.src || !b.tin || !b.tout || !b.dec || !b.logits || !b.dlogits || !b.probs || !b.loss || !b.cache || !b.work || !mom || !vel) {
        fprintf(stderr, "\nattnlab seq2seq: out of memory\n");
        res->failed = 1;
    }
    attn_schedule_warmup_cosine(&sched, 0, o->lr, o->warmup, o->steps, 0.1 * o->lr);
    for (step = 0; step <= o->steps && !res->failed && !stop_requested; step++) {
        if (step % o->eval_every == 0 || step == o->steps || loaded) { /* the same held-out strings every time */
            int k = res->nevals++;
            attn_rng_seed(&test, 1000 + (uint64_t)res->seed, 3);
            m.training = 0;
            attn_digits_batch((attn_digits_task)o->task, o->min_len, o->max_len, 1, S2S_EVAL_EXACT, b.src, b.tin, b.tout, &test);
            s2s_loss(&m, &b, S2S_EVAL_EXACT, T, 0, &res->tok_acc[k]);
            res->exact[k] = s2s_exact(&m, &b, S2S_EVAL_EXACT, T, 1, 0);
            res->step[k] = step;
            res->loss[k] = lcount ? lsum / lcount : NAN;
            res->prog.latest = res->exact[k];
            res->prog.evaluated = 1;
            lsum = 0; lcount = 0;
            s2s_row(line, sizeof line, o, res, k);
            csv_row(&s2s_csv, line);
        }
        if (step == o->steps || loaded) break;
        m.training = 1; m.seed = (uint64_t)res->seed << 32 | (uint64_t)step;
        attn_digits_batch((attn_digits_task)o->task, o->min_len, o->max_len, 0, o->batch, b.src, b.tin, b.tout, &data);
        lsum += s2s_loss(&m, &b, o->batch, T, 1, NULL);
        lcount++;
        attn_params_zero_grad(&m.p);
        if (attn_seq2seq_backward(&m, b.dlogits, b.cache, b.cf, b.src, b.tin, o->batch, T, T, b.work, b.wb) != ATTN_OK) {
            fprintf(stderr, "\nattnlab seq2seq: %s\n", attn_last_error());
            res->failed = 1;
            break;
        }
        attn_clip_grad_norm(&m.p, 1.0);
        attn_adamw_step(&m.p, mom, vel, step + 1, (attn_float)attn_schedule_lr(&sched, step), (attn_float)0.9, (attn_float)0.98, (attn_float)1e-9, 0);
        res->prog.done = step + 1;
        if (step % 8 == 0) progress_report(&s2s_prog, 0);
    }
    if (!res->failed) { /* the final evaluation: o->test held-out strings, teacher-forced, greedy, beam */
        m.training = 0;
        attn_rng_seed(&test, 5000 + (uint64_t)res->seed, 4);
        attn_digits_batch((attn_digits_task)o->task, o->min_len, o->max_len, 1, o->test, b.src, b.tin, b.tout, &test);
        s2s_loss(&m, &b, o->test, T, 0, &res->final_tok);
        res->greedy = s2s_exact(&m, &b, o->test, T, 1, 0);
        res->beam = s2s_exact(&m, &b, o->test, T, o->beam, o->alpha);
        if (o->analysis || (o->heatmap && res->seed == 0)) s2s_analyse(o, &m, &b, res);
        if (o->save && res->kind == 0 && res->seed == 0 && attn_seq2seq_save(&m, o->save) != ATTN_OK) {
            fprintf(stderr, "\nattnlab seq2seq: %s\n", attn_last_error());
            res->failed = 1;
        }
    }
    free(b.src); free(b.tin); free(b.tout); free(b.dec); free(b.logits); free(b.dlogits); free(b.probs); free(b.loss); free(b.cache); free(b.work);
    free(mom); free(vel);
    attn_seq2seq_free(&m);
}

/* Run j of the (kind, seed) grid, for run_jobs. */
struct s2s_jobs {
    const s2s_opts *o; s2s_run *res;
    int nev; /* the evaluations a run has room for */
};
static void s2s_job(void *ctx, int j)
{
    struct s2s_jobs *t = (struct s2s_jobs *)ctx;
    s2s_train_one(t->o, &t->res[j]);
}
static int s2s_xfer(void *ctx, int j, jobbuf *b)
{
    struct s2s_jobs *t = (struct s2s_jobs *)ctx;
    s2s_run *r = &t->res[j];
    jb_count(b, &r->nevals, t->nev);
    jb_io(b, r->step, sizeof(int) * (size_t)r->nevals);
    jb_io(b, r->loss, sizeof(double) * (size_t)r->nevals);
    jb_io(b, r->tok_acc, sizeof(double) * (size_t)r->nevals);
    jb_io(b, r->exact, sizeof(double) * (size_t)r->nevals);
    jb_io(b, &r->greedy, sizeof r->greedy);
    jb_io(b, &r->beam, sizeof r->beam);
    jb_io(b, &r->final_tok, sizeof r->final_tok);
    if (r->table) jb_io(b, r->table, s2s_table_bytes(t->o));
    jb_io(b, &r->failed, sizeof r->failed);
    return !r->failed;
}
static int s2s_line(const void *ctx, int j, int k, char *line, size_t n)
{
    const struct s2s_jobs *t = (const struct s2s_jobs *)ctx;
    if (k >= t->res[j].nevals) return 0;
    s2s_row(line, n, t->o, &t->res[j], k);
    return 1;
}

/* The analysis over every model, source and head, per kind: mean Min_distance (over models of each
   model's mean) with w 3 and w 10, their difference, and how many heads come closer with w 10 and
   than the zero matrix; with --analysis-csv every distance. 0 if the file could not be written. */
static int s2s_summary(const s2s_opts *o, const s2s_run *res)
{
    int k, s, src, h, q, H = o->heads, S = o->sources, closer, below[2];
    double *m3 = (double *)malloc(sizeof(double) * 3 * (size_t)o->seeds), *m10 = m3 + o->seeds, *dd = m10 + o->seeds, a, sa, b, sb, c, sc;
    csv_stream f;
    char line[256];
    if (!m3) { fprintf(stderr, "attnlab seq2seq: out of memory\n"); return 0; }
    printf("\nover %d model(s) x %d source(s) x %d heads, Min_distance per model (the mean over sources and heads),\n"
           "mean +- sd over the models; the zero matrix is at |A - 0| (%d for rows that sum to 1):\n", o->seeds, S, H, o->analysis_len + 1);
    printf("%-10s  %-17s  %-17s  %-18s  %-16s  %s\n", "kind", "w 3", "w 10", "w 10 - w 3", "closer with w 10", "closer than zero (w 3, w 10)");
    for (k = 0; k < o->nkind; k++) {
        closer = below[0] = below[1] = 0;
        for (s = 0; s < o->seeds; s++) {
            const double *t = res[k * o->seeds + s].table;
            m3[s] = m10[s] = 0;
            for (src = 0; src < S; src++)
                for (h = 0; h < H; h++) {
                    const double *d3 = t + ((size_t)src * 2 * H + h) * 6, *d10 = d3 + (size_t)H * 6;
                    m3[s] += d3[5] / (S * H); m10[s] += d10[5] / (S * H);
                    closer += d10[5] < d3[5]; below[0] += d3[5] < d3[0]; below[1] += d10[5] < d10[0];
                }
            dd[s] = m10[s] - m3[s];
        }
        a = mean_sd(m3, o->seeds, &sa); b = mean_sd(m10, o->seeds, &sb); c = mean_sd(dd, o->seeds, &sc);
        printf("%-10s  %7.3f +- %-6.3f  %7.3f +- %-6.3f  %+7.3f +- %-6.3f  %6d / %-7d  %d, %d\n", attn_kind_get(o->kind[k])->name, a, sa, b, sb, c, sc,
               closer, o->seeds * S * H, below[0], below[1]);
    }
    free(m3);
    if (!o->analysis_csv) return 1;
    if (!csv_begin(&f, o->analysis_csv, "kind,seed,source,head,w,num_pos,zero,band,sigma1,sigma2,sigma3,min_distance")) return 0;
    for (k = 0; k < o->nkind * o->seeds; k++)
        for (src = 0; src < S; src++)
            for (q = 0; q < 2; q++)
                for (h = 0; h < H; h++) {
                    const double *d = res[k].table + (((size_t)src * 2 + q) * H + h) * 6;
                    snprintf(line, sizeof line, "%s,%d,%d,%d,%d,%d,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f", attn_kind_get(o->kind[res[k].kind])->name, res[k].seed,
                             src, h + 1, q ? 10 : 3, q ? 1 : 2, d[0], d[1], d[2], d[3], d[4], d[5]);
                    csv_row(&f, line);
                }
    return csv_end(&f);
}

/* The tables and the files; 0 if a file could not be written. */
static int s2s_report(const s2s_opts *o, const s2s_run *res, int njobs)
{
    double *col = (double *)malloc(sizeof(double) * (size_t)o->seeds), m, sd;
    char beam[64];
    int k, s, j, q, h, ok = 1;
    printf("\nheld-out %s strings (%d of length %d .. %d), mean +- sd over %d seed(s)\n", o->task ? "sort" : "reverse", o->test, o->min_len, o->max_len,
           o->seeds);
    snprintf(beam, sizeof beam, "exact, beam %d (alpha %.2f)", o->beam, o->alpha);
    printf("%-10s  %-30s  %-30s  %s\n", "kind", "token acc. (teacher-forced)", "exact match, greedy", beam);
    for (k = 0; k < o->nkind; k++) {
        printf("%-10s", attn_kind_get(o->kind[k])->name);
        for (q = 0; q < 3; q++) {
            for (s = 0; s < o->seeds; s++) {
                const s2s_run *r = &res[k * o->seeds + s];
                col[s] = q == 0 ? r->final_tok : q == 1 ? r->greedy : r->beam;
            }
            m = mean_sd(col, o->seeds, &sd);
            printf("  %.4f +- %.4f%*s", m, sd, q < 2 ? 14 : 0, "");
        }
        printf("\n");
    }
    for (k = 0; o->analysis && k < o->nkind; k++)
        for (q = 0; q < 2; q++) {
            const s2s_run *r = &res[k * o->seeds];
            int n = o->analysis_len + 1;
            printf("\n%s, Table %d (w = %d, num-pos = %d), encoder self-attention of layer 0, seed 0, first source, n = %d, %d candidates per family:\n",
                   attn_kind_get(o->kind[k])->name, 16 + q, q ? 10 : 3, q ? 1 : 2, n, o->candidates);
            printf("%-5s %9s %9s %9s %9s %9s %13s %11s\n", "head", "|A - 0|", "band", "Sigma1", "Sigma2", "Sigma3", "Min_distance", "Mean Error");
            for (h = 0; h < o->heads && h < 64; h++) {
                const double *t = r->table + ((size_t)q * o->heads + h) * 6;
                printf("%-5d %9.4f %9.4f %9.4f %9.4f %9.4f %13.4f %11.6f\n", h + 1, t[0], t[1], t[2], t[3], t[4], t[5], t[5] / ((double)n * n));
            }
        }
    if (o->analysis && !s2s_summary(o, res)) ok = 0;
    if (o->csv) {
        struct s2s_jobs t;
        t.o = o; t.res = (s2s_run *)res;
        ok = csv_write(o->csv, S2S_CSV_HEADER, njobs, s2s_line, &t);
    }
    if (o->svg) { /* mean greedy exact match and token accuracy per kind (+-1 sd), training loss dashed */
        attn_plot p;
        attn_plot_series sr[3 * S2S_MAX_KINDS];
        static char labels[3 * S2S_MAX_KINDS][48];
        char title[160];
        int n = res[0].nevals, ns = 0;
        double *buf;
        for (j = 0; j < njobs; j++) n = res[j].nevals < n ? res[j].nevals : n;
        buf = (double *)malloc(sizeof(double) * (size_t)n * (1 + 9 * o->nkind));
        for (q = 0; q < n; q++) buf[q] = res[0].step[q];
        for (k = 0; k < o->nkind; k++)
            for (j = 0; j < 3; j++) {
                double *mv = buf + (size_t)n * (1 + 9 * k + 3 * j), *lo = mv + n, *hi = lo + n;
                for (q = 0; q < n; q++) {
                    for (s = 0; s < o->seeds; s++) {
                        const s2s_run *r = &res[k * o->seeds + s];
                        col[s] = j == 0 ? r->exact[q] : j == 1 ? r->tok_acc[q] : r->loss[q];
                    }
                    mv[q] = mean_sd(col, o->seeds, &sd);
                    lo[q] = mv[q] - sd; hi[q] = mv[q] + sd;
                }
                snprintf(labels[ns], sizeof labels[ns], "%s %s", attn_kind_get(o->kind[k])->name, j == 0 ? "exact (greedy)" : j == 1 ? "token acc." : "loss");
                memset(&sr[ns], 0, sizeof sr[ns]);
                sr[ns].label = labels[ns]; sr[ns].x = buf; sr[ns].y = mv; sr[ns].n = n; sr[ns].colour = 2 * k + (j == 1); sr[ns].right = j == 2;
                if (j == 0) { sr[ns].lo = lo; sr[ns].hi = hi; }
                ns++;
            }
        snprintf(title, sizeof title, "%s %d-%d digits, %d+%d layers, d %d, %d heads, %d seed%s", o->task ? "sorting" : "reversing", o->min_len,
                 o->max_len, o->layers, o->layers, o->dmodel, o->heads, o->seeds, seeds_note(o->seeds));
        memset(&p, 0, sizeof p);
        p.title = title; p.xlabel = "step"; p.ylabel = "held-out accuracy"; p.y2label = "training loss (dashed)"; p.ymin = 0; p.ymax = 1;
        if (attn_plot_svg(o->svg, &p, sr, ns) == ATTN_OK) printf("wrote %s\n", o->svg);
        else fprintf(stderr, "attnlab seq2seq: %s\n", attn_last_error()), ok = 0;
        free(buf);
    }
    free(col);
    return ok;
}

/* The estimate before the first run (limits_ok): a run's bytes (parameters, gradients, two moments,
   the caches, workspace and logits of its largest batch) and one pair's timed forward pass. */
static int s2s_limits(const s2s_opts *o, attn_seq2seq *m)
{
    int T = o->max_len + 1, nb = o->batch > o->test ? o->batch : o->test, *src, *tin;
    size_t wb = attn_seq2seq_work_bytes(m, 1, T, T), cf = attn_seq2seq_cache_floats(m, 1, T, T);
    double bytes = (double)sizeof(attn_float) * (4.0 * m->p.total + (double)attn_seq2seq_cache_floats(m, nb, T, T) +
                                                 3.0 * nb * T * ATTN_DIGITS_VOCAB) +
                   (double)attn_seq2seq_work_bytes(m, nb, T, T), secs;
    attn_float *cache = (attn_float *)malloc(sizeof(attn_float) * cf);
    attn_float *logits = (attn_float *)malloc(sizeof(attn_float) * T * ATTN_DIGITS_VOCAB);
    void *work = malloc(wb);
    struct timespec t0, t1;
    src = (int *)calloc((size_t)T, sizeof(int));
    tin = (int *)calloc((size_t)T, sizeof(int));
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (cache && logits && work && src && tin) attn_seq2seq_forward(m, logits, cache, cf, src, tin, 1, T, T, work, wb);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    free(cache); free(logits); free(work); free(src); free(tin);
    return limits_ok("attnlab seq2seq", bytes, o->nkind * o->seeds, o->threads, secs, (double)o->steps * o->batch,
                     ((double)o->steps / o->eval_every + 1) * (S2S_EVAL_EXACT * (T + 1.0) + o->batch) +
                         (double)o->test * (1 + T * (1.0 + o->beam)));
}

/* attnlab preset seq2seq|thesis [--quick] [options]: the preset's options, then the user's. */
static const struct {
    const char *name, *claim, *args, *quick;
} s2s_presets[] = {
    {"seq2seq", "the thesis' encoder-decoder (1 + 1 post-LN layers, 8 heads) reversing digit strings, greedy vs beam",
     "--task reverse --attn softmax --layers 1 --dmodel 128 --heads 8 --steps 4000 --seeds 2 --test 1000 --csv results/seq2seq.csv "
     "--svg results/seq2seq.svg",
     "--task reverse --attn softmax --layers 1 --dmodel 64 --heads 8 --steps 600 --seeds 1 --test 200 --eval-every 100 "
     "--csv results/seq2seq.csv --svg results/seq2seq.svg"},
    {"thesis", "the thesis' Tables 16 and 17 on a trained encoder-decoder's 8 heads (n = 16)",
     "--task reverse --attn softmax --layers 1 --dmodel 128 --heads 8 --steps 4000 --seeds 1 --test 500 --analysis --heatmap results/thesis "
     "--csv results/thesis.csv --svg results/thesis.svg",
     "--task reverse --attn softmax --layers 1 --dmodel 64 --heads 8 --steps 600 --seeds 1 --test 100 --eval-every 100 --analysis "
     "--heatmap results/thesis --csv results/thesis.csv --svg results/thesis.svg"},
};

int s2s_main(int argc, char **argv)
{
    s2s_opts o;
    s2s_run *res;
    attn_seq2seq_config cf;
    int njobs, j, nev, ok, failed = 0, lost, rc;
    char heat[1024];
    if (!strcmp(argv[1], "preset")) {
        static char buf[512]; /* the options point into it */
        char *args[256];
        int p = strcmp(argv[2], "seq2seq") != 0, n, quick; /* main() sends only these two */
        n = preset_argv(argc, argv, "seq2seq", s2s_presets[p].args, s2s_presets[p].quick, buf, sizeof buf, args, 256, &quick);
        printf("preset %s%s: %s\n", argv[2], quick ? " (quick)" : "", s2s_presets[p].claim);
        ok = s2s_parse(n, args, &o);
    } else ok = s2s_parse(argc, argv, &o);
    if (!ok) return !help_shown;
    for (j = 0; j < o.nkind; j++) {
        attn_seq2seq trial;
        attn_rng r;
        cf = s2s_config(&o, o.kind[j]);
        attn_rng_seed(&r, 0, 0);
        if (dry_run ? !attn_seq2seq_param_count(&cf) : attn_seq2seq_init(&trial, &cf, &r) != ATTN_OK) { fprintf(stderr, "attnlab seq2seq: the model cannot be built: %s\n", attn_last_error()); return 1; }
        if (!dry_run) {
            int ok = s2s_limits(&o, &trial);
            attn_seq2seq_free(&trial);
            if (!ok) return 1;
        }
    }
    if (o.heatmap) snprintf(heat, sizeof heat, "%s-%s-enc.svg", o.heatmap, attn_kind_get(o.kind[0])->name);
    if (!output_ok(o.csv) || !output_ok(o.svg) || !output_ok(o.save) || !output_ok(o.heatmap ? heat : NULL) || !output_ok(o.analysis_csv)) return 1;
    if (dry_run) { printf("dry run: %d run(s) would start; the options, the models and the outputs are fine\n", o.nkind * o.seeds); return 0; }
    cf = s2s_config(&o, o.kind[0]);
    njobs = o.nkind * o.seeds;
    nev = o.steps / o.eval_every + 2;
    res = (s2s_run *)calloc((size_t)njobs, sizeof(s2s_run));
    for (j = 0; res && j < njobs; j++) {
        res[j].kind = j / o.seeds; res[j].seed = j % o.seeds;
        res[j].step = (int *)calloc((size_t)nev, sizeof(int));
        res[j].loss = (double *)calloc((size_t)nev, sizeof(double));
        res[j].tok_acc = (double *)calloc((size_t)nev, sizeof(double));
        res[j].exact = (double *)calloc((size_t)nev, sizeof(double));
        if (o.analysis) res[j].table = (double *)calloc(1, s2s_table_bytes(&o));
        if (!res[j].step || !res[j].loss || !res[j].tok_acc || !res[j].exact || (o.analysis && !res[j].table)) { fprintf(stderr, "attnlab seq2seq: out of memory\n"); return 1; }
    }
    if (!res) { fprintf(stderr, "attnlab seq2seq: out of memory\n"); return 1; }
    printf("attnlab seq2seq: %s %d-%d digits, %d + %d post-LN layers, d %d, %d heads, FFN %d, %lu parameters, %d kind(s) x %d seeds, %d steps of %d pairs\n",
           o.task ? "sorting" : "reversing", o.min_len, o.max_len, o.layers, o.layers, o.dmodel, o.heads, o.mlp, (unsigned long)attn_seq2seq_param_count(&cf),
           o.nkind, o.seeds, o.load ? 0 : o.steps, o.batch);
    progress_begin(&s2s_prog, res, sizeof *res, offsetof(s2s_run, prog), njobs, (long)njobs * o.steps, "steps", "mean latest greedy exact match");
    catch_stop();
    {
        struct s2s_jobs jobs = {&o, res, nev};
        job_set js = {s2s_job, s2s_xfer, s2s_line, &s2s_csv, o.csv, S2S_CSV_HEADER, &jobs};
        lost = run_jobs(njobs, o.threads, &js, &s2s_prog);
    }
    csv_end(&s2s_csv);
    for (j = 0; j < njobs; j++) failed += res[j].failed;
    if (runs_end(lost, failed, njobs, "attnlab seq2seq", &rc) == 2 && !s2s_report(&o, res, njobs)) rc = 1;
    for (j = 0; j < njobs; j++) { free(res[j].step); free(res[j].loss); free(res[j].tok_acc); free(res[j].exact); free(res[j].table); }
    free(res);
    return rc;
}
