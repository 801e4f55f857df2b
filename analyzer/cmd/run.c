/* run.c: run a job under the tracer (`collscope run`): find the preload
 * library of its MPI, prepare the output folder and the environment, start
 * the job, pass termination requests on, and build DIR/trace.db when it
 * ends. The job's exit status is ours; the tool never changes it. */
#include "config.h"
#include "analyzer/cmd/cli.h"
#include "analyzer/live/live.h"
#include "analyzer/live/live_serve.h"
#include "libtrace/log.h"
#ifdef HAVE_NCURSES
#include "tui/top.h"
#endif

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
#include <dirent.h>

static const char *cs_libdir(void)
{
    const char *d = getenv("COLLSCOPE_LIBDIR");
    return d && *d ? d : PKGLIBDIR;
}

/* Find PROG on PATH, or return it as is. */
static void cs_which(const char *prog, char *out, size_t len)
{
    if (strchr(prog, '/')) {
        snprintf(out, len, "%s", prog);
        return;
    }
    const char *path = getenv("PATH");
    char buf[PATH_MAX];
    while (path && *path) {
        const char *c = strchr(path, ':');
        size_t l = c ? (size_t)(c - path) : strlen(path);
        snprintf(buf, sizeof buf, "%.*s/%s", (int)l, path, prog);
        if (access(buf, X_OK) == 0) {
            snprintf(out, len, "%s", buf);
            return;
        }
        path = c ? c + 1 : NULL;
    }
    snprintf(out, len, "%s", prog);
}

/* Does the file's content name libmpi? (The dynamic string table of an ELF
 * program holds its NEEDED libraries.) */
static const char *cs_mpi_of_file(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return NULL;
    char head[4];
    if (read(fd, head, 4) != 4 || memcmp(head, "\177ELF", 4) != 0) {
        close(fd);
        return NULL;
    }
    static char buf[1 << 16];
    const char *found = NULL;
    ssize_t n;
    lseek(fd, 0, SEEK_SET);
    while (!found && (n = read(fd, buf, sizeof buf - 16)) > 0) {
        buf[n] = '\0';
        for (ssize_t i = 0; i + 12 < n && !found; i++) {
            if (buf[i] != 'l')
                continue;
            if (memcmp(buf + i, "libmpi.so.40", 12) == 0)
                found = "openmpi";
            else if (memcmp(buf + i, "libmpich.so", 11) == 0)
                found = "mpich";
        }
        if (n > 64)
            lseek(fd, -16, SEEK_CUR);
    }
    close(fd);
    return found;
}

static int cs_preload_exists(const char *flavor)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/collscope-%s.so", cs_libdir(), flavor);
    return access(p, R_OK) == 0;
}

const char *cs_run_guess_mpi(char **launch)
{
    const char *env = getenv("COLLSCOPE_MPI");
    if (env && *env)
        return env;
    char exe[PATH_MAX], real[PATH_MAX];
    cs_which(launch[0], exe, sizeof exe);
    const char *r = realpath(exe, real) ? real : exe;
    const char *base = strrchr(r, '/');
    base = base ? base + 1 : r;
    if (strstr(base, "openmpi") || strstr(base, "orterun") || strstr(r, "/openmpi/") || strstr(base, "prterun"))
        return "openmpi";
    if (strstr(base, "mpich") || strstr(base, "hydra") || strstr(r, "/mpich/"))
        return "mpich";
    /* The program itself: the first argument that is an ELF naming libmpi. */
    for (int i = 0; launch[i]; i++) {
        char p[PATH_MAX];
        cs_which(launch[i], p, sizeof p);
        const char *m = cs_mpi_of_file(p);
        if (m)
            return m;
    }
    if (cs_preload_exists("openmpi"))
        return "openmpi";
    if (cs_preload_exists("mpich"))
        return "mpich";
    return "nompi";
}

/* Remove the previous run's files (and only those) from DIR: regular
 * files of our names in DIR/logs and DIR/ranks, each folder opened once
 * without following a link, each file removed relative to it. A link or
 * anything but a regular file is left alone. 0, or -1 with a reason in
 * why when logs/ or ranks/ is not a real folder. */
