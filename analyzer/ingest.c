/* ingest.c: from process logs to one trace: `collscope ingest DIR`, also
 * the last step of `collscope run`. */
#include "config.h"
#include "analyzer/cli.h"
#include "libtrace/log.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char cs_help_ingest[] =
    "usage: collscope ingest [--force] DIR\n"
    "\n"
    "Rebuild DIR/trace.db from the per-process logs in DIR/logs. Logs of\n"
    "processes that crashed or were killed (SIGKILL included) are recovered:\n"
    "every span they completed before dying is kept. Each log first becomes\n"
    "DIR/ranks/rank-NNNNNN-PID.db, then all are merged.\n"
    "\n"
    "  --force   reconvert every log (default: only logs without a current\n"
    "            per-rank file)\n"
    "\n"
    "Exit status: 0 on success, 1 when no log could be read, 2 on bad usage.\n";

typedef struct cs_logent {
    char path[PATH_MAX];
    char db[PATH_MAX + 64];
    int rank, pid;
} cs_logent;

static int cs_logent_cmp(const void *a, const void *b)
{
    const cs_logent *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->pid - y->pid;
}

/* Convert ents[i] for every todo[i], in up to one worker process per core
 * (SQLite writes are CPU-bound here). A worker that fails prints why; the
 * caller sees the missing file. */
static double cs_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void cs_convert_parallel(cs_logent *ents, const unsigned char *todo, size_t n, size_t ntodo, const char *dir)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nw = cores > 1 ? (size_t)cores : 1;
    if (nw > 16)
        nw = 16;
    if (nw > ntodo)
        nw = ntodo;
    pid_t pids[16];
    size_t started = 0;
    for (size_t w = 0; w < nw; w++) {
        pid_t pid = nw > 1 ? fork() : 0;
        if (pid < 0)
            break; /* convert the rest here */
        if (pid > 0) {
            pids[started++] = pid;
            continue;
        }
        int bad = 0;
        for (size_t i = 0, k = 0; i < n; i++) {
            if (!todo[i] || k++ % nw != w)
                continue;
            char made[PATH_MAX], err[1024];
            unlink(ents[i].db);
            if (cs_store_convert_log(ents[i].path, dir, made, err, sizeof err) != 0) {
                cs_error("skipping %s", err);
                bad = 1;
            }
        }
        if (nw > 1)
            _exit(bad);
        return;
    }
    if (started < nw) {
        /* fork failed: convert what the missing workers would have. */
        for (size_t i = 0, k = 0; i < n; i++) {
            if (!todo[i] || (k++ % nw) < started)
                continue;
            char made[PATH_MAX], err[1024];
            if (cs_store_convert_log(ents[i].path, dir, made, err, sizeof err) != 0)
                cs_error("skipping %s", err);
        }
    }
    for (size_t w = 0; w < started; w++)
        while (waitpid(pids[w], NULL, 0) < 0 && errno == EINTR)
            ;
}

