/* api_doc: docs/api.md's reference half, generated from attn.h's declarations.

     cc tools/api_doc.c -o build/api_doc && build/api_doc attn.h docs/api.md           (rewrite)
     build/api_doc --check attn.h docs/api.md       (exit 1 when docs/api.md is not what it would be)

   docs/api.md keeps everything above its marker line as it is (the hand-written overview); below
   it go an index of every public function (ATTNDEF) with the section that declares it, then each
   section of the header's declarations: its comments and declarations as they are, chunk by chunk
   (a chunk ends at a blank line), without the preprocessor lines that only build the header. A
   public function that the index would miss (an ATTNDEF line the parser cannot name) fails. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MARKER "<!-- Generated below from attn.h by tools/api_doc.c (make api-doc): do not edit by hand. -->"
#define MAX_FN 1024

typedef struct {
    char *buf;
    size_t len, cap;
} text;

static void put(text *t, const char *s)
{
    size_t n = strlen(s);
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        if (!(t->buf = (char *)realloc(t->buf, t->cap))) { fprintf(stderr, "api_doc: out of memory\n"); exit(2); }
    }
    memcpy(t->buf + t->len, s, n + 1);
    t->len += n;
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *b;
    long len;
    if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
        fprintf(stderr, "api_doc: cannot read %s\n", path);
        exit(2);
    }
    if (!(b = (char *)malloc((size_t)len + 1)) || fread(b, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "api_doc: cannot read %s\n", path);
        exit(2);
    }
    fclose(f);
    b[len] = 0;
    *n = (size_t)len;
    return b;
}

/* The anchor GitHub gives a heading: lower case, spaces to '-', other punctuation dropped. */
static void anchor(const char *title, char *out, size_t size)
{
    size_t k = 0;
    for (; *title && k + 2 < size; title++)
        if (isalnum((unsigned char)*title) || *title == '_' || *title == '-') out[k++] = (char)tolower((unsigned char)*title);
        else if (*title == ' ') out[k++] = '-';
    out[k] = 0;
}

/* Whether a preprocessor line is there only to build the header (not what a user reads): kept are
   the public macros (ATTN_..., not ATTN__ or ATTNDEF) and the conditionals on ATTN_DOUBLE, with
   their #else and #endif (keep [depth]: whether the open conditional at each depth is kept). */
static int builder_line(const char *l, int *depth, int *keep)
{
    int kept;
    while (*l == ' ') l++;
    if (*l != '#') return 0;
    if (!strncmp(l, "#if", 3)) {
        kept = strstr(l, "ATTN_DOUBLE") != NULL;
        if (*depth < 31) keep[(*depth)++] = kept;
        return !kept;
    }
    if (!strncmp(l, "#el", 3)) return *depth > 0 ? !keep[*depth - 1] : 1;
    if (!strncmp(l, "#endif", 6)) return *depth > 0 ? !keep[--*depth] : 1;
    return !(strncmp(l, "#define ATTN_", 13) == 0 && strncmp(l, "#define ATTN__", 14) != 0);
}

