/* ingest.c: from process logs to one trace (cs_ingest_dir), for
 * `collscope ingest DIR` and as the last step of `collscope run`. */
#include "config.h"
#include "analyzer/cmd/cli.h"
#include "common/numarg.h"
#include "common/vec.h"
#include "libtrace/log.h"
#include "libtrace/store_sql.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

typedef struct cs_logent {
    char path[PATH_MAX];
    char db[PATH_MAX + 64];
    int rank, pid;
    int64_t start_ns;
    char run_id[CS_LOG_RUN_ID_MAX + 1];
} cs_logent;

/* Remove a half-built trace and its side files. */
static void cs_ingest_unlink_tmp(const char *tmp)
{
    static const char *const tails[] = { "", "-wal", "-shm", "-journal" };
    for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) {
        char p[PATH_MAX + 64];
        snprintf(p, sizeof p, "%s%s", tmp, tails[i]);
        unlink(p);
    }
}

static int cs_logent_cmp(const void *a, const void *b)
{
    const cs_logent *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->pid - y->pid;
}

static double cs_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Logs are converted by worker processes, one per core (SQLite writes
 * are CPU-bound), while this process merges each rank file as soon as it
 * is ready: the merge, which only one process can do, overlaps the
 * conversions. This process converts the first log itself, as it would
 * otherwise only wait for it. Worker w takes the w-th, (w+nw)-th, ... of
 * the other logs to convert, in rank order, and writes each log's index
 * to a pipe when it is done with it (made or not: a failing worker says
 * why on stderr). */
enum { CS_W_PENDING, CS_W_DONE, CS_W_HERE, CS_W_LOST };
typedef struct cs_workers {
    pid_t pids[16];
    int status[16]; /* how each worker ended (once reaped) */
    size_t n, nents;
    size_t mine; /* the log this process converts (nents: none) */
    int rd;      /* read end of the pipe; -1 when none */
    int reaped;
    unsigned char *done;  /* done[i]: CS_W_*: ents[i] converted (or given up on), to convert
                               here, or lost with its worker */
    unsigned char *owner; /* owner[i]: the worker converting ents[i] */
} cs_workers;

static int cs_convert_one(const cs_logent *e, const char *dir)
{
    char made[PATH_MAX], err[1024];
    if (cs_store_convert_log(e->path, dir, made, err, sizeof err) != 0) {
        if (!cs_store_disk_full()) /* a full disk: said once, by cs_ingest_full */
            cs_error("skipping %s", err);
        return -1;
    }
    return 0;
}

static int cs_ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return m <= n && strcmp(s + n - m, tail) == 0;
}

static void cs_workers_start(cs_workers *w, cs_logent *ents, const unsigned char *todo, size_t n, size_t ntodo,
                             const char *dir)
{
    memset(w, 0, sizeof *w);
    w->rd = -1;
    w->nents = w->mine = n;
    w->done = calloc(n ? n : 1, 2);
    w->owner = w->done ? w->done + (n ? n : 1) : NULL;
    /* A rank file left from an earlier conversion must not stand in for
     * one a worker fails to make. */
    for (size_t i = 0; i < n; i++)
        if (todo[i])
            unlink(ents[i].db);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nw = cores > 1 ? (size_t)cores : 0;
    if (nw > 16)
        nw = 16;
    if (ntodo < 2)
        nw = 0;
    else if (nw > ntodo - 1)
        nw = ntodo - 1;
    int fd[2];
    if (nw == 0 || !w->done || pipe(fd) != 0)
        return; /* no workers: cs_workers_wait converts each log here */
    for (size_t i = 0; i < n && w->mine == n; i++)
        if (todo[i])
            w->mine = i;
    for (size_t k = 0; k < nw; k++) {
        pid_t pid = fork();
        if (pid < 0)
            break;
        if (pid > 0) {
            w->pids[w->n++] = pid;
            continue;
        }
        close(fd[0]);
        /* Test seam: a worker killed while converting this log. */
        const char *kill_at = getenv("COLLSCOPE_TEST_KILL_CONVERT");
        int bad = 0;
        for (size_t i = 0, j = 0; i < n; i++) {
            if (!todo[i] || i == w->mine || j++ % nw != k)
                continue;
            if (kill_at && cs_ends_with(ents[i].path, kill_at))
                raise(SIGKILL);
            bad |= cs_convert_one(&ents[i], dir) != 0;
            uint32_t v = (uint32_t)i;
            while (write(fd[1], &v, sizeof v) < 0 && errno == EINTR)
                ;
        }
        /* 2: the disk was full (cs_workers_full) */
        _exit(cs_store_disk_full() ? 2 : bad);
    }
    close(fd[1]);
    if (w->n == 0) {
        close(fd[0]);
        w->mine = n;
        return;
    }
    w->rd = fd[0];
    /* Logs of workers that could not be started are converted here, when
     * their turn comes. */
    for (size_t i = 0, j = 0; i < n; i++)
        if (todo[i] && i != w->mine) {
            size_t k = j++ % nw;
            w->owner[i] = (unsigned char)k;
            if (k >= w->n)
                w->done[i] = CS_W_HERE;
        }
}

