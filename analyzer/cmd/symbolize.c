/* symbolize.c: name the frames of call sites at analysis time, with
 * binutils' addr2line, one process per object file. Never in the hot path. */
#include "config.h"
#include "analyzer/cmd/cli.h"
#include "common/vec.h"

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

static int cs_have_addr2line(void)
{
    return system("command -v addr2line >/dev/null 2>&1") == 0;
}

/* Resolve frames [i, j) of one module with a single addr2line run. */
static void cs_resolve_module(cs_store *st, cs_fr *a, size_t i, size_t j)
{
    char tmpl[] = "/tmp/collscope-a2l.XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0)
        return;
    FILE *in = fdopen(fd, "w");
    for (size_t k = i; k < j; k++)
        /* A return address points after the call: look up the call. */
        fprintf(in, "0x%llx\n", (unsigned long long)(a[k].offset ? a[k].offset - 1 : 0));
    fclose(in);
    char *cmd = malloc(strlen(a[i].module) * 2 + 128);
    if (!cmd) {
        unlink(tmpl);
        return;
    }
    /* Quote the path for the shell. */
    char *q = cmd + sprintf(cmd, "addr2line -C -f -e '");
    for (const char *p = a[i].module; *p; p++) {
        if (*p == '\'') {
            strcpy(q, "'\\''");
            q += 4;
        } else
            *q++ = *p;
    }
    sprintf(q, "' < %s 2>/dev/null", tmpl);
    FILE *out = popen(cmd, "r");
    free(cmd);
    if (out) {
        char func[1024], loc[2048];
        for (size_t k = i; k < j; k++) {
            if (!fgets(func, sizeof func, out) || !fgets(loc, sizeof loc, out))
                break;
            func[strcspn(func, "\n")] = '\0';
            loc[strcspn(loc, "\n")] = '\0';
            char *colon = strrchr(loc, ':');
            int line = 0;
            if (colon) {
                line = atoi(colon + 1);
                *colon = '\0';
            }
            const char *file = (strcmp(loc, "??") == 0) ? NULL : loc;
            cs_store_frame_set_symbol(st, a[k].rank, a[k].callsite, a[k].level, strcmp(func, "??") == 0 ? NULL : func,
                                      file, line);
        }
        pclose(out);
    }
    unlink(tmpl);
}

static int cs_fr_cmp(const void *x, const void *y)
{
    const cs_fr *a = x, *b = y;
    if (!a->module || !b->module)
        return (a->module != NULL) - (b->module != NULL);
    return strcmp(a->module, b->module);
}

int cs_symbolize(cs_store *st)
{
    cs_frvec v = { 0 };
    if (cs_store_frames_unresolved(st, cs_collect, &v) != 0) {
        free(v.a);
        return -1;
    }
    if (v.n && cs_have_addr2line()) {
        qsort(v.a, v.n, sizeof *v.a, cs_fr_cmp);
        size_t i = 0;
        while (i < v.n) {
            size_t j = i + 1;
            if (!v.a[i].module) {
                i++;
                continue;
            }
            while (j < v.n && v.a[j].module && strcmp(v.a[j].module, v.a[i].module) == 0)
                j++;
            cs_resolve_module(st, v.a, i, j);
            i = j;
        }
    }
    for (size_t i = 0; i < v.n; i++)
        free(v.a[i].module);
    free(v.a);
    return cs_store_label_callsites(st);
}
