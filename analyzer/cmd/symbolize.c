/* symbolize.c: name the frames of call sites at analysis time, with
 * binutils' addr2line, one process per object file (started without a
 * shell, a few at once, each distinct address asked once). Never in the
 * hot path. */
#include "config.h"
#include "analyzer/cmd/cli.h"
#include "common/vec.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct cs_fr {
    int rank, level;
    int64_t callsite;
    uint64_t offset;
    char *module;
} cs_fr;

typedef struct cs_frvec {
    cs_fr *a;
    size_t n, cap;
} cs_frvec;

static int cs_collect(const cs_frame_ref *f, void *arg)
{
    cs_frvec *v = arg;
    if (CS_VEC_RESERVE(v->a, v->cap, v->n + 1) != 0)
        return -1;
    cs_fr *x = &v->a[v->n++];
    x->rank = f->rank;
    x->callsite = f->callsite;
    x->level = f->level;
    x->offset = f->offset;
    x->module = f->module ? strdup(f->module) : NULL;
    return 0;
}

/* One addr2line process: the frames [i, j) of one module, its output. */
typedef struct cs_a2l {
    pid_t pid;
    FILE *out;
    size_t i, j;
} cs_a2l;

/* Start addr2line on the module of frames [i, j) (sorted by offset): the
 * distinct addresses go in through a temporary file, no shell between.
 * Returns 0, or -1 when it cannot start (no addr2line: ENOENT in errno). */
static int cs_a2l_start(cs_a2l *p, const cs_fr *a, size_t i, size_t j)
{
    char tmpl[] = "/tmp/collscope-a2l.XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0)
        return -1;
    unlink(tmpl); /* ours alone; gone when the last descriptor closes */
    FILE *in = fdopen(fd, "w+");
    if (!in) {
        close(fd);
        return -1;
    }
    for (size_t k = i; k < j; k++)
        if (k == i || a[k].offset != a[k - 1].offset)
            /* A return address points after the call: look up the call. */
            fprintf(in, "0x%llx\n", (unsigned long long)(a[k].offset ? a[k].offset - 1 : 0));
    if (fflush(in) != 0 || fseek(in, 0, SEEK_SET) != 0) {
        fclose(in);
        return -1;
    }
    int pfd[2];
    if (pipe(pfd) != 0) {
        fclose(in);
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fileno(in), 0);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclose(&fa, pfd[0]);
    char *argv[] = { "addr2line", "-C", "-f", "-e", a[i].module, NULL };
    extern char **environ;
    int e = posix_spawnp(&p->pid, "addr2line", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    fclose(in);
    close(pfd[1]);
    if (e != 0) {
        close(pfd[0]);
        errno = e;
        return -1;
    }
    p->out = fdopen(pfd[0], "r");
    if (!p->out) {
        close(pfd[0]);
        waitpid(p->pid, NULL, 0);
        return -1;
    }
    p->i = i;
    p->j = j;
    return 0;
}

/* One answer of addr2line: a distinct address's function, file, line. */
typedef struct cs_a2l_ans {
    size_t k; /* its first frame */
    int line;
    char *func, *file;
} cs_a2l_ans;

/* The stem of an nvcc host file's name, "tmpxft_HEX_HEX-N_STEM.cudafe1.cpp"
 * or "tmpxft_HEX_HEX-N_STEM.compute_NN.cudafe1.cpp" (the file cudafe1
 * makes of STEM.cu; the host compiler's CU): its length and start in
 * *stem, or 0 when the file is no such name. */
static size_t cs_nvcc_stem(const char *file, const char **stem)
{
    const char *b = strrchr(file, '/');
    b = b ? b + 1 : file;
    if (strncmp(b, "tmpxft_", 7) != 0)
        return 0;
    const char *p = b + 7;
    size_t n = strspn(p, "0123456789abcdef");
    if (!n || p[n] != '_')
        return 0;
    p += n + 1;
    n = strspn(p, "0123456789abcdef");
    if (!n || p[n] != '-')
        return 0;
    p += n + 1;
    n = strspn(p, "0123456789");
    if (!n || p[n] != '_')
        return 0;
    p += n + 1;
    size_t l = strlen(p);
    const char *tail = ".cudafe1.cpp";
    if (l <= strlen(tail) || strcmp(p + l - strlen(tail), tail) != 0)
        return 0;
    l -= strlen(tail);
    const char *c = p + l; /* ".compute_NN" before it, if any */
    while (c > p && c[-1] >= '0' && c[-1] <= '9')
        c--;
    if (c - p >= 9 && c < p + l && strncmp(c - 9, ".compute_", 9) == 0)
        l = (size_t)(c - 9 - p);
    *stem = p;
    return l;
}

/* binutils' addr2line (2.40, DWARF 5) names the CU's own file, nvcc's
 * tmpxft_..._STEM.cudafe1.cpp, for the host lines of STEM.cu that the
 * line table holds under its default file entry; the line is STEM.cu's
 * (the line table has no row of the generated file itself: cudafe1
 * writes every host line of STEM.cu under a "# line" directive naming
 * it). The file is STEM.cu as the module's other answers name it: the
 * one file they give whose name is STEM plus one extension; none or
 * several, and the answer stays as addr2line gave it. */
static void cs_nvcc_source(cs_a2l_ans *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *stem;
        size_t l = v[i].file ? cs_nvcc_stem(v[i].file, &stem) : 0;
        if (!l)
            continue;
        const char *src = NULL;
        int several = 0;
        for (size_t j = 0; j < n && !several; j++) {
            const char *f = v[j].file, *fs;
            if (!f || cs_nvcc_stem(f, &fs))
                continue;
            const char *b = strrchr(f, '/');
            b = b ? b + 1 : f;
            if (strncmp(b, stem, l) != 0 || b[l] != '.' || !b[l + 1] || strchr(b + l + 1, '.'))
                continue;
            if (src && strcmp(src, f) != 0)
                several = 1;
            src = f;
        }
        if (src && !several) {
            char *c = strdup(src);
            if (c) {
                free(v[i].file);
                v[i].file = c;
            }
        }
    }
}

