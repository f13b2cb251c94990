/* One side of bench/ab_step.c: a training step of the attn.h named by AB_ATTN_H (a path in quotes),
   compiled with ATTN_STATIC so that two builds of the library live in one program, each instance
   behind its own AB_SIDE_init and AB_SIDE_step (AB_SIDE: ab_a, ab_b, ab_c or ab_d). */
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

/* The preset with every layer of `kind` (NULL if this build does not know it), on one thread. */
void *AB_CAT(AB_SIDE, _init)(int preset, const char *kind)
{
    attn_kind k = attn_kind_from_name(kind);
    train_step *s;
    if ((int)k < 0) return NULL;
    s = (train_step *)train_step_alloc(sizeof *s);
    train_step_init(s, preset, k, 1);
    return s;
}

/* Seconds of one step. */
double AB_CAT(AB_SIDE, _step)(void *s)
{
    double t0;
    attn_set_threads(1);
    t0 = now();
    train_step_run((train_step *)s);
    return now() - t0;
}

int AB_CAT(AB_SIDE, _tokens)(void *s) { return ((train_step *)s)->B * ((train_step *)s)->c.max_T; }
const char *AB_CAT(AB_SIDE, _version)(void) { return attn_simd_name(); }
