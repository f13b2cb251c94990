/* Fuzz target: attnlab's option parsing and checks. The input is a command line, one argument per
   line (at most 32); attnlab runs it with --dry-run, so it parses, builds each model once, checks
   the outputs and stops before training. Arguments that name absolute paths become /nonexistent and
   the target works in a directory of its own (give libFuzzer absolute paths), so a fuzzing run
   reads and writes nothing else. */
#undef main /* the build renames attnlab's main, not the replay program's */
#include "fuzz.h"
#include <string.h>
#include <unistd.h>

int attnlab_main(int argc, char **argv); /* examples/attnlab.c built with -Dmain=attnlab_main */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int in_dir = 0;
    char buf[2048], *argv[40], *p, *nl;
    int argc = 0;
    if (!in_dir) {
        char dir[] = "/tmp/attn-fuzz-options-XXXXXX";
        if (!mkdtemp(dir) || chdir(dir) != 0 || !freopen("/dev/null", "w", stdout)) abort();
        in_dir = 1;
    }
    if (size >= sizeof buf) size = sizeof buf - 1;
    memcpy(buf, data, size);
    buf[size] = 0;
    argv[argc++] = (char *)"attnlab";
    for (p = buf; p && *p && argc < 33; p = nl) {
        if ((nl = strchr(p, '\n')) != NULL) *nl++ = 0;
        if (strlen(p) != strcspn(p, "\r")) continue;
        argv[argc++] = p[0] == '/' || strstr(p, "..") ? (char *)"/nonexistent" : p;
    }
    argv[argc++] = (char *)"--dry-run";
    argv[argc] = NULL;
    if (argc < 3) return 0;
    fflush(stdout);
    attnlab_main(argc, argv);
    return 0;
}
