/* import.c: `collscope import`: the format table, and one import from
 * files to DIR/trace.db (import.h). Files are read by worker processes,
 * at most `jobs` at once, each into its own rank store; the parent checks
 * that the ranks make one job, merges their stores into a temporary file
 * in DIR, numbers unnumbered collectives, and renames it to trace.db. */
#include "config.h"
#include "common/fmt.h"
#include "common/msg.h"
#include "analyzer/formats/import.h"
#include "analyzer/formats/outfile.h"
#include "common/vec.h"
#include "libtrace/dirlock.h"
#include "libtrace/log.h"
#include "libtrace/store.h"
#include "libtrace/store_bulk.h"
#include "libtrace/store_comms.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const cs_import_format cs_import_table[] = {
    { .name = "kineto",
      .summary = "PyTorch profiler traces (Kineto's Chrome-trace JSON, one file per rank; .json or .json.gz)",
      .read = cs_import_kineto_read,
      .accepts = cs_import_kineto_accepts },
};
#define CS_NIMPORT (sizeof cs_import_table / sizeof cs_import_table[0])

const cs_import_format *cs_import_find(const char *name)
{
    for (size_t i = 0; i < CS_NIMPORT; i++)
        if (strcmp(cs_import_table[i].name, name) == 0)
            return &cs_import_table[i];
    return NULL;
}

static const char *cs_import_name(size_t i, const void *arg)
{
    (void)arg;
    return cs_import_table[i].name;
}

/* The formats' names into buf: "a, b or c", or with bar "a|b|c". */
static const char *cs_import_names_sep(char *buf, size_t len, int bar)
{
    return cs_fmt_names(buf, len, CS_NIMPORT, cs_import_name, NULL, bar);
}

const char *cs_import_names(char *buf, size_t len)
{
    return cs_import_names_sep(buf, len, 0);
}

const char *cs_import_values(char *buf, size_t len)
{
    return cs_import_names_sep(buf, len, 1);
}

/* What a file that is not a regular one is, for messages. */
static const char *cs_import_file_kind(unsigned mode)
{
    return S_ISFIFO(mode)   ? "a FIFO"
           : S_ISDIR(mode)  ? "a folder"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
           : S_ISLNK(mode)  ? "a symbolic link"
                            : "not a file";
}

/* One input file and what became of it. */
typedef struct cs_imp_file {
    char *path;
    char db[4096];
    int status; /* enum cs_import_status, or -1 not yet read */
    int kept;
    cs_import_rank_info info;
    char msg[1024];
} cs_imp_file;

typedef struct cs_imp_list {
    cs_imp_file *a;
    size_t n, cap;
} cs_imp_list;

static int cs_imp_add(cs_imp_list *l, const char *path)
{
    if (CS_VEC_RESERVE(l->a, l->cap, l->n + 1) != 0)
        return -1;
    cs_imp_file *f = &l->a[l->n];
    memset(f, 0, sizeof *f);
    f->status = -1;
    if (!(f->path = strdup(path)))
        return -1;
    l->n++;
    return 0;
}

/* Add path as a file left out before reading: status and message set. */
static int cs_imp_add_refused(cs_imp_list *l, const char *path, const char *why)
{
    if (cs_imp_add(l, path) != 0)
        return -1;
    cs_imp_file *f = &l->a[l->n - 1];
    f->status = CS_IMPORT_FAILED;
    f->info.rank = -1;
    snprintf(f->msg, sizeof f->msg, "%s: %s: not read", path, why);
    return 0;
}

