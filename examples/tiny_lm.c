/* tiny_lm: a character-level transformer written with attn.h's building blocks (embeddings, the
   attention layer, layer norm, an MLP, cross-entropy, AdamW, a checkpoint), trained on a text file
   for a minute, then asked for a sample. The example to copy when you build your own model.

     x = E[c] + P[t];  per block: h = x + Attn(LN(x)),  x = h + W2 gelu(W1 LN(h) + b1) + b2;
     logits = Wout LN(x) + bout

   Usage: tiny_lm [--text F] [--seconds S] [--steps N] [--save F] [--prompt TEXT] [--seed S] */
#define ATTN_IMPLEMENTATION
#include "../attn.h"
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { V = 256, D = 64, H = 4, L = 2, T = 64, B = 16, M = 4 * D, N = B * T };

/* One block's tensors, and the model's: views into a parameter block (values or gradients). */
typedef struct {
    attn_float *ln1g, *ln1b, *Wq, *bq, *Wk, *bk, *Wv, *bv, *Wo, *bo, *ln2g, *ln2b, *W1, *b1, *W2, *b2;
} block;
typedef struct { attn_float *E, *P, *lnfg, *lnfb, *Wout, *bout; block b[L]; } weights;
static const char *bnames[16] = {"ln1g", "ln1b", "Wq",   "bq",   "Wk", "bk", "Wv", "bv",
                                 "Wo",   "bo",   "ln2g", "ln2b", "W1", "b1", "W2", "b2"};
static const int bshape[16][2] = {{D, 0}, {D, 0}, {D, D}, {D, 0}, {D, D}, {D, 0}, {D, D}, {D, 0},
                                  {D, D}, {D, 0}, {D, 0}, {D, 0}, {M, D}, {M, 0}, {D, M}, {D, 0}};

static void views(attn_params *p, int grad, weights *w)
{
    attn_tensor *t = grad ? p->grad : p->value;
    int l, k;
    w->E = t[0].data;
    w->P = t[1].data;
    w->lnfg = t[2].data;
    w->lnfb = t[3].data;
    w->Wout = t[4].data;
    w->bout = t[5].data;
    for (l = 0; l < L; l++)
        for (k = 0; k < 16; k++) ((attn_float **)&w->b[l])[k] = t[6 + 16 * l + k].data;
}

/* What the backward pass needs from the forward one, per block, and at the end. */
typedef struct {
    attn_float x[N * D], a[N * D], m1[N], r1[N], h[N * D], n2[N * D], m2[N], r2[N], u[N * M], g[N * M], *att;
    size_t natt; /* att's floats */
} acts;
static acts act[L];
static attn_float xL[N * D], z[N * D], mf[N], rf[N], logits[N * V], probs[N * V], nll[N];

static attn_layer layer_of(const weights *w, int l)
{
    attn_layer A;
    memset(&A, 0, sizeof A);
    A.att.kind = ATTN_SOFTMAX; A.att.H = H; A.att.dk = A.att.dv = D / H; A.att.causal = 1;
    A.C = A.Cout = D;
    A.Wq = w->b[l].Wq; A.bq = w->b[l].bq; A.Wk = w->b[l].Wk; A.bk = w->b[l].bk;
    A.Wv = w->b[l].Wv; A.bv = w->b[l].bv; A.Wo = w->b[l].Wo; A.bo = w->b[l].bo;
    return A;
}

/* logits [nb t, V] of nb windows of t tokens. */
static void forward(const weights *w, const int *tok, int nb, int t, void *work, size_t wb)
{
    int l, n = nb * t;
    attn_embedding_forward(act[0].x, tok, w->E, n, V, D);
    attn_pos_learned_forward(act[0].x, act[0].x, w->P, nb, t, D, T);
    for (l = 0; l < L; l++) {
        acts *c = &act[l];
        attn_float *next = l + 1 < L ? act[l + 1].x : xL;
        attn_layer A = layer_of(w, l);
        attn_layernorm_forward(c->a, c->m1, c->r1, c->x, w->b[l].ln1g, w->b[l].ln1b, n, D, 1e-5f,
                               ATTN_LN_EPS_INSIDE);
        attn_layer_forward(&A, c->h, c->att, c->natt, c->a, NULL, nb, t, t, work, wb);
        attn_axpy((size_t)n * D, 1, c->x, c->h);
        attn_layernorm_forward(c->n2, c->m2, c->r2, c->h, w->b[l].ln2g, w->b[l].ln2b, n, D, 1e-5f,
                               ATTN_LN_EPS_INSIDE);
        attn_linear_forward(c->u, c->n2, w->b[l].W1, w->b[l].b1, n, D, M);
        attn_act_forward(c->g, c->u, (size_t)n * M, ATTN_ACT_GELU_TANH);
        attn_linear_forward(next, c->g, w->b[l].W2, w->b[l].b2, n, M, D);
        attn_axpy((size_t)n * D, 1, c->h, next);
    }
    attn_layernorm_forward(z, mf, rf, xL, w->lnfg, w->lnfb, n, D, 1e-5f, ATTN_LN_EPS_INSIDE);
    attn_linear_forward(logits, z, w->Wout, w->bout, n, D, V);
}