/* Read its answers (two lines per distinct address) into the store. */
static void cs_a2l_finish(cs_store *st, cs_a2l *p, const cs_fr *a)
{
    char func[1024], loc[2048];
    cs_a2l_ans *v = NULL;
    size_t n = 0, cap = 0;
    for (size_t k = p->i; k < p->j;) {
        if (!fgets(func, sizeof func, p->out) || !fgets(loc, sizeof loc, p->out))
            break;
        func[strcspn(func, "\n")] = '\0';
        loc[strcspn(loc, "\n")] = '\0';
        char *colon = strrchr(loc, ':');
        int line = 0;
        if (colon) {
            line = atoi(colon + 1);
            *colon = '\0';
        }
        if (CS_VEC_RESERVE(v, cap, n + 1) != 0)
            break; /* out of memory: these frames stay unnamed */
        cs_a2l_ans *x = &v[n++];
        x->k = k;
        x->line = line;
        x->func = strcmp(func, "??") == 0 ? NULL : strdup(func);
        x->file = strcmp(loc, "??") == 0 ? NULL : strdup(loc);
        while (k < p->j && a[k].offset == a[x->k].offset)
            k++;
    }
    fclose(p->out);
    while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR) {
    }
    cs_nvcc_source(v, n);
    for (size_t i = 0; i < n; i++) {
        /* Every frame at this address has this answer. */
        for (size_t m = v[i].k; m < p->j && a[m].offset == a[v[i].k].offset; m++)
            cs_store_frame_set_symbol(st, a[m].rank, a[m].callsite, a[m].level, v[i].func, v[i].file, v[i].line);
        free(v[i].func);
        free(v[i].file);
    }
    free(v);
}

static int cs_fr_cmp(const void *x, const void *y)
{
    const cs_fr *a = x, *b = y;
    if (!a->module || !b->module)
        return (a->module != NULL) - (b->module != NULL);
    int c = strcmp(a->module, b->module);
    if (c)
        return c;
    return (a->offset > b->offset) - (a->offset < b->offset);
}

/* addr2line processes at once: one per module, a few at a time. */
#define CS_A2L_PAR 4

int cs_symbolize(cs_store *st)
{
    cs_frvec v = { 0 };
    if (cs_store_frames_unresolved(st, cs_collect, &v) != 0) {
        free(v.a);
        return -1;
    }
    if (v.n) {
        /* By module, then address: one addr2line process per module, each
         * address asked once, up to CS_A2L_PAR processes running while
         * the answers of the oldest are stored (in module order). */
        qsort(v.a, v.n, sizeof *v.a, cs_fr_cmp);
        cs_a2l run[CS_A2L_PAR];
        size_t nrun = 0, first = 0, i = 0;
        int missing = 0;
        while ((i < v.n && !missing) || nrun) {
            if (i < v.n && !missing && nrun < CS_A2L_PAR) {
                size_t j = i + 1;
                if (!v.a[i].module) {
                    i++;
                    continue;
                }
                while (j < v.n && v.a[j].module && strcmp(v.a[j].module, v.a[i].module) == 0)
                    j++;
                if (cs_a2l_start(&run[(first + nrun) % CS_A2L_PAR], v.a, i, j) == 0)
                    nrun++;
                else if (errno == ENOENT)
                    missing = 1; /* no addr2line: the frames stay unnamed */
                i = j;
                continue;
            }
            cs_a2l_finish(st, &run[first], v.a);
            first = (first + 1) % CS_A2L_PAR;
            nrun--;
        }
    }
    for (size_t i = 0; i < v.n; i++)
        free(v.a[i].module);
    free(v.a);
    return cs_store_label_callsites(st);
}
