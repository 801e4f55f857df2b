/* replay.c: a main() for the fuzz targets where libFuzzer is missing (any
 * compiler): each argument, a file or a folder of files, is read and
 * given to LLVMFuzzerTestOneInput once, as `TARGET -runs=0 FILES` does
 * under libFuzzer. Arguments starting with '-' are ignored (libFuzzer's
 * options). Prints one line per input; exit 1 when one cannot be read. */
#include "tests/fuzz/fuzz.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int cs_replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    int bad = ferror(f) || !buf;
    fclose(f);
    if (bad) {
        free(buf);
        fprintf(stderr, "replay: cannot read %s\n", path);
        return -1;
    }
    printf("replay: %s (%zu bytes)\n", path, n);
    fflush(stdout);
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

static int cs_replay_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cs_replay_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot read %s\n", dir);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(names, cap * sizeof *names);
            if (!nn)
                break;
            names = nn;
        }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cs_replay_name_cmp);
    int rc = 0;
    char p[PATH_MAX + 256];
    for (size_t i = 0; i < n; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        struct stat sb;
        if (stat(p, &sb) == 0 && S_ISREG(sb.st_mode) && cs_replay_file(p) != 0)
            rc = -1;
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        if (argv[i][0] == '-')
            continue;
        if (stat(argv[i], &sb) != 0) {
            fprintf(stderr, "replay: cannot read %s\n", argv[i]);
            rc = 1;
        } else if (S_ISDIR(sb.st_mode) ? cs_replay_dir(argv[i]) : cs_replay_file(argv[i]))
            rc = 1;
    }
    return rc;
}
