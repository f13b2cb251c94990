/* fuzz.h - what the fuzz targets share. Each target defines LLVMFuzzerTestOneInput; built with
   clang -fsanitize=fuzzer it is a libFuzzer target (make fuzz), built with -DFUZZ_REPLAY by any C
   compiler it is a program that runs the target once on each file named on its command line, which
   is how make test replays the committed corpus (the seeds and every input a fuzzing run found). */
#ifndef ATTN_FUZZ_H
#define ATTN_FUZZ_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An input's bytes, consumed one at a time by fuzz_next (0 past the end). */
typedef struct {
    const uint8_t *p;
    size_t n, at;
} fuzz_bytes;
static inline unsigned fuzz_next(fuzz_bytes *b) { return b->at < b->n ? b->p[b->at++] : 0; }

#ifdef FUZZ_REPLAY
/* Every file is read before the first run (a target may change directory). */
int main(int argc, char **argv)
{
    unsigned char **buf = (unsigned char **)calloc((size_t)argc, sizeof *buf);
    long *len = (long *)calloc((size_t)argc, sizeof *len);
    int i;
    for (i = 1; buf && len && i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f || fseek(f, 0, SEEK_END) != 0 || (len[i] = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
            !(buf[i] = (unsigned char *)malloc(len[i] > 0 ? (size_t)len[i] : 1)) || fread(buf[i], 1, (size_t)len[i], f) != (size_t)len[i]) {
            fprintf(stderr, "cannot read %s\n", argv[i]);
            return 1;
        }
        fclose(f);
    }
    for (i = 1; i < argc; i++) {
        LLVMFuzzerTestOneInput(buf[i], (size_t)len[i]);
        free(buf[i]);
    }
    fprintf(stderr, "replayed %d inputs\n", argc - 1);
    free(buf);
    free(len);
    return 0;
}
#endif
#endif