int cs_ingest_dir(const char *dir, int force, const char *command, cs_ingest_result *res)
{
    memset(res, 0, sizeof *res);
    char logs[PATH_MAX];
    snprintf(logs, sizeof logs, "%s/logs", dir);
    DIR *d = opendir(logs);
    if (!d) {
        cs_error("%s: %s (is %s a collscope output folder?)", logs, strerror(errno), dir);
        return -1;
    }
    cs_logent *ents = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l < 7 || strcmp(de->d_name + l - 6, ".cslog") != 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            cs_logent *ne = realloc(ents, cap * sizeof *ne);
            if (!ne) {
                closedir(d);
                free(ents);
                cs_error("out of memory");
                return -1;
            }
            ents = ne;
        }
        cs_logent *e = &ents[n];
        snprintf(e->path, sizeof e->path, "%s/%s", logs, de->d_name);
        char err[1024];
        cs_logr *lr = cs_logr_open(e->path, err, sizeof err);
        res->logs++;
        if (!lr) {
            cs_error("skipping %s", err);
            res->failed++;
            continue;
        }
        const cs_log_header *h = cs_logr_header(lr);
        e->rank = h->rank >= 0 ? h->rank : -h->pid;
        e->pid = h->pid;
        if (h->rank >= 0)
            snprintf(e->db, sizeof e->db, "%s/ranks/rank-%06d-%d.db", dir, h->rank, h->pid);
        else
            snprintf(e->db, sizeof e->db, "%s/ranks/pid-%d.db", dir, h->pid);
        if (!cs_logr_closed(lr))
            res->crashed++;
        cs_logr_close(lr);
        n++;
    }
    closedir(d);
    if (n == 0) {
        cs_error("%s: no readable process log (nothing was traced)", logs);
        free(ents);
        return -1;
    }
    qsort(ents, n, sizeof *ents, cs_logent_cmp);

    char tmp[PATH_MAX + 16], final[PATH_MAX + 16], err[1024];
    snprintf(final, sizeof final, "%s/trace.db", dir);
    snprintf(tmp, sizeof tmp, "%s/trace.db.tmp", dir);
    /* Convert the logs that need it, one worker process per core. */
    unsigned char *todo = calloc(n, 1);
    if (!todo) {
        cs_error("out of memory");
        free(ents);
        return -1;
    }
    size_t ntodo = 0;
    for (size_t i = 0; i < n; i++)
        if (force || !cs_store_rank_db_current(ents[i].db, ents[i].path)) {
            todo[i] = 1;
            ntodo++;
        }
    double t0 = cs_now_s();
    cs_convert_parallel(ents, todo, n, ntodo, dir);
    double t1 = cs_now_s();
    cs_store *job;
    if (cs_store_create(tmp, &job, err, sizeof err) != 0) {
        cs_error("%s", err);
        free(ents);
        free(todo);
        return -1;
    }
    int merged = 0;
    for (size_t i = 0; i < n; i++) {
        cs_logent *e = &ents[i];
        if (todo[i]) {
            if (access(e->db, R_OK) != 0) { /* the worker said why */
                res->failed++;
                continue;
            }
            res->converted++;
        }
        if (cs_store_merge(job, e->db, err, sizeof err) != 0) {
            cs_error("skipping %s", err);
            res->failed++;
            continue;
        }
        merged++;
    }
    free(ents);
    free(todo);
    if (merged == 0) {
        cs_store_close(job);
        unlink(tmp);
        cs_error("%s: no log could be converted", logs);
        return -1;
    }
    double t2 = cs_now_s();
    cs_symbolize(job);
    double t3 = cs_now_s();
    if (cs_store_finish(job, command, err, sizeof err) != 0) {
        cs_error("%s", err);
        cs_store_close(job);
        unlink(tmp);
        return -1;
    }
    if (getenv("COLLSCOPE_VERBOSE"))
        cs_note("ingest: convert %zu logs %.2f s, merge %.2f s, symbols %.2f s, indexes %.2f s", ntodo, t1 - t0,
                t2 - t1, t3 - t2, cs_now_s() - t3);
    cs_proc *procs;
    int np;
    if (cs_store_procs(job, &procs, &np) == 0) {
        for (int i = 0; i < np; i++) {
            res->spans += procs[i].spans;
            res->dropped += procs[i].dropped;
        }
        free(procs);
    }
    cs_store_close(job);
    /* Replace the old trace only now that the new one is whole. */
    char side[PATH_MAX + 32];
    snprintf(side, sizeof side, "%s-wal", final);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", final);
    unlink(side);
    if (rename(tmp, final) != 0) {
        cs_error("cannot write %s: %s", final, strerror(errno));
        return -1;
    }
    return merged;
}

int cs_cmd_ingest(int argc, char **argv)
{
    static const struct option opts[] = { { "force", no_argument, NULL, 'f' }, { NULL, 0, NULL, 0 } };
    int force = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "f", opts, NULL)) != -1) {
        if (c == 'f')
            force = 1;
        else {
            fputs(cs_help_ingest, stderr);
            return 2;
        }
    }
    if (optind != argc - 1) {
        fputs(cs_help_ingest, stderr);
        return 2;
    }
    const char *dir = argv[optind];
    cs_ingest_result r;
    if (cs_ingest_dir(dir, force, NULL, &r) < 0)
        return 1;
    printf("collscope: %d process logs (%d recovered after a crash), %lld spans, %lld dropped -> %s/trace.db\n",
           r.logs - r.failed, r.crashed, (long long)r.spans, (long long)r.dropped, dir);
    return r.failed ? 1 : 0;
}