static int cs_clean_dir(const char *dir, char *why, size_t whylen)
{
    static const char *const subs[] = { "logs", "ranks" };
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        snprintf(why, whylen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    for (int s = 0; s < 2; s++) {
        int fd = openat(dfd, subs[s], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            if (errno == ENOENT)
                continue;
            snprintf(why, whylen, "%s/%s is not a folder (%s): refusing to clean or write there", dir, subs[s],
                     errno == ELOOP || errno == ENOTDIR ? "a symbolic link or a file" : strerror(errno));
            close(dfd);
            return -1;
        }
        DIR *dp = fdopendir(fd);
        if (!dp) {
            close(fd);
            continue;
        }
        struct dirent *de;
        while ((de = readdir(dp)) != NULL) {
            const char *n = de->d_name;
            size_t l = strlen(n);
            struct stat sb;
            if ((l > 6 && strcmp(n + l - 6, ".cslog") == 0) || (l > 8 && strcmp(n + l - 8, ".modules") == 0) ||
                (l > 3 && strcmp(n + l - 3, ".db") == 0) || (l > 4 && strcmp(n + l - 4, ".tmp") == 0)) {
                if (fstatat(fd, n, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode))
                    unlinkat(fd, n, 0);
            }
        }
        closedir(dp);
    }
    static const char *const files[] = { "trace.db",       "trace.db-wal",  "trace.db-shm", "trace.db.tmp",
                                         "index.db",       "index.db.tmp",  "results.db",   "results.db-wal",
                                         "results.db-shm", "results.db.tmp" };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        struct stat sb;
        if (fstatat(dfd, files[i], &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode))
            unlinkat(dfd, files[i], 0);
    }
    close(dfd);
    return 0;
}

