/* par_fork.c: the processes of a parallel analysis as forked workers
 * (par.h): `collscope analyze -j K` where no MPI is installed. The root
 * holds one stream socket to each worker; every message is a uint64
 * length in host order followed by that many bytes. */
#include "config.h"
#include "analyzer/par/par_fork.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct cs__par_fork {
    int *aFd;          /* root: aFd[i] the socket to worker i (i >= 1); worker: aFd[0] */
    int failed;        /* the rank whose socket broke first, or -1 */
    int nCall, killAt; /* test-only: stop at exchange killAt (1 the first) */
} cs__par_fork;

/* Write all of len bytes (a short write or EINTR continues); never raises
 * SIGPIPE. 0 or -1. */
static int par_fork_write(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Read exactly len bytes: 0, or -1 on EOF or an error. */
static int par_fork_read(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int par_fork_send_msg(cs_par *p, int fd, const void *buf, size_t len)
{
    uint64_t n = len;
    if (par_fork_write(fd, &n, sizeof n) != 0 || par_fork_write(fd, buf, len) != 0)
        return -1;
    p->sent += sizeof n + len;
    return 0;
}

static void par_fork_fail(cs_par *p, int rank)
{
    cs__par_fork *f = p->impl;
    if (f->failed < 0)
        f->failed = rank;
}

/* Test-only: a worker told to stop at this exchange does. */
static void par_fork_test_kill(cs__par_fork *f)
{
    if (f->killAt && ++f->nCall == f->killAt)
        _exit(9);
}

static int par_fork_gather(cs_par *p, const void *buf, size_t len, void **all, size_t *lens)
{
    cs__par_fork *f = p->impl;
    if (p->rank != 0) {
        par_fork_test_kill(f);
        if (par_fork_send_msg(p, f->aFd[0], buf, len) != 0) {
            par_fork_fail(p, 0);
            return -1;
        }
        return 0;
    }
    /* Each worker's length is at the front of its socket whatever its
     * body's size: read them all, then the bodies in rank order into one
     * buffer (a worker blocked on its own socket holds up no other). */
    size_t total = len;
    lens[0] = len;
    for (int i = 1; i < p->size; i++) {
        uint64_t n;
        if (par_fork_read(f->aFd[i], &n, sizeof n) != 0 || n > SIZE_MAX - total) {
            par_fork_fail(p, i);
            return -1;
        }
        lens[i] = (size_t)n;
        total += lens[i];
        p->received += sizeof n;
    }
    char *out = malloc(total ? total : 1);
    if (!out)
        return -1;
    if (len)
        memcpy(out, buf, len);
    size_t off = len;
    for (int i = 1; i < p->size; i++) {
        if (par_fork_read(f->aFd[i], out + off, lens[i]) != 0) {
            par_fork_fail(p, i);
            free(out);
            return -1;
        }
        off += lens[i];
        p->received += lens[i];
    }
    *all = out;
    return 0;
}

static int par_fork_bcast(cs_par *p, void **buf, size_t *len)
{
    cs__par_fork *f = p->impl;
    if (p->rank == 0) {
        for (int i = 1; i < p->size; i++)
            if (par_fork_send_msg(p, f->aFd[i], *buf, *len) != 0) {
                par_fork_fail(p, i);
                return -1;
            }
        return 0;
    }
    par_fork_test_kill(f);
    uint64_t n;
    if (par_fork_read(f->aFd[0], &n, sizeof n) != 0 || n > SIZE_MAX) {
        par_fork_fail(p, 0);
        return -1;
    }
    char *out = malloc(n ? (size_t)n : 1);
    if (!out)
        return -1;
    if (par_fork_read(f->aFd[0], out, (size_t)n) != 0) {
        par_fork_fail(p, 0);
        free(out);
        return -1;
    }
    p->received += sizeof n + n;
    *buf = out;
    *len = (size_t)n;
    return 0;
}

/* The body of worker rank: never returns. */
static void par_fork_worker(int rank, int k, int fd, pid_t root, const cs_source *src, int force, FILE *log)
{
    /* Test-only hook (tests/store/par_transport.sh, test_par_fork):
     * COLLSCOPE_PAR_TEST_KILL=RANK makes that worker stop at once, as a
     * crashed one would; RANK:N at its Nth gather or bcast. */
    int killAt = 0;
    const char *kill_spec = getenv("COLLSCOPE_PAR_TEST_KILL");
    if (kill_spec && atoi(kill_spec) == rank) {
        const char *colon = strchr(kill_spec, ':');
        if (!colon)
            _exit(9);
        killAt = atoi(colon + 1);
    }
    /* A root that is killed takes its workers with it. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != root)
        _exit(2);
    /* ready: the root starts nothing before every worker is */
    char ready = 1;
    if (par_fork_write(fd, &ready, 1) != 0)
        _exit(2);
    int fds[1] = { fd };
    cs__par_fork f = { .aFd = fds, .failed = -1, .killAt = killAt };
    cs_par p = { .rank = rank, .size = k, .gather = par_fork_gather, .bcast = par_fork_bcast, .impl = &f };
    char err[1024];
    int rc = cs_analysis_run_par(src, force, &p, log, err, sizeof err);
    if (log)
        fflush(log);
    _exit(rc < 0 ? 2 : rc);
}

int cs_par_fork_run(int k, const cs_source *src, int force, FILE *log, char *err, size_t errlen)
{
    err[0] = '\0';
    if (k < 1) {
        snprintf(err, errlen, "%d analysis processes: want at least 1", k);
        return -1;
    }
    int(*sv)[2] = calloc((size_t)k, sizeof *sv);
    pid_t *pids = calloc((size_t)k, sizeof *pids);
    int *fds = calloc((size_t)k, sizeof *fds);
    int rc = -1, made = 1;
    if (!sv || !pids || !fds) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (int i = 1; i < k; i++, made++)
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv[i]) != 0) {
            snprintf(err, errlen, "socketpair for analysis process %d: %s", i, strerror(errno));
            goto close_pairs;
        }
    /* Nothing buffered is written twice by the children. */
    fflush(NULL);
    pid_t root = getpid();
    int forked = 1;
    for (int i = 1; i < k; i++, forked++) {
        pids[i] = fork();
        if (pids[i] < 0) {
            snprintf(err, errlen, "fork of analysis process %d: %s", i, strerror(errno));
            break;
        }
        if (pids[i] == 0) {
            for (int j = 1; j < k; j++) {
                close(sv[j][0]);
                if (j != i)
                    close(sv[j][1]);
            }
            par_fork_worker(i, k, sv[i][1], root, src, force, log);
        }
    }
    for (int i = 1; i < k; i++) {
        close(sv[i][1]);
        fds[i] = sv[i][0];
    }
    cs__par_fork f = { .aFd = fds, .failed = -1 };
    for (int i = 1; i < k && forked == k && f.failed < 0; i++) {
        char ready;
        if (par_fork_read(fds[i], &ready, 1) != 0)
            f.failed = i;
    }
    if (forked == k && f.failed < 0) {
        cs_par p = { .rank = 0, .size = k, .gather = par_fork_gather, .bcast = par_fork_bcast, .impl = &f };
        rc = cs_analysis_run_par(src, force, &p, log, err, errlen);
        const char *verbose = getenv("COLLSCOPE_VERBOSE");
        if (log && verbose && *verbose)
            fprintf(log, "collscope: process 0 sent %llu and received %llu bytes\n", (unsigned long long)p.sent,
                    (unsigned long long)p.received);
    }
    /* The workers are done, or must stop: closing their sockets ends the
     * ones that wait for the root, a signal the ones that compute. */
    for (int i = 1; i < k; i++)
        close(fds[i]);
    if (rc < 0)
        for (int i = 1; i < forked; i++)
            kill(pids[i], SIGTERM);
    for (int i = 1; i < forked; i++) {
        int st;
        while (waitpid(pids[i], &st, 0) < 0 && errno == EINTR)
            ;
        /* The one whose socket broke is named; while the root did well,
         * any worker that did not end as it did too. */
        int same = WIFEXITED(st) && WEXITSTATUS(st) == rc;
        if (f.failed == i || (rc >= 0 && !same)) {
            if (WIFSIGNALED(st))
                snprintf(err, errlen, "analysis process %d stopped (signal %d)", i, WTERMSIG(st));
            else
                snprintf(err, errlen, "analysis process %d stopped (exit %d)", i, WEXITSTATUS(st));
            rc = -1;
        }
    }
    goto out;
close_pairs:
    for (int i = 1; i < made; i++) {
        close(sv[i][0]);
        close(sv[i][1]);
    }
out:
    free(sv);
    free(pids);
    free(fds);
    return rc;
}
