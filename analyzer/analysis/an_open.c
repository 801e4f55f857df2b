/* an_open.c: a trace source opened for the analysis and its clients: a
 * trace (recovered first when damaged) or a job of rank stores, with a
 * current stored analysis when asked; and the analysis of one trace by
 * this process. */
#include "config.h"
#include "analyzer/analysis/analysis.h"
#include "common/path.h"
#include "common/msg.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void cs_analysis_note(FILE *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The job of DIR/index.db, its analysis taken from DIR/results.db when
 * that is of this job, else run (force: always) and saved there (a save
 * that fails is the failure when save, else a note on log). A rank store
 * left out is named in one note on log. */
static cs_store *cs_analysis_open_job(const char *dir, int force, int analyse, int save, FILE *log, char *err,
                                      size_t errlen)
{
    cs_store *st;
    int nfaults;
    if (cs_store_open_job(dir, &st, &nfaults, err, errlen) != 0)
        return NULL;
    if (nfaults) {
        char from[8], note[3300];
        cs_store_recovered(st, from, sizeof from, note, sizeof note);
        cs_analysis_note(log, "%s: %s; analysing the others", cs_store_path(st), note);
    }
    char unk[256];
    if (cs_store_job_run_unknown(st, unk, sizeof unk))
        cs_analysis_note(log, "%s: %s", cs_store_path(st), unk);
    if (cs_store_analysis_check_input(st, err, errlen) != 0) {
        cs_store_close(st);
        return NULL;
    }
    char results[4200];
    snprintf(results, sizeof results, "%s/results.db", dir);
    int loaded = !force && cs_store_analysis_load(st, results) == 1;
    if (!analyse || (loaded && cs_store_analysis_current(st) == 1))
        return st;
    if (cs_an_run(st, log, err, errlen) != 0) {
        if (!err[0])
            snprintf(err, errlen, "analysis failed");
        cs_store_close(st);
        return NULL;
    }
    char why[1024];
    if (cs_store_analysis_save(st, results, why, sizeof why) != 0) {
        if (save) {
            snprintf(err, errlen, "%s", why);
            cs_store_close(st);
            return NULL;
        }
        cs_analysis_note(log, "the analysis is not saved: %s", why);
    }
    return st;
}

cs_store *cs_analysis_open_trace(const cs_source *src, int mode, char *err, size_t errlen)
{
    if (src->kind == CS_SOURCE_JOB)
        return cs_analysis_open_job(src->path, 0, 0, 0, NULL, err, errlen);
    cs_store *st;
    if (cs_store_open(src->path, mode, &st, err, errlen) != 0)
        return NULL;
    if (cs_store_analysis_check_input(st, err, errlen) != 0) {
        cs_store_close(st);
        return NULL;
    }
    return st;
}

/* One note line on log, as the collscope command prints its notes. */
static void cs_analysis_note(FILE *log, const char *fmt, ...)
{
    if (!log)
        return;
    va_list ap;
    va_start(ap, fmt);
    cs_msg_vline(log, "collscope: ", fmt, ap);
    va_end(ap);
}

/* Where the recovered copy of the trace at path goes: beside it, named
 * STEM.recovered.db; "" (a private file, removed when closed) when the
 * folder cannot be written or that name is taken by anything but an
 * earlier recovery of collscope's. */
static void cs_analysis_recovery_path(const char *path, char *out, size_t len)
{
    size_t n = strlen(path);
    if (n > 3 && strcmp(path + n - 3, ".db") == 0)
        n -= 3;
    snprintf(out, len, "%.*s.recovered.db", (int)n, path);
    struct stat sb, src;
    char dir[4300];
    cs_path_folder(out, dir, sizeof dir);
    if (access(dir, W_OK) != 0)
        out[0] = '\0';
    if (out[0] && lstat(out, &sb) == 0) {
        cs_store *old = NULL;
        char from[8], note[8], e[256];
        int ours = S_ISREG(sb.st_mode) && stat(path, &src) == 0 &&
                   !(src.st_dev == sb.st_dev && src.st_ino == sb.st_ino) &&
                   cs_store_open(out, CS_STORE_READ, &old, e, sizeof e) == 0 &&
                   cs_store_recovered(old, from, sizeof from, note, sizeof note) == 1;
        cs_store_close(old);
        if (!ours)
            out[0] = '\0';
    }
}