static void cs_workers_reap(cs_workers *w)
{
    if (w->reaped)
        return;
    for (size_t k = 0; k < w->n; k++)
        while (waitpid(w->pids[k], &w->status[k], 0) < 0 && errno == EINTR)
            ;
    w->reaped = 1;
}

/* Why ents[i] has no rank file, when its worker died before saying. */
static const char *cs_workers_why(cs_workers *w, size_t i, char *buf, size_t len)
{
    if (!w->done || w->done[i] != CS_W_LOST)
        return NULL;
    int st = w->status[w->owner[i]];
    if (WIFSIGNALED(st))
        snprintf(buf, len, "the process converting it was killed by signal %d (%s)", WTERMSIG(st),
                 strsignal(WTERMSIG(st)));
    else
        snprintf(buf, len, "the process converting it ended (status %d) before it", WEXITSTATUS(st));
    return buf;
}

/* Returns when ents[i] is converted (or its worker gave up on it). */
static void cs_workers_wait(cs_workers *w, cs_logent *ents, size_t i, const char *dir)
{
    if (w->done && (w->done[i] == CS_W_DONE || w->done[i] == CS_W_LOST))
        return;
    if (!w->done || w->done[i] == CS_W_HERE || i == w->mine || (w->rd < 0 && w->n == 0)) {
        cs_convert_one(&ents[i], dir);
        if (w->done)
            w->done[i] = CS_W_DONE;
        return;
    }
    while (!w->done[i]) {
        uint32_t v;
        ssize_t got = read(w->rd, &v, sizeof v);
        if (got < 0 && errno == EINTR)
            continue;
        if (got != (ssize_t)sizeof v) {
            /* Every worker is gone: a log none reported was lost with
             * the one that died converting it. */
            close(w->rd);
            w->rd = -1;
            cs_workers_reap(w);
            for (size_t k = 0; k < w->nents; k++)
                if (w->done[k] == CS_W_PENDING && k != w->mine)
                    w->done[k] = CS_W_LOST;
            return;
        }
        if (v < w->nents)
            w->done[v] = CS_W_DONE;
    }
}

/* Whether a worker found the disk full (once reaped). */
static int cs_workers_full(const cs_workers *w)
{
    for (size_t k = 0; w->reaped && k < w->n; k++)
        if (WIFEXITED(w->status[k]) && WEXITSTATUS(w->status[k]) == 2)
            return 1;
    return 0;
}

static void cs_workers_end(cs_workers *w)
{
    if (w->rd >= 0)
        close(w->rd);
    cs_workers_reap(w);
    free(w->done);
}

/* A log written by a newer preload may hold calls this collscope has no
 * op for: they are kept as op "none", and said so here. */
/* A damaged log (cut short, or with slots that are no record) is kept
 * up to the damage, and said so here: 1 when it is. */
static int cs_warn_log_notes(const cs_logent *e)
{
    cs_store *st;
    char err[256], n[32] = "", dmg[512] = "";
    if (cs_store_open(e->db, CS_STORE_READ, &st, err, sizeof err) != 0)
        return 0; /* the merge will say what is wrong with it */
    cs_store_meta_get(st, "unknown_ops", n, sizeof n);
    cs_store_meta_get(st, "damage", dmg, sizeof dmg);
    cs_store_close(st);
    if (n[0] && strcmp(n, "0") != 0)
        cs_note("%s: %s spans of calls this collscope does not know (a newer preload wrote the log?);"
                " kept with op \"none\"",
                e->path, n);
    if (dmg[0])
        cs_error("%s: damaged log: %s", e->path, dmg);
    return dmg[0] != 0;
}