static int cs_strp_order(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files of a folder the format accepts, in name order. */
static int cs_imp_add_dir(cs_imp_list *l, const cs_import_format *fmt, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        cs_error("import: %s: %s", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || !fmt->accepts(de->d_name))
            continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        if (CS_VEC_RESERVE(names, cap, n + 1) != 0 || !(names[n] = strdup(p))) {
            rc = -1;
            break;
        }
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cs_strp_order);
    /* a name of the format's that is no regular file (a FIFO, which a
     * read would wait on forever; a folder) is named as left out */
    for (size_t i = 0; i < n; i++) {
        struct stat sb;
        if (rc == 0) {
            int e = stat(names[i], &sb) != 0 ? errno : 0;
            if (e)
                rc = cs_imp_add_refused(l, names[i], strerror(e));
            else if (!S_ISREG(sb.st_mode)) {
                char why[64];
                snprintf(why, sizeof why, "not a regular file (%s)", cs_import_file_kind(sb.st_mode));
                rc = cs_imp_add_refused(l, names[i], why);
            } else
                rc = cs_imp_add(l, names[i]);
            if (rc != 0)
                cs_error("import: %s: out of memory listing the folder", dir);
        }
        free(names[i]);
    }
    free(names);
    if (rc == 0 && n == 0) {
        cs_error("import: %s: no %s trace files in it (*.json, *.json.gz)", dir, fmt->name);
        return -1;
    }
    return rc;
}

/* Read file f in a worker: its result travels back in a small file. */
static void cs_imp_child(const cs_import_format *fmt, cs_imp_file *f, const char *res, const cs_import_opts *o)
{
    /* a worker ends with its import, however the import ends (its
     * temporary folder is then removed by the import or by the next one) */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    f->status = fmt->read(f->path, f->db, o, &f->info, f->msg, sizeof f->msg);
    FILE *out = fopen(res, "wb");
    if (!out || fwrite(f, sizeof *f, 1, out) != 1)
        _exit(1);
    if (fclose(out) != 0)
        _exit(1);
    _exit(0);
}

static int cs_imp_collect(cs_imp_file *f, const char *res)
{
    FILE *in = fopen(res, "rb");
    cs_imp_file r;
    int ok = in && fread(&r, sizeof r, 1, in) == 1;
    if (in)
        fclose(in);
    unlink(res);
    if (!ok) {
        f->status = CS_IMPORT_FAILED;
        snprintf(f->msg, sizeof f->msg, "%s: the reader stopped without a result (killed? out of memory?)", f->path);
        return 0;
    }
    f->status = r.status;
    f->info = r.info;
    memcpy(f->msg, r.msg, sizeof f->msg);
    return 0;
}

/* Run the readers, at most jobs at once. */
static void cs_imp_read_all(const cs_import_format *fmt, cs_imp_list *l, const char *tmp, const cs_import_opts *o,
                            int jobs)
{
    pid_t *pids = calloc(l->n ? l->n : 1, sizeof *pids);
    size_t next = 0, running = 0;
    for (size_t i = 0; i < l->n; i++)
        snprintf(l->a[i].db, sizeof l->a[i].db, "%s/file-%06zu.db", tmp, i);
    while (next < l->n || running) {
        while (pids && next < l->n && running < (size_t)jobs) {
            if (l->a[next].status != -1) { /* left out before reading */
                next++;
                continue;
            }
            char res[4200];
            snprintf(res, sizeof res, "%s/file-%06zu.res", tmp, next);
            fflush(NULL);
            pid_t p = cs_outfile_fork(); /* killed first if a signal ends the import */
            if (p == 0)
                cs_imp_child(fmt, &l->a[next], res, o);
            if (p < 0) { /* no process: read it here */
                l->a[next].status = fmt->read(l->a[next].path, l->a[next].db, o, &l->a[next].info, l->a[next].msg,
                                              sizeof l->a[next].msg);
                next++;
                continue;
            }
            pids[next++] = p;
            running++;
        }
        if (!pids) { /* out of memory: one at a time, here */
            for (; next < l->n; next++)
                if (l->a[next].status == -1)
                    l->a[next].status = fmt->read(l->a[next].path, l->a[next].db, o, &l->a[next].info, l->a[next].msg,
                                                  sizeof l->a[next].msg);
            break;
        }
        int ws;
        pid_t p = waitpid(-1, &ws, 0);
        if (p < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (size_t i = 0; i < l->n; i++)
            if (pids[i] == p) {
                cs_outfile_guard_child(p, 0);
                char res[4200];
                snprintf(res, sizeof res, "%s/file-%06zu.res", tmp, i);
                cs_imp_collect(&l->a[i], res);
                pids[i] = 0;
                running--;
                break;
            }
    }
    free(pids);
}

/* The most common value of v over the files read, ignoring `none`. */
static int cs_imp_mode_int(const cs_imp_list *l, int which)
{
    int best = -1, bestn = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (!l->a[i].kept)
            continue;
        int v = which ? l->a[i].info.world_size : l->a[i].info.rank;
        int c = 0;
        for (size_t j = 0; j < l->n; j++)
            c += l->a[j].kept && (which ? l->a[j].info.world_size : l->a[j].info.rank) == v;
        if (c > bestn)
            bestn = c, best = v;
    }
    return best;
}

