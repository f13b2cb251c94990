/* One side of bench/ab_step.c: a training step of the attn.h named by AB_ATTN_H (a path in quotes),
   compiled with ATTN_STATIC so that two builds of the library live in one program, each instance
   behind its own AB_SIDE_init and AB_SIDE_step (AB_SIDE: ab_a, ab_b, ab_c or ab_d). Preset 3 is the
   attention alone: forward + backward of one SRAVEN chunk's attention layer (14 sequences, 16 heads
   of 4, T 36, not causal, a random bias [H, T, T] with its gradient, dropout 0.1). */
#define ATTN_STATIC
#define ATTN_IMPLEMENTATION
#include AB_ATTN_H
#include "bench.h"
#include "train_step.h"

#define AB_CAT2(a, b) a##b
#define AB_CAT(a, b) AB_CAT2(a, b)

void *AB_CAT(AB_SIDE, _init)(int preset, const char *kind);
double AB_CAT(AB_SIDE, _step)(void *s);
int AB_CAT(AB_SIDE, _tokens)(void *s);
const char *AB_CAT(AB_SIDE, _version)(void);

typedef struct { /* preset 3: the attention's operands, gradients and workspace */
    attn_attention_desc d;
    attn_attention_grads g;
    attn_float *Q, *K, *V, *O, *dO, *st;
    void *work;
    size_t wb;
} ab_attention;

typedef struct {
    train_step *step; /* presets 0-2 */
    ab_attention *att; /* preset 3 */
} ab_state;

static ab_attention *AB_CAT(AB_SIDE, _attention)(attn_kind kind)
{
    ab_attention *a = (ab_attention *)train_step_alloc(sizeof *a);
    size_t n, nb, ns, i;
    attn_rng r;
    memset(a, 0, sizeof *a);
    a->d.kind = kind; a->d.B = 14; a->d.H = 16; a->d.Tq = a->d.Tk = 36; a->d.dk = a->d.dv = 4;
    a->d.dropout = (attn_float)0.1; a->d.dropout_seed = 7;
    n = (size_t)a->d.B * a->d.H * a->d.Tq * a->d.dk;
    nb = (size_t)a->d.H * a->d.Tq * a->d.Tk;
    ns = attn_attention_stats_floats(&a->d);
    a->Q = (attn_float *)train_step_alloc(sizeof(attn_float) * (8 * n + 2 * nb + ns));
    a->K = a->Q + n; a->V = a->K + n; a->O = a->V + n; a->dO = a->O + n;
    a->g.dQ = a->dO + n; a->g.dK = a->g.dQ + n; a->g.dV = a->g.dK + n; /* dQ, dK, dV, dbias: one block */
    a->g.dbias = a->g.dV + n;
    a->d.bias = a->g.dbias + nb;
    a->st = (attn_float *)a->d.bias + nb;
    attn_rng_seed(&r, 11, 0);
    for (i = 0; i < 5 * n; i++) /* Q, K, V, O (overwritten), dO */
        a->Q[i] = (attn_float)attn_rng_normal(&r, 0, 1);
    for (i = 0; i < nb; i++) ((attn_float *)a->d.bias)[i] = (attn_float)attn_rng_normal(&r, 0, 0.5);
    a->wb = attn_attention_workspace(&a->d);
    a->work = train_step_alloc(a->wb);
    return a;
}

/* The preset with every layer of `kind` (NULL if this build does not know it), on one thread. */
void *AB_CAT(AB_SIDE, _init)(int preset, const char *kind)
{
    attn_kind k = attn_kind_from_name(kind);
    ab_state *s;
    if ((int)k < 0) return NULL;
    s = (ab_state *)train_step_alloc(sizeof *s);
    s->step = NULL;
    s->att = NULL;
    if (preset == 3) s->att = AB_CAT(AB_SIDE, _attention)(k);
    else {
        s->step = (train_step *)train_step_alloc(sizeof *s->step);
        train_step_init(s->step, preset, k, 1);
    }
    return s;
}

/* Seconds of one step (preset 3: one forward and one backward call). */
double AB_CAT(AB_SIDE, _step)(void *p)
{
    ab_state *s = (ab_state *)p;
    double t0;
    attn_set_threads(1);
    t0 = now();
    if (s->step) train_step_run(s->step);
    else {
        ab_attention *a = s->att;
        size_t n = (size_t)a->d.B * a->d.H * a->d.Tq * a->d.dk;
        memset(a->g.dQ, 0, sizeof(attn_float) * (3 * n + (size_t)a->d.H * a->d.Tq * a->d.Tk));
        attn_status st = attn_attention_forward(&a->d, a->O, a->st, NULL, a->Q, a->K, a->V, a->work, a->wb);
        if (st == ATTN_OK)
            st = attn_attention_backward(&a->d, &a->g, a->dO, a->Q, a->K, a->V, a->O, a->st, a->work, a->wb);
        if (st != ATTN_OK) {
            fprintf(stderr, "ab_step: %s\n", attn_last_error());
            exit(1);
        }
    }
    return now() - t0;
}

int AB_CAT(AB_SIDE, _tokens)(void *p)
{
    ab_state *s = (ab_state *)p;
    return s->step ? s->step->B * s->step->c.max_T : s->att->d.B * s->att->d.Tq;
}
const char *AB_CAT(AB_SIDE, _version)(void) { return attn_simd_name(); }