/* Accumulates the gradients (into g) of the mean cross-entropy of the last forward over B windows. */
static void backward(const weights *w, const weights *g, const int *tok, const int *next, void *work,
                     size_t wb)
{
    static attn_float dlog[N * V], dx[N * D], dh[N * D], dn[N * D], dg[N * M], du[N * M], da[N * D];
    int l;
    memset(dlog, 0, sizeof dlog); memset(dx, 0, sizeof dx);
    attn_cross_entropy_backward(dlog, NULL, 1.0f / N, probs, next, N, V);
    memset(dn, 0, sizeof dn);
    attn_linear_backward(dn, g->Wout, g->bout, dlog, z, w->Wout, N, D, V);
    attn_layernorm_backward(dx, g->lnfg, g->lnfb, dn, xL, w->lnfg, mf, rf, N, D, 1e-5f, ATTN_LN_EPS_INSIDE);
    for (l = L - 1; l >= 0; l--) { /* dx holds dL/d(the block's output) */
        acts *c = &act[l];
        attn_layer A = layer_of(w, l);
        attn_layer_grads lg = {0};
        lg.dWq = g->b[l].Wq; lg.dbq = g->b[l].bq; lg.dWk = g->b[l].Wk; lg.dbk = g->b[l].bk;
        lg.dWv = g->b[l].Wv; lg.dbv = g->b[l].bv; lg.dWo = g->b[l].Wo; lg.dbo = g->b[l].bo;
        memcpy(dh, dx, sizeof dh); /* x' = h + f(h) */
        memset(dg, 0, sizeof dg);
        memset(du, 0, sizeof du);
        memset(dn, 0, sizeof dn);
        memset(da, 0, sizeof da);
        attn_linear_backward(dg, g->b[l].W2, g->b[l].b2, dx, c->g, w->b[l].W2, N, M, D);
        attn_act_backward(du, dg, c->u, (size_t)N * M, ATTN_ACT_GELU_TANH);
        attn_linear_backward(dn, g->b[l].W1, g->b[l].b1, du, c->n2, w->b[l].W1, N, D, M);
        attn_layernorm_backward(dh, g->b[l].ln2g, g->b[l].ln2b, dn, c->h, w->b[l].ln2g, c->m2, c->r2, N, D,
                                1e-5f, ATTN_LN_EPS_INSIDE);
        memcpy(dx, dh, sizeof dx); /* h = x + Attn(LN(x)) */
        attn_layer_backward(&A, da, NULL, &lg, dh, c->a, NULL, c->att, c->natt, B, T, T, work, wb);
        attn_layernorm_backward(dx, g->b[l].ln1g, g->b[l].ln1b, da, c->x, w->b[l].ln1g, c->m1, c->r1, N, D,
                                1e-5f, ATTN_LN_EPS_INSIDE);
    }
    attn_embedding_backward(g->E, dx, tok, N, V, D);
    attn_pos_learned_backward(NULL, g->P, dx, B, T, D, T);
}

/* The mean loss of the windows tok -> next under the current parameters. */
static double mean_loss(const weights *w, const int *tok, const int *next, void *work, size_t wb)
{
    double loss = 0;
    int i;
    forward(w, tok, B, T, work, wb);
    attn_cross_entropy_forward(nll, probs, logits, next, N, V);
    for (i = 0; i < N; i++) loss += nll[i] / N;
    return loss;
}