/* A fresh random run id (32 hex digits), "" when none can be made. */
static void cs_new_run_id(char *out, size_t len)
{
    unsigned char b[16];
    out[0] = '\0';
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t got = read(fd, b, sizeof b);
    close(fd);
    if (got != (ssize_t)sizeof b || len < 2 * sizeof b + 1)
        return;
    for (size_t i = 0; i < sizeof b; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* Open MPI starts remote ranks with its own environment: ask it to pass
 * ours on (MPICH's Hydra passes the whole environment by default). */
static void cs_forward_env_ompi(void)
{
    extern char **environ;
    char list[4096];
    const char *old = getenv("OMPI_MCA_mca_base_env_list");
    size_t w = (size_t)snprintf(list, sizeof list, "%s%sLD_PRELOAD", old && *old ? old : "", old && *old ? ";" : "");
    for (char **e = environ; *e && w < sizeof list - 64; e++) {
        if (strncmp(*e, "COLLSCOPE_", 10) != 0 && strncmp(*e, "NCCL_PROFILER_PLUGIN=", 21) != 0)
            continue;
        const char *eq = strchr(*e, '=');
        if (eq)
            w += (size_t)snprintf(list + w, sizeof list - w, ";%.*s", (int)(eq - *e), *e);
    }
    setenv("OMPI_MCA_mca_base_env_list", list, 1);
}

static pid_t cs_child;
static cs_live_pub *cs_run_pub;
static cs_store_alarm_row *cs_run_alarms; /* what the follower raised, for the trace */
static size_t cs_run_nalarms;
static cs_live_opts cs_run_live_opts;
static int cs_run_top_asked; /* --top */

void cs_run_live(cs_live_pub *pub, const cs_live_opts *opt, int top)
{
    cs_run_pub = pub;
    cs_run_live_opts = *opt;
    cs_run_top_asked = top;
}

/* The job's output files of --top, made in DIR: never through a link; a
 * file of an earlier run replaced only when it is ours (a regular file of
 * this user with no other name). 0 with the two descriptors, or -1 with
 * a reason in why (nothing made). */
static int cs_run_out_open(const char *dir, int fd[2], char *why, size_t whylen)
{
    static const char *const names[2] = { CS_RUN_JOB_OUT, CS_RUN_JOB_ERR };
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        snprintf(why, whylen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    fd[0] = fd[1] = -1;
    for (int i = 0; i < 2; i++) {
        struct stat sb;
        if (fstatat(dfd, names[i], &sb, AT_SYMLINK_NOFOLLOW) == 0) {
            if (!S_ISREG(sb.st_mode) || sb.st_uid != geteuid() || sb.st_nlink != 1) {
                snprintf(why, whylen, "%s/%s exists and is not a job output of ours (%s): left alone", dir, names[i],
                         S_ISLNK(sb.st_mode)      ? "a symbolic link"
                         : !S_ISREG(sb.st_mode)   ? "not a regular file"
                         : sb.st_uid != geteuid() ? "another user's file"
                                                  : "a file with other names");
                goto bad;
            }
            if (unlinkat(dfd, names[i], 0) != 0 && errno != ENOENT) {
                snprintf(why, whylen, "%s/%s: %s", dir, names[i], strerror(errno));
                goto bad;
            }
        }
        /* O_EXCL with O_NOFOLLOW: a name planted since is refused, never followed */
        fd[i] = openat(dfd, names[i], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd[i] < 0) {
            snprintf(why, whylen, "%s/%s: %s", dir, names[i], strerror(errno));
            goto bad;
        }
    }
    close(dfd);
    return 0;
bad:
    for (int i = 0; i < 2; i++)
        if (fd[i] >= 0) {
            close(fd[i]);
            unlinkat(dfd, names[i], 0); /* made here, just now */
            fd[i] = -1;
        }
    close(dfd);
    return -1;
}

typedef struct cs_run_view {
    cs_live *l;
    const char *dir;
    int *status;
    int reaped;     /* the job ended (its status in *status) */
    char err[1200]; /* the metrics' first failure, said after the view */
    char title[PATH_MAX + 256];
} cs_run_view;

/* After every refresh of the view: the metrics, and whether the job ended. */
static void cs_run_view_refreshed(void *arg)
{
    cs_run_view *v = arg;
    char err[1200];
    if (cs_live_pub_refresh(cs_run_pub, v->l, err, sizeof err) != 0 && !v->err[0])
        snprintf(v->err, sizeof v->err, "%s", err);
    if (!v->reaped && waitpid(cs_child, v->status, WNOHANG) == cs_child)
        v->reaped = 1;
}

static void cs_run_view_ready(void *arg)
{
    (void)arg;
    cs_live_pub_answer(cs_run_pub);
}

static const char *cs_run_view_title(void *arg)
{
    cs_run_view *v = arg;
    int st = *v->status;
    if (!v->reaped)
        snprintf(v->title, sizeof v->title, "job running; its output: %s/" CS_RUN_JOB_OUT ", " CS_RUN_JOB_ERR, v->dir);
    else
        snprintf(v->title, sizeof v->title,
                 "job ended (exit status %d); q builds the trace; its output: %s/" CS_RUN_JOB_OUT ", " CS_RUN_JOB_ERR,
                 WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0), v->dir);
    return v->title;
}

/* --top: the view of the job in this terminal until q; the job runs on.
 * Returns 1 when the job ended meanwhile (its status in *status). */
static int cs_run_view_show(cs_live *l, const char *dir, int *status)
{
#ifdef HAVE_NCURSES
    cs_run_view v = { .l = l, .dir = dir, .status = status };
    cs_tui_top_hooks hk = { .refreshed = cs_run_view_refreshed,
                            .fd = cs_live_pub_fd(cs_run_pub),
                            .ready = cs_run_view_ready,
                            .title = cs_run_view_title,
                            .arg = &v };
    int rc = cs_tui_top(l, 1.0, CS_LIVE_BY_RANK, &hk);
    if (v.err[0])
        cs_note("run: metrics: %s", v.err);
    /* a termination request that ended the view goes on to the job, as
     * without the view (^C reached the job from the terminal itself) */
    if (!v.reaped && (rc == 128 + SIGTERM || rc == 128 + SIGHUP))
        kill(cs_child, rc - 128);
    if (!v.reaped)
        cs_note("run: the view is closed; the job runs on, its output going to %s/%s and %s/%s", dir, CS_RUN_JOB_OUT,
                dir, CS_RUN_JOB_ERR);
    return v.reaped;
#else
    (void)l, (void)dir, (void)status;
    return 0;
#endif
}

/* Wait for the job, following its logs meanwhile when asked to: the
 * metrics refreshed about once a second and served in between; with
 * --top (view), the view first. */
static void cs_run_wait(const char *dir, int traced, int view, int *status)
{
    cs_live *l = NULL;
    char err[1200];
    if (cs_run_pub && traced && !(l = cs_live_new(dir, &cs_run_live_opts, err, sizeof err)))
        cs_error("run: %s: the job runs without its live metrics%s", err, view ? " and view" : "");
    int told = 0, reaped = l && view && cs_run_view_show(l, dir, status);
    if (reaped && cs_live_poll(l, err, sizeof err) == 0) /* what was written since the view's last look */
        cs_live_pub_refresh(cs_run_pub, l, err, sizeof err);
    while (!reaped) {
        pid_t w = waitpid(cs_child, status, l ? WNOHANG : 0);
        if (w < 0 && errno == EINTR)
            continue;
        int done = w != 0;
        if (l) {
            if (cs_live_poll(l, err, sizeof err) == 0 && cs_live_pub_refresh(cs_run_pub, l, err, sizeof err) != 0 &&
                !told++)
                cs_note("run: metrics: %s", err);
        }
        if (done)
            break;
        cs_live_pub_wait(cs_run_pub, 1000);
    }
    if (l) {
        const cs_live_alarm *a;
        size_t n = cs_live_alarms(l, &a);
        cs_run_alarms = n ? calloc(n, sizeof *cs_run_alarms) : NULL;
        for (size_t i = 0; i < n; i++) {
            cs_note("live alarm: %s", a[i].text);
            if (!cs_run_alarms)
                continue;
            cs_store_alarm_row *w = &cs_run_alarms[cs_run_nalarms++];
            snprintf(w->kind, sizeof w->kind, "%s", a[i].kind == CS_LIVE_HANG ? "hang" : "slow");
            snprintf(w->subject, sizeof w->subject, "%s", a[i].subject);
            snprintf(w->comm, sizeof w->comm, "%s", a[i].comm ? a[i].comm_label : "");
            snprintf(w->name, sizeof w->name, "%s", a[i].name);
            w->rank = a[i].rank;
            w->peer = a[i].peer;
            w->step = a[i].step;
            w->raised = a[i].raised;
            w->until_step = a[i].active ? -1 : a[i].until;
            w->factor = a[i].factor;
            snprintf(w->text, sizeof w->text, "%s", a[i].text);
        }
        cs_live_free(l);
    }
    cs_live_pub_free(cs_run_pub);
    cs_run_pub = NULL;
}

/* The alarms raised while the job ran into its trace (live_alarms). */
static void cs_run_keep_alarms(const char *dir, int unmerged)
{
    char path[PATH_MAX + 16], err[1200];
    if (unmerged) {
        cs_note("run: the job is kept as rank stores: its %zu live alarm(s) are not stored", cs_run_nalarms);
        return;
    }
    snprintf(path, sizeof path, "%s/trace.db", dir);
    cs_store *st;
    if (cs_store_open(path, CS_STORE_WRITE, &st, err, sizeof err) != 0) {
        cs_error("run: the live alarms are not stored: %s", err);
        return;
    }
    if (cs_store_live_alarms_put(st, cs_run_alarms, cs_run_nalarms, err, sizeof err) != 0)
        cs_error("run: the live alarms are not stored: %s", err);
    cs_store_close(st);
}

static void cs_forward(int sig)
{
    if (cs_child > 0)
        kill(cs_child, sig);
}

int cs_run_job(char **launch, const char *out, const char *mpi, int callsites, int ingest, int ncclprof, int force,
               int merge, int wait)
{
    /* Set up the output folder; if we cannot, the job still runs. */
    char dir[PATH_MAX], why[PATH_MAX + 128];
    int traced = 1, locked = 0;
    if (cs_log_mkdirs(out) != 0 || !realpath(out, dir)) {
        cs_error("cannot create output folder %s: %s; running the job untraced", out, strerror(errno));
        traced = 0;
    } else if (cs_log_dir_safe(dir, force, why, sizeof why) != 0) {
        /* Another user's folder, or one every user may write to: someone
         * else could plant links there. */
        cs_error("%s; running the job untraced", why);
        traced = 0;
    } else if ((locked = cs_cli_lock("run", dir, wait)) != 0) {
        /* Another command's run in this folder: its logs stay, and this
         * job does not start (it would write into them). */
        if (locked > 0)
            return 1;
        cs_error("run: running the job untraced");
        traced = 0;
    } else if (cs_clean_dir(dir, why, sizeof why) != 0) {
        cs_error("%s; running the job untraced", why);
        traced = 0;
    } else {
        char logs[PATH_MAX + 8];
        snprintf(logs, sizeof logs, "%s/logs", dir);
        if (cs_log_mkdirs(logs) != 0 || access(logs, W_OK) != 0) {
            cs_error("cannot write to %s: %s; running the job untraced", logs, strerror(errno));
            traced = 0;
        } else if (cs_log_dir_safe(logs, 1, why, sizeof why) != 0) {
            cs_error("%s; running the job untraced", why);
            traced = 0;
        }
    }
    char preload[PATH_MAX + 64];
    snprintf(preload, sizeof preload, "%s/collscope-%s.so", cs_libdir(), mpi);
    if (traced && access(preload, R_OK) != 0) {
        cs_error("preload library %s not found (set COLLSCOPE_LIBDIR?); running the job untraced", preload);
        traced = 0;
    }
    if (traced) {
        const char *old = getenv("LD_PRELOAD");
        char *val = malloc(strlen(preload) + (old ? strlen(old) : 0) + 2);
        if (val) {
            sprintf(val, "%s%s%s", preload, old && *old ? ":" : "", old ? old : "");
            setenv("LD_PRELOAD", val, 1);
            free(val);
        }
        setenv("COLLSCOPE_DIR", dir, 1);
        /* Every process of this job writes this run id into its log, so
         * that logs of another run are never merged with them. */
        char run_id[CS_LOG_RUN_ID_MAX + 1];
        cs_new_run_id(run_id, sizeof run_id);
        if (run_id[0])
            setenv("COLLSCOPE_RUN_ID", run_id, 1);
        if (force)
            setenv("COLLSCOPE_FORCE", "1", 1);
        /* Each rank's log becomes its SQLite file after the job, here, in
         * parallel (or in `collscope ingest` after --no-ingest), rather than
         * in the ranks at exit: the job ends sooner and its processes never
         * hold the converter's memory. */
        setenv("COLLSCOPE_EXIT_CONVERT", "0", 0);
        if (!callsites)
            setenv("COLLSCOPE_CALLSITES", "0", 1);
        /* The preload is also NCCL's profiler plugin (algorithm, protocol,
         * channels, GPU times: nccl_coll); NCCL loads it only in processes
         * that use NCCL, and it answers only in traced ones. */
        if (ncclprof && !getenv("NCCL_PROFILER_PLUGIN"))
            setenv("NCCL_PROFILER_PLUGIN", preload, 1);
        if (strcmp(mpi, "openmpi") == 0)
            cs_forward_env_ompi();
    }

    /* --top: the view in this terminal, the job's output in files */
    int view = 0, outfd[2] = { -1, -1 }, nullfd = -1;
    if (cs_run_top_asked) {
#ifndef HAVE_NCURSES
        cs_note("run: --top: the view was not built (configure did not find ncursesw); running without it");
#else
        if (!isatty(0) || !isatty(1))
            cs_note("run: --top needs a terminal (stdin and stdout); running without the view");
        else if (!traced)
            cs_note("run: --top: the job is not traced; running without the view");
        else if (cs_run_out_open(dir, outfd, why, sizeof why) != 0)
            cs_error("run: --top: %s; running without the view, the job's output on the terminal", why);
        else if ((nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
            cs_error("run: --top: /dev/null: %s; running without the view", strerror(errno));
        else
            view = 1;
        if (!view && outfd[0] >= 0) {
            close(outfd[0]);
            close(outfd[1]);
        }
        if (view)
            cs_note("run: --top: the job's output goes to %s/%s and %s/%s; q leaves the view, the job runs on", dir,
                    CS_RUN_JOB_OUT, dir, CS_RUN_JOB_ERR);
#endif
    }

    cs_child = fork();
    if (cs_child < 0) {
        cs_error("cannot start %s: %s", launch[0], strerror(errno));
        return 127;
    }
    if (cs_child == 0) {
        /* with the view: the terminal is the view's (its keys too) */
        if (view && (dup2(nullfd, 0) < 0 || dup2(outfd[0], 1) < 0 || dup2(outfd[1], 2) < 0))
            _exit(127);
        execvp(launch[0], launch);
        cs_error("cannot run %s: %s", launch[0], strerror(errno));
        _exit(127);
    }
    /* The terminal's ^C reaches the job by itself; keep running to build
     * the trace of what it did. Termination requests are passed on. */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    signal(SIGTERM, cs_forward);
    signal(SIGHUP, cs_forward);
    int status = 0;
    if (view) {
        close(outfd[0]);
        close(outfd[1]);
        close(nullfd);
    }
    cs_run_wait(dir, traced, view, &status);
    struct timespec ended;
    clock_gettime(CLOCK_REALTIME, &ended);
    cs_ingest_job_end((int64_t)ended.tv_sec * 1000000000 + ended.tv_nsec);
    unsetenv("LD_PRELOAD");
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    if (!traced || !ingest)
        return rc;

    char cmdline[4096] = "";
    size_t w = 0;
    for (int i = 0; launch[i] && w < sizeof cmdline - 2; i++)
        w += (size_t)snprintf(cmdline + w, sizeof cmdline - w, "%s%s", i ? " " : "", launch[i]);
    cs_ingest_result r;
    int irc = cs_ingest_dir(dir, force, merge, cmdline, &r);
    if (irc < 0 && r.nologs) {
        /* the job ran, but no process of it called MPI, NCCL or CUDA through the
         * preload: say why it may be and what to do instead */
        cs_error("run: nothing was traced: no process of the job made an MPI, NCCL or CUDA call through the "
                 "preload. A PyTorch job on gloo (or another backend collscope does not wrap) makes none: "
                 "record it with torch.profiler and run `collscope import` on the traces, or run it on NCCL "
                 "(init_process_group(\"nccl\")); a launcher that clears LD_PRELOAD or a static binary hides "
                 "the calls (docs/guide.md, \"Where to start\")");
        return rc ? rc : CS_RUN_NOTHING_TRACED;
    }
    if (irc >= 0) {
        char dropped[64] = "", crashed[64] = "", damaged[64] = "";
        if (r.dropped)
            snprintf(dropped, sizeof dropped, ", %lld dropped", (long long)r.dropped);
        if (r.crashed)
            snprintf(crashed, sizeof crashed, ", %d recovered after a crash", r.crashed);
        if (r.damaged)
            snprintf(damaged, sizeof damaged, ", %d damaged logs", r.damaged);
        cs_note("%d processes, %lld spans%s%s%s -> %s/%s", r.logs - r.failed - r.other_run, (long long)r.spans, dropped,
                crashed, damaged, dir, r.unmerged ? "ranks (index.db)" : "trace.db");
        if (cs_run_nalarms)
            cs_run_keep_alarms(dir, r.unmerged);
    }
    free(cs_run_alarms);
    cs_run_alarms = NULL;
    cs_run_nalarms = 0;
    return rc;
}