static const char *cs_imp_mode_id(const cs_imp_list *l)
{
    const char *best = "";
    size_t bestn = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (!l->a[i].kept || !l->a[i].info.trace_id[0])
            continue;
        size_t c = 0;
        for (size_t j = 0; j < l->n; j++)
            c += l->a[j].kept && strcmp(l->a[j].info.trace_id, l->a[i].info.trace_id) == 0;
        if (c > bestn)
            bestn = c, best = l->a[i].info.trace_id;
    }
    /* PyTorch gives each process a trace id of its own: ids compare jobs
     * only where the files share one */
    return bestn >= 2 ? best : "";
}

/* One line for the records file f's reader left out for bad values, by
 * kind and fault: 1 when there were any. */
static int cs_imp_bad_summary(const cs_imp_file *f)
{
    static const char *const kind[CS_IMPORT_BK_N] = {
        [CS_IMPORT_BK_COMM] = "communication records",
        [CS_IMPORT_BK_KERNEL] = "NCCL kernels",
        [CS_IMPORT_BK_STEP] = "steps",
        [CS_IMPORT_BK_COMPUTE] = "compute spans",
    };
    static const char *const why[CS_IMPORT_BW_N] = {
        [CS_IMPORT_BW_TS] = "no valid ts",
        [CS_IMPORT_BW_DUR] = "no valid dur",
        [CS_IMPORT_BW_ARGS] = "no args",
        [CS_IMPORT_BW_SEQ] = "a Seq that is no whole number",
        [CS_IMPORT_BW_NELEMS] = "a msg nelems that is no size",
    };
    char line[1024];
    size_t len = 0;
    int64_t total = 0;
    for (int k = 0; k < CS_IMPORT_BK_N; k++) {
        int first = 1;
        for (int w = 0; w < CS_IMPORT_BW_N; w++) {
            int64_t c = f->info.bad[k][w];
            if (!c)
                continue;
            total += c;
            /* "communication records: 2 with no valid ts, 1 with ...; steps: ..." */
            if (len < sizeof line)
                len += (size_t)snprintf(line + len, sizeof line - len, "%s%s%s%lld with %s",
                                        len ? (first ? "; " : ", ") : "", first ? kind[k] : "", first ? ": " : "",
                                        (long long)c, why[w]);
            first = 0;
        }
    }
    if (!total)
        return 0;
    cs_error("import: %s: %lld record%s left out for bad values (%s)", f->path, (long long)total, total == 1 ? "" : "s",
             line);
    return 1;
}

typedef struct cs_imp_dis {
    cs_comms names;
    int loaded;
} cs_imp_dis;

static int cs_imp_disagree(int64_t comm, size_t agreed, const char *ranks, void *arg)
{
    cs_imp_dis *d = arg;
    char name[CS_COMMS_DISPLAY_MAX];
    cs_store_comms_label(d->loaded ? &d->names : NULL, comm, name, sizeof name);
    cs_error("import: group %s: the ranks disagree on its collectives (no Seq recorded): %zu on most ranks, but "
             "rank %s; its collectives are left unmatched",
             name, agreed, ranks);
    return 0;
}

static void cs_imp_rmtmp(const char *tmp, const cs_imp_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->a[i].db[0])
            unlink(l->a[i].db);
    char p[4200];
    static const char *const left[] = { "trace.db", "trace.db-wal", "trace.db-shm", "trace.db-journal" };
    for (size_t i = 0; i < sizeof left / sizeof left[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", tmp, left[i]);
        unlink(p);
    }
    rmdir(tmp);
}