/* Whether v is a number in [lo, hi] (a whole one if whole), into *out. */
static int number(const char *v, double lo, double hi, int whole, double *out)
{
    char *end;
    *out = strtod(v, &end);
    return end != v && !*end && *out >= lo && *out <= hi && (!whole || *out == floor(*out));
}

int main(int argc, char **argv)
{
    const char *text_path = "examples/data/sample.txt", *save = NULL, *prompt = "The ";
    double seconds = 60;
    long steps = -1, s, len = 0, cap = 1 << 20;
    int seed = 1, i, l, tok[N], next[N], gradcheck = 0;
    unsigned char *text = (unsigned char *)malloc((size_t)cap);
    attn_param_desc desc[6 + 16 * L];
    attn_params p;
    weights w, g;
    attn_optim opt;
    attn_rng r;
    attn_layer A;
    void *work;
    size_t wb;
    FILE *f;
    double first = 0, loss = 0, t0 = (double)clock() / CLOCKS_PER_SEC;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        double x = 0;
        int num = v && (!strcmp(a, "--seconds") || !strcmp(a, "--steps") || !strcmp(a, "--seed"));
        if (num && !number(v, !strcmp(a, "--seconds") ? 0 : 1, !strcmp(a, "--seconds") ? 1e7 : 2e9,
                           strcmp(a, "--seconds") != 0, &x)) {
            fprintf(stderr, "tiny_lm: bad value '%s' for %s (see tiny_lm --help)\n", v, a);
            return 1;
        }
        if (v && !strcmp(a, "--text")) text_path = v;
        else if (num && !strcmp(a, "--seconds")) seconds = x;
        else if (num && !strcmp(a, "--steps")) steps = (long)x;
        else if (v && !strcmp(a, "--save")) save = v;
        else if (v && !strcmp(a, "--prompt")) prompt = v;
        else if (num) seed = (int)x;
        else if (!strcmp(a, "--gradcheck")) { gradcheck = 1; continue; }
        else {
            printf(
                "usage: tiny_lm [--text F] [--seconds 60] [--steps N] [--save F] [--prompt TEXT] [--seed 1] "
                "[--gradcheck]\n"
                "  trains a 2-block character transformer on F (default examples/data/sample.txt) for the\n"
                "  given time or steps, prints the loss as it goes, then a sample after the prompt;\n"
                "  --gradcheck compares the backward pass with central differences first\n");
            return strcmp(a, "--help") ? 1 : 0;
        }
        i++;
    }
    if (!text || !(f = fopen(text_path, "rb"))) {
        fprintf(stderr, "tiny_lm: cannot read %s\n", text_path);
        return 1;
    }
    len = (long)fread(text, 1, (size_t)cap, f);
    fclose(f);
    if (len <= T + 1) {
        fprintf(stderr, "tiny_lm: %s is shorter than %d bytes\n", text_path, T + 2);
        return 1;
    }
    /* the parameters: the model's own tensors, then each block's, one block of memory */
    {
        static const char *gn[6] = {"E", "P", "lnfg", "lnfb", "Wout", "bout"};
        static const int gs[6][2] = {{V, D}, {T, D}, {D, 0}, {D, 0}, {V, D}, {V, 0}};
        for (i = 0; i < 6 + 16 * L; i++) {
            const int *sh = i < 6 ? gs[i] : bshape[(i - 6) % 16];
            desc[i].name = i < 6 ? gn[i] : bnames[(i - 6) % 16];
            desc[i].ndim = sh[1] ? 2 : 1;
            desc[i].shape[0] = sh[0];
            desc[i].shape[1] = sh[1];
            desc[i].decay = -1;
            /* tables N(0, 0.02^2), matrices N(0, 1 / fan_in), gains 1, biases 0 */
            desc[i].init = i < 2 ? ATTN_PARAM_NORMAL
                           : sh[1] ? ATTN_PARAM_FAN_NORMAL
                           : strchr(desc[i].name, 'g') ? ATTN_PARAM_CONST : ATTN_PARAM_ZERO;
            desc[i].value = i < 2 ? 0.02 : strchr(desc[i].name, 'g') && !sh[1];
        }
    }
    if (attn_params_init(&p, desc, 6 + 16 * L) != ATTN_OK ||
        attn_optim_adamw(&opt, &p, 0.9, 0.95, 1e-8, 0.1) != ATTN_OK) {
        fprintf(stderr, "tiny_lm: %s\n", attn_last_error());
        return 1;
    }
    views(&p, 0, &w); views(&p, 1, &g);
    attn_rng_seed(&r, (uint64_t)seed, 0);
    attn_params_draw(&p, desc, p.count, &r);
    A = layer_of(&w, 0);
    for (l = 0; l < L; l++)
        act[l].att = (attn_float *)malloc(sizeof(attn_float) * (act[l].natt = attn_layer_cache_floats(&A, B, T, T)));
    work = malloc(wb = attn_layer_work_bytes(&A, B, T, T));
    if (gradcheck) { /* 40 parameters drawn at random: the analytic gradient against central differences */
        double worst = 0, h = sizeof(attn_float) == 8 ? 1e-5 : 1e-2;
        for (i = 0; i < B * T; i++) tok[i] = text[i % (len - 1)], next[i] = text[i % (len - 1) + 1];
        mean_loss(&w, tok, next, work, wb);
        attn_params_zero_grad(&p);
        backward(&w, &g, tok, next, work, wb);
        for (i = 0; i < 40; i++) {
            size_t j = (size_t)attn_rng_int(&r, (uint32_t)p.total);
            attn_float keep = p.data[j];
            double up, down, num;
            p.data[j] = keep + (attn_float)h; up = mean_loss(&w, tok, next, work, wb);
            p.data[j] = keep - (attn_float)h; down = mean_loss(&w, tok, next, work, wb);
            p.data[j] = keep;
            num = (up - down) / (2 * h);
            worst = fmax(worst, fabs(num - p.gdata[j]) /
                                    (1e-4 + fabs(num) + fabs(p.gdata[j]))); /* floor: FD noise */
        }
        printf("gradient check: largest relative difference %.2g over 40 parameters%s\n", worst,
               sizeof(attn_float) == 4 ? " (float32: build with -DATTN_DOUBLE for a tight check)" : "");
        if (worst > (sizeof(attn_float) == 8 ? 1e-5 : 5e-2)) return 1;
    }
    for (s = 0; steps < 0 ? (double)clock() / CLOCKS_PER_SEC - t0 < seconds : s < steps; s++) {
        for (i = 0; i < B; i++) { /* B random windows; each position predicts the next byte */
            long at = (long)attn_rng_int(&r, (uint32_t)(len - T - 1));
            for (l = 0; l < T; l++) tok[i * T + l] = text[at + l], next[i * T + l] = text[at + l + 1];
        }
        forward(&w, tok, B, T, work, wb);
        attn_cross_entropy_forward(nll, probs, logits, next, N, V);
        for (loss = 0, i = 0; i < N; i++) loss += nll[i] / N;
        if (s == 0) first = loss;
        attn_params_zero_grad(&p);
        backward(&w, &g, tok, next, work, wb);
        attn_clip_grad_norm(&p, 1.0f);
        attn_optim_step(&opt, &p, 3e-3);
        if (s % 100 == 0) printf("step %5ld  loss %.3f nats per byte\n", s, loss);
    }
    printf("step %5ld  loss %.3f nats per byte (from %.3f)\n", s, loss, first);
    if (save && attn_checkpoint_save(save, "tiny_lm", NULL, 0, NULL, 0, &p) != ATTN_OK)
        fprintf(stderr, "tiny_lm: %s\n", attn_last_error());
    {   /* a sample: the last T bytes in, one byte out, 200 times */
        int ctx[T], n = 0, c;
        printf("\n%s", prompt);
        for (i = 0; prompt[i]; i++)
            ctx[n < T ? n++ : (memmove(ctx, ctx + 1, sizeof(int) * (T - 1)), T - 1)] =
                (unsigned char)prompt[i];
        for (i = 0; i < 200 && n > 0; i++) {
            forward(&w, ctx, 1, n, work, wb);
            c = attn_sample(logits + (size_t)(n - 1) * V, V, 0.8, 0, 0.95, &r);
            putchar(isprint(c) || c == '\n' ? c : '?'); /* an untrained model draws any byte */
            if (n == T) memmove(ctx, ctx + 1, sizeof(int) * (T - 1)), n--;
            ctx[n++] = c;
        }
        printf("\n");
    }
    for (l = 0; l < L; l++) free(act[l].att);
    free(work); free(text);
    attn_optim_free(&opt);
    attn_params_free(&p);
    return loss < first ? 0 : 1;
}