int main(int argc, char **argv)
{
    int check = argc == 4 && !strcmp(argv[1], "--check"), a = check ? 2 : 1, nfn = 0, i, sec = -1, shown = -1;
    int in_comment = 0, started = 0, depth = 0, keep[32];
    size_t hn, dn, head;
    char *h, *doc, *line, *next, *m, sections[32][96], fn[MAX_FN][64];
    int fnsec[MAX_FN];
    text body = {0}, chunk = {0}, out = {0};
    if (argc != 3 + check) {
        fprintf(stderr, "usage: api_doc [--check] attn.h docs/api.md\n");
        return 2;
    }
    h = slurp(argv[a], &hn);
    doc = slurp(argv[a + 1], &dn);
    if (!(m = strstr(doc, MARKER))) {
        fprintf(stderr, "api_doc: %s has no marker line:\n%s\n", argv[a + 1], MARKER);
        return 2;
    }
    head = (size_t)(m - doc);
    put(&chunk, "");
    for (line = h; line && *line; line = next) { /* the declarations: up to the IMPLEMENTATION banner */
        char *nl = strchr(line, '\n'), title[96];
        int n, banner, end;
        next = nl ? nl + 1 : NULL;
        if (nl) *nl = 0;
        end = strstr(line, "IMPLEMENTATION  ") && !strncmp(line, "/*  ", 4);
        banner = !strncmp(line, "/* ====", 7) || (sscanf(line, "/* %d. %95[^\n]", &n, title) == 2 && !in_comment);
        if (end || banner || *line == 0) { /* a chunk ends: shown as one code block */
            if (chunk.len) {
                if (shown != sec) {
                    put(&body, "## ");
                    put(&body, sections[sec]);
                    put(&body, "\n\n");
                    shown = sec;
                }
                put(&body, "```c\n");
                put(&body, chunk.buf);
                put(&body, "```\n\n");
            }
            chunk.len = 0;
            chunk.buf[0] = 0;
        }
        if (end) break;
        if (banner && strncmp(line, "/* ====", 7) && sec < 31) { /* a section's title */
            char *e = title + strlen(title);
            while (e > title && (e[-1] == ' ' || e[-1] == '/' || e[-1] == '*')) *--e = 0;
            snprintf(sections[++sec], sizeof sections[0], "%d. %s", n, title);
            started = 1;
        }
        if (banner || !started || *line == 0) continue;
        if (!in_comment && strncmp(line, "ATTNDEF ", 8) == 0) { /* a public function: its name */
            char *p = strchr(line, '('), *q;
            for (q = p; p && q > line && (isalnum((unsigned char)q[-1]) || q[-1] == '_'); q--) continue;
            if (!p || nfn == MAX_FN || p - q <= 0 || p - q >= 64) {
                fprintf(stderr, "api_doc: cannot name the function of: %s\n", line);
                return 1;
            }
            memcpy(fn[nfn], q, (size_t)(p - q));
            fn[nfn][p - q] = 0;
            fnsec[nfn++] = sec;
        }
        if (!in_comment && strstr(line, "/*")) in_comment = !strstr(strstr(line, "/*"), "*/");
        else if (in_comment && strstr(line, "*/")) in_comment = 0;
        if (builder_line(line, &depth, keep) || !strcmp(line, "extern \"C\" {") || !strcmp(line, "}")) continue;
        put(&chunk, line);
        put(&chunk, "\n");
    }
    put(&out, MARKER);
    put(&out, "\n\n## Every function\n\n"); /* the index: each public function and its section */
    for (i = 0; i < nfn; i++) {
        char an[128], item[256];
        anchor(sections[fnsec[i]], an, sizeof an);
        snprintf(item, sizeof item, "%s[`%s`](#%s)", i ? ", " : "", fn[i], an);
        put(&out, item);
    }
    put(&out, "\n\n");
    put(&out, body.buf);
    if (check) {
        if (dn != head + out.len || memcmp(doc + head, out.buf, out.len)) {
            fprintf(stderr, "api_doc: %s is not what attn.h's declarations give (%d public functions): run make api-doc\n",
                    argv[a + 1], nfn);
            return 1;
        }
        printf("api_doc: %s documents all %d public functions as attn.h declares them\n", argv[a + 1], nfn);
        return 0;
    }
    {
        FILE *f = fopen(argv[a + 1], "wb");
        if (!f || fwrite(doc, 1, head, f) != head || fputs(out.buf, f) < 0 || fclose(f)) {
            fprintf(stderr, "api_doc: cannot write %s\n", argv[a + 1]);
            return 2;
        }
    }
    printf("api_doc: wrote %s (%d public functions)\n", argv[a + 1], nfn);
    return 0;
}