/* Keep the logs of one run: that of the newest log (the latest start).
 * Logs of other runs are named and left out. Returns the number kept. */
static size_t cs_keep_one_run(cs_logent *ents, size_t n, const char *logs, cs_ingest_result *res)
{
    size_t newest = 0;
    for (size_t i = 1; i < n; i++)
        if (ents[i].start_ns > ents[newest].start_ns)
            newest = i;
    int several = 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(ents[i].run_id, ents[newest].run_id) != 0)
            several = 1;
    if (!several)
        return n;
    char keep[CS_LOG_RUN_ID_MAX + 1];
    snprintf(keep, sizeof keep, "%s", ents[newest].run_id);
    cs_error("%s holds logs of more than one run; keeping run %s (that of the newest log)", logs,
             keep[0] ? keep : "(unknown)");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(ents[i].run_id, keep) == 0) {
            ents[k++] = ents[i];
            continue;
        }
        cs_error("skipping %s: of run %s", ents[i].path, ents[i].run_id[0] ? ents[i].run_id : "(unknown)");
        res->other_run++;
    }
    return k;
}

/* The one message of an ingest that ran out of disk space: what it could
 * not write, what it kept (the logs, the rank stores made), and that an
 * ingest once there is space builds the trace from them. */
static void cs_ingest_full(const char *dir, const cs_logent *ents, size_t n, int merge)
{
    char kept[256] = "", lost[256] = "";
    size_t nk = 0, klen = 0, llen = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat sb;
        int have = stat(ents[i].db, &sb) == 0 && S_ISREG(sb.st_mode);
        char *l = have ? kept : lost;
        size_t *len = have ? &klen : &llen;
        nk += have;
        if (*len + 24 < sizeof kept)
            *len += (size_t)snprintf(l + *len, sizeof kept - *len, "%s%d", *len ? "," : "", ents[i].rank);
        else if (*len + 5 < sizeof kept && strcmp(l + *len - 3, "...") != 0)
            *len += (size_t)snprintf(l + *len, sizeof kept - *len, ",...");
    }
    char stores[700];
    if (nk)
        snprintf(stores, sizeof stores, " and the rank stores of %zu of them (rank%s %s%s%s) in %s/ranks", nk,
                 nk > 1 ? "s" : "", kept, llen ? "; none for " : "", lost, dir);
    else
        snprintf(stores, sizeof stores, " (no rank store could be made)");
    cs_error("the disk holding %s is full (no space left on device, SQLITE_FULL): %s/%s not written; kept: the %zu "
             "process logs in %s/logs%s; once there is space, `collscope ingest %s` builds the trace from them",
             dir, dir, merge == CS_MERGE_NO ? CS_STORE_INDEX_FILE : "trace.db", n, dir, stores, dir);
}

static int64_t cs_ingest_end_ns;

void cs_ingest_job_end(int64_t mono_ns)
{
    cs_ingest_end_ns = mono_ns;
}

int64_t cs_ingest_merge_max(void)
{
    const char *v = getenv("COLLSCOPE_MERGE_MAX");
    if (!v || !v[0])
        return CS_MERGE_MAX_DEFAULT;
    long long n;
    char err[256];
    if (cs_numarg_ll("COLLSCOPE_MERGE_MAX", v, 0, INT64_MAX, &n, err, sizeof err) != 0) {
        cs_error("%s", err);
        return -1;
    }
    return n;
}

void cs_ingest_remove(const char *dir, const char *name)
{
    static const char *const tails[] = { "", "-wal", "-shm", "-journal", ".tmp" };
    for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) {
        char p[PATH_MAX + 64];
        struct stat sb;
        snprintf(p, sizeof p, "%s/%s%s", dir, name, tails[i]);
        if (lstat(p, &sb) == 0 && S_ISREG(sb.st_mode))
            unlink(p);
    }
}

/* The job left as its rank stores: each gets its call sites' symbols,
 * then DIR/index.db lists them; an older merged trace.db and results.db
 * go. Returns the number indexed, or -1. */
