/* par_standin.c: a stand-in of cs_analysis_run_par for the tests of the
 * transports of the parallel analysis (test_par_fork.c, test_par_mpi):
 * instead of analysing, the processes exchange patterned bytes and check
 * them. COLLSCOPE_PAR_TEST_MB (default 1) sizes the messages: rank r
 * gathers MB/K megabytes + r*7 bytes, the root broadcasts MB megabytes + 3.
 * The root prints one "ok:" line per check that held; every process
 * returns -1 when any saw a wrong byte. */
#include "config.h"
#include "analyzer/analysis/csanalysis.h"
#include "analyzer/analysis/par.h"

#include <stdlib.h>
#include <string.h>

static size_t par_standin_mb;

static unsigned char par_standin_byte(int rank, size_t i)
{
    return (unsigned char)((i * 2654435761u) >> 13) ^ (unsigned char)(rank * 37 + 1);
}

static size_t par_standin_len(int rank, int size)
{
    return par_standin_mb * 1000000 / (size_t)size + (size_t)rank * 7;
}

/* The stand-in: one big gather, checked at the root; one big broadcast,
 * checked everywhere; an empty gather and broadcast; the workers' verdicts
 * gathered; the root's verdict broadcast. */
int cs_analysis_run_par(const cs_source *src, int force, cs_par *par, FILE *log, char *err, size_t errlen)
{
    const char *mb = getenv("COLLSCOPE_PAR_TEST_MB");
    par_standin_mb = mb ? (size_t)atol(mb) : 1;
    (void)src;
    (void)force;
    (void)log;
    size_t len = par_standin_len(par->rank, par->size);
    unsigned char *mine = malloc(len);
    if (!mine)
        return -1;
    for (size_t i = 0; i < len; i++)
        mine[i] = par_standin_byte(par->rank, i);
    void *all = NULL;
    size_t *lens = calloc((size_t)par->size, sizeof *lens);
    int bad = 0;
    if (par->gather(par, mine, len, &all, lens) != 0) {
        snprintf(err, errlen, "gather failed");
        free(mine);
        free(lens);
        return -1;
    }
    free(mine);
    uint64_t want_recv = 0;
    if (par->rank == 0) {
        const unsigned char *p = all;
        for (int r = 0; r < par->size; r++) {
            if (lens[r] != par_standin_len(r, par->size))
                bad = 1;
            for (size_t i = 0; i < lens[r] && !bad; i++)
                if (p[i] != par_standin_byte(r, i))
                    bad = 1;
            p += lens[r];
            if (r)
                want_recv += 8 + lens[r];
        }
        if (bad)
            fprintf(stderr, "FAIL: gathered bytes differ\n");
        else
            printf("ok: gathered %zu bytes from %d processes\n", (size_t)(p - (const unsigned char *)all), par->size);
        free(all);
        if (par->received != want_recv) {
            fprintf(stderr, "FAIL: root received %llu, want %llu\n", (unsigned long long)par->received,
                    (unsigned long long)want_recv);
            bad = 1;
        }
    } else if (all) {
        bad = 1;
    }
    free(lens);

    size_t blen = par_standin_mb * 1000000 + 3;
    void *b = NULL;
    if (par->rank == 0) {
        b = malloc(blen);
        for (size_t i = 0; i < blen; i++)
            ((unsigned char *)b)[i] = par_standin_byte(1000, i);
    }
    size_t got = blen;
    if (par->bcast(par, &b, &got) != 0) {
        snprintf(err, errlen, "bcast failed");
        if (par->rank == 0)
            free(b);
        return -1;
    }
    if (got != blen)
        bad = 1;
    for (size_t i = 0; i < got && !bad; i++)
        if (((unsigned char *)b)[i] != par_standin_byte(1000, i))
            bad = 1;
    free(b);

    /* empty messages */
    void *e = NULL;
    size_t elen = 0, *elens = calloc((size_t)par->size, sizeof *elens);
    if (par->gather(par, "", 0, &e, elens) != 0)
        return -1;
    free(e);
    free(elens);
    e = NULL;
    elen = 0;
    if (par->bcast(par, &e, &elen) != 0 || elen != 0)
        return -1;
    if (par->rank)
        free(e);

    /* every process's verdict to the root, the root's to all */
    unsigned char v = (unsigned char)bad, *vs = NULL;
    size_t vlens[64];
    if (par->gather(par, &v, 1, (void **)&vs, vlens) != 0)
        return -1;
    int32_t rc = 0;
    if (par->rank == 0) {
        for (int r = 0; r < par->size; r++)
            if (vs[r]) {
                fprintf(stderr, "FAIL: process %d saw wrong bytes\n", r);
                rc = -1;
            }
        free(vs);
        if (!rc)
            printf("ok: broadcast %zu bytes to %d processes, sent %llu bytes\n", blen, par->size - 1,
                   (unsigned long long)par->sent);
    }
    void *rb = &rc;
    size_t rlen = sizeof rc;
    if (par->bcast(par, &rb, &rlen) != 0)
        return -1;
    if (par->rank) {
        memcpy(&rc, rb, sizeof rc);
        free(rb);
    }
    if (rc < 0)
        snprintf(err, errlen, "wrong bytes");
    return rc;
}

/* par_mpi.c's other calls into the analysis */
int cs_source_open(const char *arg, cs_source *src, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    memset(src, 0, sizeof *src);
    snprintf(src->arg, sizeof src->arg, "%s", arg);
    snprintf(src->path, sizeof src->path, "%s", arg);
    src->kind = CS_SOURCE_JOB;
    return 0;
}

int cs_analysis_run(const cs_source *src, int force, FILE *log, char *err, size_t errlen)
{
    (void)src, (void)force, (void)log, (void)err, (void)errlen;
    return -1;
}