/* The temporary folders (DIR/.import-PID) of imports that were killed:
 * their regular files removed (never through a link), then the folder.
 * Called with DIR's lock held: an import holds it, and so do its workers
 * (they share its descriptor), so no live import holds any of them, even
 * one whose pid a new process has taken since. */
static void cs_imp_rm_stale(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char *end;
        if (strncmp(de->d_name, ".import-", 8) != 0)
            continue;
        long pid = strtol(de->d_name + 8, &end, 10);
        if (end == de->d_name + 8 || *end || pid <= 0)
            continue;
        int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            continue;
        DIR *sd = fdopendir(fd);
        if (!sd) {
            close(fd);
            continue;
        }
        struct dirent *f;
        struct stat sb;
        while ((f = readdir(sd)) != NULL)
            if (fstatat(fd, f->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode))
                unlinkat(fd, f->d_name, 0);
        closedir(sd);
        if (unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) == 0)
            cs_note("import: %s/%s: removed: the temporary folder of an import that was killed", dir, de->d_name);
    }
    closedir(d);
}

int cs_import_run(const cs_import_format *fmt, char **files, int nfiles, const char *dir, const cs_import_opts *o,
                  int jobs)
{
    cs_imp_list l = { NULL, 0, 0 };
    int rc = CS_IMPORT_EXIT_NONE;
    char tmp[4096] = "", err[1024] = "";
    for (int i = 0; i < nfiles; i++) {
        struct stat sb; /* stat, not open: a FIFO is never waited on */
        if (stat(files[i], &sb) != 0) {
            cs_error("import: %s: %s", files[i], strerror(errno));
            goto out_usage;
        }
        int r;
        if (S_ISDIR(sb.st_mode)) {
            if (cs_imp_add_dir(&l, fmt, files[i]) != 0)
                goto out_usage;
            continue;
        } else if (!S_ISREG(sb.st_mode)) {
            char why[64];
            snprintf(why, sizeof why, "not a regular file (%s)", cs_import_file_kind(sb.st_mode));
            r = cs_imp_add_refused(&l, files[i], why);
        } else
            r = cs_imp_add(&l, files[i]);
        if (r != 0) {
            cs_error("import: %s: out of memory listing the files to import", files[i]);
            goto out;
        }
    }
    /* the output folder: made if need be, never through a link */
    struct stat sb;
    if (cs_log_mkdirs(dir) != 0 || lstat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        cs_error("import: %s: cannot make or use the output folder (%s)", dir,
                 errno ? strerror(errno) : "a symbolic link or a file");
        goto out;
    }
    if (sb.st_uid != geteuid()) {
        cs_error("import: %s belongs to another user: refusing to write there", dir);
        goto out;
    }
    /* The folder is this import's alone (a run writing its logs there, or
     * another import, is left alone); the lock goes with the process. */
    int lk = cs_dirlock_take(dir, 0, err, sizeof err);
    if (lk == 1 && o->wait) {
        cs_note("import: %s; waiting for it to end (--wait)", err);
        lk = cs_dirlock_take(dir, 1, err, sizeof err);
    }
    if (lk != 0) {
        cs_error("import: %s%s", err, lk == 1 ? "; wait for it to end (or add --wait), or give another folder" : "");
        goto out;
    }
    cs_imp_rm_stale(dir);
    snprintf(tmp, sizeof tmp, "%s/.import-%ld", dir, (long)getpid());
    /* named before it is made: a signal removes it (and kills the workers) */
    if (cs_outfile_guard(tmp, 1) != 0) {
        cs_error("import: %s: too many temporary folders", tmp);
        tmp[0] = 0;
        goto out;
    }
    if (mkdir(tmp, 0700) != 0) {
        cs_outfile_unguard(tmp);
        cs_error("import: %s: %s", tmp, strerror(errno));
        tmp[0] = 0;
        goto out;
    }
    if (jobs < 1)
        jobs = 1;
    cs_imp_read_all(fmt, &l, tmp, o, jobs);

    int bad = 0;
    for (size_t i = 0; i < l.n; i++) {
        cs_imp_file *f = &l.a[i];
        f->kept = f->status == CS_IMPORT_OK;
        if (!f->kept) {
            cs_error("import: %s", f->msg);
            bad++;
        } else if (cs_imp_bad_summary(f))
            bad++;
    }
    /* one job: the world size and trace id most files give */
    int world = cs_imp_mode_int(&l, 1);
    const char *tid = cs_imp_mode_id(&l);
    char tidbuf[128];
    snprintf(tidbuf, sizeof tidbuf, "%s", tid);
    for (size_t i = 0; i < l.n; i++) {
        cs_imp_file *f = &l.a[i];
        if (!f->kept)
            continue;
        if (f->info.world_size != world) {
            cs_error("import: %s: world size %d, but the job's (the other files') is %d: another job? not imported",
                     f->path, f->info.world_size, world);
            f->kept = 0, bad++;
        } else if (tidbuf[0] && f->info.trace_id[0] && strcmp(f->info.trace_id, tidbuf) != 0) {
            cs_error("import: %s: trace id %s, but the job's (the other files') is %s: another job? not imported",
                     f->path, f->info.trace_id, tidbuf);
            f->kept = 0, bad++;
        } else if (world > 0 && f->info.rank >= world) {
            cs_error("import: %s: rank %d, but the world size is %d: not imported", f->path, f->info.rank, world);
            f->kept = 0, bad++;
        } else
            for (size_t j = 0; j < i; j++)
                if (l.a[j].kept && l.a[j].info.rank == f->info.rank) {
                    cs_error("import: %s: rank %d again (already from %s): not imported", f->path, f->info.rank,
                             l.a[j].path);
                    f->kept = 0, bad++;
                    break;
                }
    }
    size_t nkept = 0, first = l.n;
    for (size_t i = 0; i < l.n; i++)
        if (l.a[i].kept) {
            nkept++;
            if (first == l.n)
                first = i;
        }
    if (!nkept) {
        cs_error("import: no file could be imported: %s/trace.db not written", dir);
        goto out;
    }
    int missing = 0;
    if (world > 0) {
        char list[512] = "";
        size_t len = 0;
        /* the ranks no file gives, as ranges ("1, 5-127"); a rank whose
         * file was left out (its message above) is missing but not listed */
        int run0 = -1, unknown = 0;
        for (size_t i = 0; i < l.n; i++)
            unknown += !l.a[i].kept && l.a[i].info.rank < 0;
        for (int r = 0; r <= world; r++) {
            int have = r == world, named = 0;
            for (size_t i = 0; i < l.n && !have; i++) {
                have = l.a[i].kept && l.a[i].info.rank == r;
                named |= !l.a[i].kept && l.a[i].info.rank == r;
            }
            missing += !have;
            if (!have && !named) {
                if (run0 < 0)
                    run0 = r;
            } else if (run0 >= 0) {
                if (len + 32 < sizeof list)
                    len +=
                        r - 1 > run0
                            ? (size_t)snprintf(list + len, sizeof list - len, "%s%d-%d", len ? ", " : "", run0, r - 1)
                            : (size_t)snprintf(list + len, sizeof list - len, "%s%d", len ? ", " : "", run0);
                else if (len + 6 < sizeof list && strcmp(list + len - 3, "...") != 0)
                    len += (size_t)snprintf(list + len, sizeof list - len, ", ...");
                run0 = -1;
            }
        }
        if (missing && len && unknown)
            cs_error("import: %d of %d ranks missing (no file imported gives rank %s; the %d file%s left out above "
                     "may): the trace holds the other %d",
                     missing, world, list, unknown, unknown == 1 ? "" : "s", world - missing);
        else if (missing && len)
            cs_error("import: %d of %d ranks missing (no file gives rank %s): the trace holds the other %d", missing,
                     world, list, world - missing);
        else if (missing)
            cs_error("import: %d of %d ranks missing (their files were left out above): the trace holds the other %d",
                     missing, world, world - missing);
    }

    /* merge into DIR/.import-PID/trace.db, then rename it into place */
    char job_path[4200];
    snprintf(job_path, sizeof job_path, "%s/trace.db", tmp);
    cs_store *job = NULL;
    int cr = cs_store_create_from(job_path, l.a[first].db, &job, err, sizeof err);
    if (cr < 0) {
        cs_error("import: %s", err);
        goto out;
    }
    if (cr == 1 && (cs_store_create(job_path, &job, err, sizeof err) != 0 ||
                    cs_store_merge(job, l.a[first].db, err, sizeof err) != 0)) {
        cs_error("import: %s", err);
        if (job)
            cs_store_close(job);
        goto out;
    }
    for (size_t i = first + 1; i < l.n; i++)
        if (l.a[i].kept && cs_store_merge(job, l.a[i].db, err, sizeof err) != 0) {
            cs_error("import: %s: %s", l.a[i].path, err);
            cs_store_close(job);
            goto out;
        }
    cs_imp_dis dis;
    memset(&dis, 0, sizeof dis);
    dis.loaded = cs_store_comms_load(job, &dis.names) == 0;
    int ndis = 0;
    int nr = cs_store_bulk_number_seqs(job, cs_imp_disagree, &dis, &ndis);
    if (dis.loaded)
        cs_store_comms_free(&dis.names);
    if (nr != 0) {
        cs_error("import: %s: cannot number the collectives", job_path);
        cs_store_close(job);
        goto out;
    }
    char cmd[64];
    snprintf(cmd, sizeof cmd, "collscope import (%s)", fmt->name);
    if (cs_store_finish(job, cmd, err, sizeof err) != 0) {
        cs_error("import: %s", err);
        cs_store_close(job);
        goto out;
    }
    int64_t spans = 0, colls = 0, kernels = 0, linked = 0, steps = 0, compute = 0, bytes = 0;
    for (size_t i = 0; i < l.n; i++)
        if (l.a[i].kept) {
            spans += l.a[i].info.spans;
            colls += l.a[i].info.collectives + l.a[i].info.p2p;
            kernels += l.a[i].info.kernels;
            linked += l.a[i].info.gpu_linked;
            steps += l.a[i].info.steps;
            compute += l.a[i].info.compute;
            bytes += l.a[i].info.bytes_read;
        }
    char num[64];
    cs_store_meta_set(job, "import_format", fmt->name);
    cs_store_meta_set(job, "import_format_version", l.a[first].info.version);
    cs_store_meta_set(job, "import_backend", l.a[first].info.backend[0] ? l.a[first].info.backend : "unknown");
    if (tidbuf[0])
        cs_store_meta_set(job, "import_trace_id", tidbuf);
    snprintf(num, sizeof num, "%zu of %zu", nkept, l.n);
    cs_store_meta_set(job, "import_files", num);
    cs_store_close(job);
    char final[4200], side[4300];
    snprintf(final, sizeof final, "%s/trace.db", dir);
    static const char *const sides[] = { "-wal", "-shm", "-journal" };
    for (size_t i = 0; i < 3; i++) {
        snprintf(side, sizeof side, "%s%s", final, sides[i]);
        unlink(side);
    }
    if (rename(job_path, final) != 0) {
        cs_error("import: cannot rename %s to %s: %s", job_path, final, strerror(errno));
        goto out;
    }
    cs_msg_out("imported %zu of %zu files (%s, ranks of a world of %d), %lld spans: %lld communication, %lld "
               "steps, %lld compute, %lld kernels (%lld NCCL ones linked) from %.1f MB of JSON -> %s",
               nkept, l.n, fmt->name, world, (long long)spans, (long long)colls, (long long)steps, (long long)compute,
               (long long)kernels, (long long)linked, (double)bytes / 1e6, final);
    rc = bad || missing || ndis ? CS_IMPORT_EXIT_PARTIAL : CS_IMPORT_EXIT_OK;
    goto out;
out_usage:
    rc = CS_IMPORT_EXIT_USAGE;
out:
    if (tmp[0]) {
        cs_imp_rmtmp(tmp, &l);
        cs_outfile_unguard(tmp);
    }
    for (size_t i = 0; i < l.n; i++)
        free(l.a[i].path);
    free(l.a);
    return rc;
}