static int cs_ingest_index(const char *dir, cs_logent *ents, const unsigned char *ok, size_t n, const char *command,
                           cs_ingest_result *res)
{
    char **files = calloc(n ? n : 1, sizeof *files);
    if (!files) {
        cs_error("out of memory");
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!ok[i])
            continue;
        cs_store *st;
        char err[1024];
        if (cs_store_open(ents[i].db, CS_STORE_WRITE, &st, err, sizeof err) != 0) {
            cs_error("skipping %s", err);
            res->failed++;
            continue;
        }
        cs_symbolize(st);
        /* Read in place from now on, by any number of readers: no WAL
         * side files left beside it. */
        sqlite3_exec(cs_store_sql_db(st), "PRAGMA journal_mode=DELETE", NULL, NULL, NULL);
        cs_store_close(st);
        files[k++] = ents[i].db;
    }
    char err[1024];
    int rc = -1;
    if (k == 0)
        cs_error("%s/ranks: no rank store could be made", dir);
    else {
        /* when `collscope run` saw the job end, as a merged trace keeps it */
        char end[32], host[256] = "";
        const char *meta[] = { "job_end_ns", end, "job_end_host", host, NULL };
        snprintf(end, sizeof end, "%lld", (long long)cs_ingest_end_ns);
        gethostname(host, sizeof host - 1);
        if (cs_store_index_write(dir, files, k, command, cs_ingest_end_ns > 0 ? meta : NULL, err, sizeof err) != 0)
            cs_error("%s", err);
        else
            rc = (int)k;
    }
    free(files);
    if (rc > 0) {
        cs_ingest_remove(dir, "trace.db");
        cs_ingest_remove(dir, "results.db");
    }
    return rc;
}