/* A trace with damaged pages: what can still be read of it, copied into
 * a store of its own (the damaged file is only read), with one note on log
 * that names the file and says what was kept and lost. */
static cs_store *cs_analysis_recover(cs_store *damaged, const char *what, FILE *log, char *err, size_t errlen)
{
    char path[4200], out[4300];
    snprintf(path, sizeof path, "%s", cs_store_path(damaged));
    cs_analysis_recovery_path(path, out, sizeof out);
    cs_store_recovery r;
    cs_store *st = NULL;
    if (cs_store_recover(damaged, out[0] ? out : NULL, &st, &r, err, errlen) != 0) {
        char why[1024];
        snprintf(why, sizeof why, "%s", err);
        snprintf(err, errlen, "%s: damaged (%s), and what can be read of it cannot be copied: %s", path, what, why);
        return NULL;
    }
    cs_analysis_note(log, "%s: damaged (%s); analysing what could be read of it, copied into %s: %s", path, what,
                     out[0] ? out : "a private file", r.summary);
    return st;
}

cs_store *cs_analysis_open(const cs_source *src, int force, int save, FILE *log, char *err, size_t errlen)
{
    err[0] = '\0';
    char what[512];
    if (src->kind == CS_SOURCE_JOB)
        return cs_analysis_open_job(src->path, force, 1, save, log, err, errlen);
    const char *path = src->path;
    cs_store *st;
    if (cs_store_open(path, CS_STORE_READ, &st, err, errlen) != 0)
        return NULL;
    if (cs_store_check_pages(st, what, sizeof what) == 1) {
        cs_store *rec = cs_analysis_recover(st, what, log, err, errlen);
        cs_store_close(st);
        if (!rec)
            return NULL;
        st = rec;
        if (cs_store_analysis_check_input(st, err, errlen) != 0 || cs_an_run(st, log, err, errlen) != 0) {
            if (!err[0])
                snprintf(err, errlen, "analysis failed");
            cs_store_close(st);
            return NULL;
        }
        return st;
    }
    /* A stored analysis of these spans: their values were checked when it
     * was made (an analysis is stored only of spans that pass), and the
     * pages were just checked; a scan of every span for bad values again
     * would double the time of each report. */
    if (!force && !cs_store_fault(st) && cs_store_analysis_current(st) == 1)
        return st;
    if (cs_store_analysis_check_input(st, err, errlen) != 0) {
        cs_store_close(st);
        return NULL;
    }
    if (!force && cs_store_analysis_current(st) == 1)
        return st;
    cs_store_close(st);
    struct stat sb;
    if (lstat(path, &sb) != 0 && errno == ENOENT) {
        /* not read-only: gone since it was opened (a run or an ingest
         * replacing it); the caller may know who */
        snprintf(err, errlen, "%s: removed while it was read (replaced by a run or an ingest?)", path);
        return NULL;
    }
    if (cs_store_sql_writable(path)) {
        st = cs_analysis_open_trace(src, CS_STORE_WRITE, err, errlen);
    } else if (save) {
        snprintf(err, errlen,
                 "%s: read-only here, so the analysis cannot be saved into it; copy it to a writable folder", path);
        return NULL;
    } else {
        /* Reading a trace never needs write access to it. */
        cs_analysis_note(log, "%s is read-only here: analysing a private copy (the results are not saved into it)",
                         path);
        if (cs_store_open_scratch(path, &st, err, errlen) != 0)
            return NULL;
    }
    if (!st)
        return NULL;
    if (cs_an_run(st, log, err, errlen) != 0) {
        if (!err[0])
            snprintf(err, errlen, "analysis failed");
        cs_store_close(st);
        return NULL;
    }
    return st;
}