int cs_ingest_dir(const char *dir, int force, int merge, const char *command, cs_ingest_result *res)
{
    memset(res, 0, sizeof *res);
    char logs[PATH_MAX], ranks[PATH_MAX], why[PATH_MAX + 128];
    snprintf(logs, sizeof logs, "%s/logs", dir);
    snprintf(ranks, sizeof ranks, "%s/ranks", dir);
    /* Write only into a folder of ours, never through a planted link. */
    struct stat sb;
    if (cs_log_dir_safe(dir, force, why, sizeof why) != 0 ||
        (lstat(logs, &sb) == 0 && cs_log_dir_safe(logs, 1, why, sizeof why) != 0) ||
        (lstat(ranks, &sb) == 0 && cs_log_dir_safe(ranks, 1, why, sizeof why) != 0)) {
        cs_error("%s", why);
        return -1;
    }
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
        /* FIFOs, sockets, devices, links: named and skipped unopened. */
        if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(sb.st_mode)) {
            cs_error("skipping %s/%s: not a regular file", logs, de->d_name);
            res->logs++;
            res->failed++;
            continue;
        }
        if (CS_VEC_RESERVE(ents, cap, n + 1) != 0) {
            closedir(d);
            free(ents);
            cs_error("out of memory");
            return -1;
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
        e->start_ns = h->start_real_ns;
        snprintf(e->run_id, sizeof e->run_id, "%s", h->run_id);
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
        res->nologs = 1;
        free(ents);
        return -1;
    }
    n = cs_keep_one_run(ents, n, logs, res);
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
    int64_t merge_max = merge == CS_MERGE_AUTO ? cs_ingest_merge_max() : 0, rank_bytes = 0;
    if (merge_max < 0) {
        free(ents);
        free(todo);
        return -1;
    }
    /* ok[i]: ents[i] has a rank store to index, when the job is left
     * unmerged. */
    unsigned char *ok = calloc(n, 1);
    if (!ok) {
        cs_error("out of memory");
        free(ents);
        free(todo);
        return -1;
    }
    double t0 = cs_now_s(), twait = 0;
    cs_workers wk;
    cs_workers_start(&wk, ents, todo, n, ntodo, dir);
    /* The first rank file becomes the trace by a file copy; the others are
     * merged into it. */
    cs_store *job = NULL;
    int merged = 0;
    for (size_t i = 0; i < n; i++) {
        cs_logent *e = &ents[i];
        if (cs_store_disk_full())
            break; /* nothing more can be written: said once below */
        if (todo[i]) {
            double tw = cs_now_s();
            cs_workers_wait(&wk, ents, i, dir);
            twait += cs_now_s() - tw;
            if (access(e->db, R_OK) != 0) { /* the worker said why, unless it died */
                char why[256];
                if (cs_workers_why(&wk, i, why, sizeof why))
                    cs_error("skipping %s: not converted: %s", e->path, why);
                res->failed++;
                continue;
            }
            res->converted++;
        }
        res->damaged += cs_warn_log_notes(e);
        ok[i] = 1;
        struct stat rs;
        if (stat(e->db, &rs) == 0)
            rank_bytes += (int64_t)rs.st_size;
        if (merge == CS_MERGE_AUTO && rank_bytes > merge_max) {
            /* Past the size: the rank stores stay the unit. */
            if (getenv("COLLSCOPE_VERBOSE"))
                cs_note("ingest: rank stores past %lld bytes (COLLSCOPE_MERGE_MAX): not merged", (long long)merge_max);
            merge = CS_MERGE_NO;
            cs_store_close(job);
            job = NULL;
            cs_ingest_unlink_tmp(tmp);
        }
        if (merge == CS_MERGE_NO) {
            merged++;
            continue;
        }
        if (!job) {
            int b = cs_store_create_from(tmp, e->db, &job, err, sizeof err);
            if (b == 0) {
                merged++;
                continue;
            }
            if (b < 0) {
                if (cs_store_disk_full())
                    break;
                cs_error("skipping %s", err);
                res->failed++;
                continue;
            }
            if (cs_store_create(tmp, &job, err, sizeof err) != 0) {
                if (cs_store_disk_full())
                    break; /* said once below */
                cs_error("%s", err);
                cs_workers_end(&wk);
                free(ents);
                free(todo);
                return -1;
            }
        }
        if (cs_store_merge(job, e->db, err, sizeof err) != 0) {
            if (cs_store_disk_full())
                break;
            cs_error("skipping %s", err);
            res->failed++;
            continue;
        }
        merged++;
    }
    cs_workers_end(&wk);
    if (cs_store_disk_full() || cs_workers_full(&wk)) {
        cs_store_close(job);
        cs_ingest_unlink_tmp(tmp);
        cs_ingest_full(dir, ents, n, merge);
        free(ents);
        free(todo);
        free(ok);
        return -1;
    }
    if (merge == CS_MERGE_NO) {
        int k = merged ? cs_ingest_index(dir, ents, ok, n, command, res) : -1;
        if (merged == 0)
            cs_error("%s: no log could be converted", logs);
        for (size_t i = 0; k > 0 && i < n; i++) {
            cs_store *st;
            cs_proc *procs;
            int np;
            if (!ok[i] || cs_store_open(ents[i].db, CS_STORE_READ, &st, err, sizeof err) != 0)
                continue;
            if (cs_store_procs(st, &procs, &np) == 0) {
                for (int j = 0; j < np; j++) {
                    res->spans += procs[j].spans;
                    res->dropped += procs[j].dropped;
                }
                free(procs);
            }
            cs_store_close(st);
        }
        if (k < 0 && merged && cs_store_disk_full())
            cs_ingest_full(dir, ents, n, merge);
        free(ents);
        free(todo);
        free(ok);
        res->unmerged = 1;
        return k;
    }
    free(todo);
    free(ok);
    if (merged == 0) {
        free(ents);
        cs_store_close(job);
        unlink(tmp);
        cs_error("%s: no log could be converted", logs);
        return -1;
    }
    double t2 = cs_now_s();
    cs_symbolize(job);
    double t3 = cs_now_s();
    if (cs_ingest_end_ns > 0) {
        char v[32], host[256] = "";
        snprintf(v, sizeof v, "%lld", (long long)cs_ingest_end_ns);
        gethostname(host, sizeof host - 1);
        cs_store_meta_set(job, "job_end_ns", v);
        cs_store_meta_set(job, "job_end_host", host);
    }
    if (cs_store_finish(job, command, err, sizeof err) != 0) {
        if (cs_store_disk_full())
            cs_ingest_full(dir, ents, n, merge);
        else
            cs_error("%s", err);
        free(ents);
        cs_store_close(job);
        cs_ingest_unlink_tmp(tmp);
        return -1;
    }
    free(ents);
    if (getenv("COLLSCOPE_VERBOSE"))
        cs_note("ingest: %zu logs converted while merging %.2f s (%.2f s waiting for them), symbols %.2f s,"
                " indexes %.2f s",
                ntodo, t2 - t0, twait, t3 - t2, cs_now_s() - t3);
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
    /* The merged trace is the job now: an older index and its results go. */
    cs_ingest_remove(dir, CS_STORE_INDEX_FILE);
    cs_ingest_remove(dir, "results.db");
    return merged;
}