void cs_analysis_map_bound(FILE *log)
{
    if (cs_store_map_bound() < 0 && log)
        fprintf(log, "collscope: COLLSCOPE_MAPPED_MB=%s is not a number of megabytes: the default bound, %d MB\n",
                getenv("COLLSCOPE_MAPPED_MB"), CS_STORE_MAPPED_MB);
}

int cs__an_open_run(const cs_source *src, int force, FILE *log, char *err, size_t errlen)
{
    cs_analysis_map_bound(log);
    cs_store *st = cs_analysis_open(src, force, 1, log, err, errlen);
    if (!st)
        return -1;
    char notes[2048] = "", from[8], note[8];
    cs_store_meta_get(st, "analysis_notes", notes, sizeof notes);
    /* one line each: the notes are stored joined by newlines, and a
     * message's control characters are printed escaped */
    for (char *l = notes, *nl; *l; l = nl ? nl + 1 : l + strlen(l)) {
        nl = strchr(l, '\n');
        if (nl)
            *nl = '\0';
        if (*l)
            cs_analysis_note(log, "%s", l);
    }
    int partial = cs_store_recovered(st, from, sizeof from, note, sizeof note);
    cs_store_close(st);
    return partial;
}

/* ---- the page check beside the reader ---- */

/* The tables a reader of a current stored analysis (the report) does not
 * read, or reads only a few rows of through their indexes (the spans:
 * their count, the flagged ones, each rank's last), so their pages are
 * not checked for it. The analysis it reads was made of the trace just
 * after a check of all of its pages (cs_analysis_open); a damaged page
 * of a skipped table that the reader reads fails that read, and the
 * reader then takes the careful way (cs_analysis_check_wait). */
static const char *const cs_analysis_unread[] = { "span", "waits", "p2p", "instances", NULL };

struct cs_analysis_check {
    pthread_t th;
    char path[4200];
    int rc; /* cs_store_check_pages: 0 intact, 1 damaged, -1 fault or unreadable */
};

static void *cs_analysis_check_main(void *arg)
{
    cs_analysis_check *c = arg;
    cs_store *st;
    char err[512], what[512];
    c->rc = -1;
    if (cs_store_open(c->path, CS_STORE_READ, &st, err, sizeof err) == 0) {
        c->rc = cs_store_check_tables(st, cs_analysis_unread, what, sizeof what);
        /* a check that ran out of a resource decides nothing here: the
         * caller's synchronous open says so */
        if (c->rc == 0 && cs_store_fault(st))
            c->rc = -1;
        cs_store_close(st);
    }
    return NULL;
}

cs_store *cs_analysis_open_checked_later(const cs_source *src, FILE *log, cs_analysis_check **chk, char *err,
                                         size_t errlen)
{
    *chk = NULL;
    err[0] = '\0';
    if (src->kind == CS_SOURCE_JOB)
        return cs_analysis_open(src, 0, 0, log, err, errlen);
    cs_store *st;
    if (cs_store_open(src->path, CS_STORE_READ, &st, err, errlen) != 0)
        return NULL;
    cs_analysis_check *c = NULL;
    if (cs_store_analysis_current(st) == 1 && (c = calloc(1, sizeof *c)) != NULL) {
        snprintf(c->path, sizeof c->path, "%s", src->path);
        if (pthread_create(&c->th, NULL, cs_analysis_check_main, c) == 0) {
            *chk = c;
            return st;
        }
    }
    free(c);
    cs_store_close(st);
    return cs_analysis_open(src, 0, 0, log, err, errlen);
}

int cs_analysis_check_wait(cs_analysis_check *chk, int read_ok, cs_store **st, const cs_source *src, FILE *log,
                           char *err, size_t errlen)
{
    if (!chk)
        return 0;
    pthread_join(chk->th, NULL);
    int rc = chk->rc;
    free(chk);
    if (rc == 0 && read_ok)
        return 0;
    /* damaged, a read that failed (a damaged page of a table not
     * checked?), or the check could not finish: the careful way, which
     * checks every page, recovers a damaged trace or names the resource */
    cs_store_close(*st);
    *st = cs_analysis_open(src, 0, 0, log, err, errlen);
    return 1;
}
