/* an_par.c: the analysis of a job kept as rank stores by the K processes
 * of a cs_par (par.h), all taking the same steps:
 *
 *   1. the root decides: a current stored analysis is kept; else it makes
 *      a private folder in the job's (DIR/.collscope-analyze.XXXXXX) that
 *      every process can reach;
 *   2. each of the first P processes (P = K, at most what SQLite can
 *      attach) merges its share of the rank stores into a part there, and
 *      the root sums what they read and left out;
 *   3. each process reads the whole job through the parts, in place
 *      (cs_store_open_parts), and runs the analysis (cs__an_run): the
 *      cheap cross-rank passes before the match on every process, the
 *      match on its share of the collective instances, whose sums and
 *      rows go to the root, which runs the rest and saves the results in
 *      DIR/results.db;
 *   4. the root removes the folder and sends its verdict to all.
 *
 * A process that fails still takes part in every exchange (with an empty
 * share), so that none waits for it forever. */
#include "config.h"
#include "analyzer/analysis/analysis.h"
#include "analyzer/analysis/csanalysis.h"
#include "analyzer/analysis/par.h"
#include "common/msg.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* What the root sends before the work starts. */
typedef struct cs_par_plan {
    int32_t action; /* CS_PAR_* */
    int32_t nparts;
    char scratch[4096];
} cs_par_plan;

enum { CS_PAR_FAIL = -1, CS_PAR_KEEP = 0, CS_PAR_SPLIT = 1, CS_PAR_ONE = 2 };

/* What each process sends back: its status, and what its part read. */
enum { CS_PAR_FOLLOWED = -2 }; /* rc: failed as the root said the work had */
typedef struct cs_par_report {
    int32_t rc;
    char err[1024];
    cs_store_part part;
} cs_par_report;

/* The root's verdict, sent to every process at the end. */
typedef struct cs_par_verdict {
    int32_t rc;
    char err[1024];
} cs_par_verdict;

/* text one line each (stored notes are joined by newlines; a message's
 * control characters are printed escaped) */
static void cs_par_log(FILE *log, const char *what, const char *text)
{
    while (log && *text) {
        const char *nl = strchr(text, '\n');
        int n = nl ? (int)(nl - text) : (int)strlen(text);
        if (n)
            cs_msg_line(log, "collscope: %s%.*s", what, n, text);
        text += n + (nl != NULL);
    }
}

/* The root's bytes at buf (len of them) into buf at every process. */
static int cs_par_share(cs_par *par, void *buf, size_t len)
{
    void *b = buf;
    size_t n = len;
    if (par->bcast(par, &b, &n) != 0)
        return -1;
    if (par->rank != 0) {
        int ok = n == len;
        if (ok)
            memcpy(buf, b, len);
        free(b);
        return ok ? 0 : -1;
    }
    return 0;
}

/* Every process's report at the root (all: size of them), NULL elsewhere. */
static int cs_par_reports(cs_par *par, const cs_par_report *mine, cs_par_report **all)
{
    size_t *lens = calloc((size_t)par->size, sizeof *lens);
    void *got = NULL;
    *all = NULL;
    int rc = lens ? par->gather(par, mine, sizeof *mine, &got, lens) : -1;
    for (int r = 0; rc == 0 && par->rank == 0 && r < par->size; r++)
        if (lens[r] != sizeof *mine)
            rc = -1;
    free(lens);
    if (rc != 0) {
        free(got);
        return -1;
    }
    *all = got;
    return 0;
}

/* Seconds since t0 (CLOCK_MONOTONIC), for COLLSCOPE_AN_TIMES. */
static double cs_par_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return cs__an_seconds(t0, &t1);
}

/* Remove what the processes left in the private folder, then the folder:
 * 0, or -1 when the folder stays (errno says why: a file not of ours). */
static int cs_par_clean(const char *scratch)
{
    DIR *d = opendir(scratch);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            /* only the names the analysis makes: part-, view-, match-,
             * results-N.db and SQLite's side files of them, ends-, marks-,
             * msgs-N.bin, and the root's lock */
            static const char *const ours[] = { "part-",  "view-", "match-",   "ends-",
                                                "marks-", "msgs-", "results-", "lock" };
            size_t k = 0;
            while (k < sizeof ours / sizeof ours[0] && strncmp(e->d_name, ours[k], strlen(ours[k])) != 0)
                k++;
            if (k == sizeof ours / sizeof ours[0])
                continue;
            char p[4400];
            snprintf(p, sizeof p, "%s/%s", scratch, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    return rmdir(scratch);
}

/* The root's end of its private folder. It is renamed first: a process
 * still at work (the root gives up on the others when one stops) makes
 * its files by the folder's path, so none can appear in it once it has
 * another name, and the folder can be emptied and removed. */
static void cs_par_clean_own(const char *scratch)
{
    char gone[4200];
    snprintf(gone, sizeof gone, "%s.gone", scratch);
    cs_par_clean(rename(scratch, gone) == 0 ? gone : scratch);
}

/* The private folders of analyses of dir that stopped without removing
 * theirs (killed, their machine down): a folder of ours is in use while
 * its root holds the lock on SCRATCH/lock (flock, as long as it runs), so
 * one whose lock can be taken is left over, and so is one with no lock
 * file an hour after it was made (the root takes the lock at once).
 * Folders of other users, and links, are not touched. */
static void cs_par_clean_stale(const char *dir, FILE *log)
{
    static const char stem[] = ".collscope-analyze.";
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strncmp(e->d_name, stem, sizeof stem - 1) != 0)
            continue;
        char p[4200], lock[4300];
        struct stat sb;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (lstat(p, &sb) != 0 || !S_ISDIR(sb.st_mode) || sb.st_uid != geteuid())
            continue;
        snprintf(lock, sizeof lock, "%s/lock", p);
        int fd = open(lock, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        int stale = fd >= 0 ? flock(fd, LOCK_EX | LOCK_NB) == 0 : errno == ENOENT && time(NULL) - sb.st_mtime > 3600;
        if (fd >= 0)
            close(fd);
        if (!stale)
            continue;
        int left = cs_par_clean(p) != 0;
        if (log && !left)
            cs_msg_line(log, "collscope: %s: removed: the private folder of an analysis that stopped before its end",
                        p);
        else if (log)
            cs_msg_line(log, "collscope: %s: the private folder of an analysis that stopped before its end is left: %s",
                        p, strerror(errno));
    }
    if (d)
        closedir(d);
}

/* The spans of the part at path pass the analysis's input checks (each
 * process checks its own part: the job is read once, not once a process);
 * a failure names the job. */
static int cs_par_check_part(const char *dir, const char *path, char *err, size_t errlen)
{
    cs_store *st;
    if (cs_store_open(path, CS_STORE_READ, &st, err, errlen) != 0)
        return -1;
    char name[4200];
    snprintf(name, sizeof name, "%s/%s", dir, CS_STORE_INDEX_FILE);
    int rc = cs_store_analysis_check_spans(st, name, err, errlen);
    cs_store_close(st);
    return rc;
}

/* The root's plan: keep a current analysis, or where to work (its
 * private folder, whose lock the root holds on *lock while it works). */
static void cs_par_decide(const cs_source *src, int force, cs_par *par, cs_par_plan *plan, int *lock, FILE *log,
                          char *err, size_t errlen)
{
    memset(plan, 0, sizeof *plan);
    plan->action = CS_PAR_FAIL;
    const char *dir = src->path;
    if (src->kind != CS_SOURCE_JOB) {
        plan->action = CS_PAR_ONE; /* one trace.db: read by one process */
        return;
    }
    cs_par_clean_stale(dir, log);
    char fp[256], results[4200];
    snprintf(results, sizeof results, "%s/results.db", dir);
    if (!force && cs_store_job_fingerprint(dir, fp, sizeof fp, err, errlen) == 0 &&
        cs_store_results_current(results, fp) == 1) {
        plan->action = CS_PAR_KEEP;
        return;
    }
    snprintf(plan->scratch, sizeof plan->scratch, "%s/.collscope-analyze.XXXXXX", dir);
    if (!mkdtemp(plan->scratch)) {
        snprintf(err, errlen, "%s: cannot make the analysis's private folder there: %s", dir, strerror(errno));
        return;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/lock", plan->scratch);
    *lock = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (*lock < 0 || flock(*lock, LOCK_EX) != 0) {
        snprintf(err, errlen, "%s: cannot lock the analysis's private folder: %s", plan->scratch, strerror(errno));
        if (*lock >= 0)
            close(*lock);
        *lock = -1;
        cs_par_clean(plan->scratch);
        return;
    }
    int max = cs_store_parts_max();
    plan->nparts = par->size < max ? par->size : max;
    plan->action = CS_PAR_SPLIT;
}

/* The parts' reports summed into total at the root: 0; -1 when nothing
 * could be read or a process failed (err says why); 1 when the parts'
 * span ids overlap (two files of one rank in different parts cannot be,
 * but ids of other tools can), so that one process must read the job. */
static int cs_par_sum(const cs_par_report *all, int size, int nparts, cs_store_part *total, char *err, size_t errlen)
{
    memset(total, 0, sizeof *total);
    for (int r = 0; r < size; r++) {
        if (all[r].rc != 0) {
            snprintf(err, errlen, "%s", all[r].err);
            return -1;
        }
        if (r >= nparts)
            continue;
        const cs_store_part *p = &all[r].part;
        total->merged += p->merged;
        total->spans += p->spans;
        total->nfaults += p->nfaults;
        total->unknown_run += p->unknown_run;
        total->sum += p->sum;
        if (p->faults[0]) {
            size_t n = strlen(total->faults);
            snprintf(total->faults + n, sizeof total->faults - n, "%s%s", n ? "; " : "", p->faults);
        }
        for (int q = 0; q < r; q++) {
            const cs_store_part *o = &all[q].part;
            if (p->min_id <= p->max_id && o->min_id <= o->max_id && p->min_id <= o->max_id && o->min_id <= p->max_id)
                return 1;
        }
    }
    if (total->merged == 0) {
        snprintf(err, errlen, "%s: no rank store of the job can be read%s%s", CS_STORE_INDEX_FILE,
                 total->faults[0] ? ": " : "", total->faults);
        return -1;
    }
    return 0;
}

/* Step 3 on one process: read the job through the parts and analyse it;
 * the root saves the results. 0, 1 (rank stores left out), or -1. */
static int cs_par_analyse(const char *dir, const cs_par_plan *plan, const cs_store_part *total, cs_par *par, FILE *log,
                          char *err, size_t errlen)
{
    char **parts = cs__an_ctx_scratch_files(plan->scratch, "part", plan->nparts);
    char view[4200];
    cs__an_ctx_scratch_file(view, sizeof view, plan->scratch, "view", par->rank);
    int rc = parts ? 0 : -1;
    if (rc != 0)
        snprintf(err, errlen, "out of memory");
    cs_store *st = NULL;
    if (rc == 0)
        rc = cs_store_open_parts(dir, parts, plan->nparts, view, total, &st, err, errlen);
    cs__an_ctx_scratch_files_free(parts, plan->nparts);
    /* the spans were checked part by part, by the processes that made them */
    if (rc == 0)
        rc = cs_store_analysis_check_tables(st, err, errlen);
    int matched = 0;
    cs_an_share share = { par, plan->scratch, plan->nparts, &matched };
    if (rc == 0) {
        if (par->rank == 0 && total->nfaults) {
            char from[8], note[3300];
            cs_store_recovered(st, from, sizeof from, note, sizeof note);
            if (log)
                cs_msg_line(log, "collscope: %s: %s; analysing the others", cs_store_path(st), note);
        }
        char unk[256];
        if (par->rank == 0 && log && cs_store_job_run_unknown(st, unk, sizeof unk))
            cs_msg_line(log, "collscope: %s: %s", cs_store_path(st), unk);
        rc = cs__an_run(st, &share, par->rank == 0 ? log : NULL, err, errlen);
    } else {
        /* the analysis's exchanges, with an empty share: this one failed */
        cs__an_par_finish(&share, CS_AN_X_NONE);
    }
    /* The waits are in the processes' match stores. Process 1 copies them
     * into the results' file (SCRATCH/results-1.db) while the root runs
     * its passes after the match, and says how it went (X4); the root then
     * adds its tables to that file, or copies the waits itself where
     * process 1 could not. */
    char **match = cs__an_ctx_scratch_files(plan->scratch, "match", par->size);
    char waits_file[4200];
    cs__an_ctx_scratch_file(waits_file, sizeof waits_file, plan->scratch, "results", 1);
    int waits_ok = 0;
    if (par->size > 1) {
        int32_t wrc = -1;
        if (par->rank == 1 && rc == 0 && matched && match) {
            char werr[1024];
            struct timespec t0;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            wrc = cs_store_results_waits_file(waits_file, match, par->size, werr, sizeof werr);
            if (getenv("COLLSCOPE_AN_TIMES"))
                fprintf(stderr, "collscope: process 1: the waits copied in %.3f s\n", cs_par_since(&t0));
        }
        void *all = NULL;
        size_t *lens = calloc((size_t)par->size, sizeof *lens);
        if (!lens || par->gather(par, &wrc, sizeof wrc, &all, lens) != 0) {
            if (rc == 0 && par->rank == 0)
                snprintf(err, errlen, "an analysis process stopped while the waits were copied");
            rc = -1;
        } else if (par->rank == 0 && lens[1] == sizeof wrc) {
            memcpy(&wrc, (char *)all + lens[0], sizeof wrc);
            waits_ok = wrc == 0;
        }
        free(all);
        free(lens);
    }
    if (rc == 0 && par->rank == 0) {
        char results[4200], notes[2048] = "";
        snprintf(results, sizeof results, "%s/results.db", dir);
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        rc = match
                 ? cs_store_analysis_save_from(st, results, match, par->size, waits_ok ? waits_file : NULL, err, errlen)
                 : -1;
        if (log && getenv("COLLSCOPE_AN_TIMES"))
            fprintf(log, "collscope: pass save     %.3f s (%s)\n", cs_par_since(&t0),
                    waits_ok ? "the waits copied by process 1" : "the waits copied here");
        if (rc != 0 && !err[0])
            snprintf(err, errlen, "out of memory");
        cs_store_meta_get(st, "analysis_notes", notes, sizeof notes);
        if (rc == 0)
            cs_par_log(log, "", notes);
    }
    cs__an_ctx_scratch_files_free(match, par->size);
    cs_store_close(st);
    if (rc == 0 && total->nfaults)
        rc = 1;
    return rc;
}

static int cs_par_run(const cs_source *src, int force, cs_par *par, FILE *log, char *err, size_t errlen);

/* COLLSCOPE_PAR_STATS=1 (benches): a thread of each process samples its
 * private memory (RssAnon: what it allocated) and its proportional share
 * of all its pages (Pss: a page mapped by n processes, as the parts are,
 * counts 1/n in each) every 250 ms; the kernel keeps the peak resident
 * memory (VmHWM: mapped store pages counted whole in every process). */
typedef struct cs_par_mem {
    pthread_t th;
    int running;
    atomic_int stop;
    int64_t anon_kb, pss_kb;
} cs_par_mem;

/* The value of the line "key N kB" of the /proc file, in KB; -1. */
static int64_t cs_proc_kb(const char *file, const char *key)
{
    FILE *f = fopen(file, "r");
    char line[256];
    int64_t v = -1;
    size_t n = strlen(key);
    while (f && v < 0 && fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0)
            v = strtoll(line + n, NULL, 10);
    if (f)
        fclose(f);
    return v;
}

static void cs_par_mem_sample(cs_par_mem *m)
{
    int64_t a = cs_proc_kb("/proc/self/status", "RssAnon:"), p = cs_proc_kb("/proc/self/smaps_rollup", "Pss:");
    if (a > m->anon_kb)
        m->anon_kb = a;
    if (p > m->pss_kb)
        m->pss_kb = p;
}

static void *cs_par_mem_run(void *arg)
{
    cs_par_mem *m = arg;
    while (!atomic_load(&m->stop)) {
        cs_par_mem_sample(m);
        struct timespec ts = { 0, 250000000 };
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void cs_par_mem_start(cs_par_mem *m)
{
    memset(m, 0, sizeof *m);
    atomic_init(&m->stop, 0);
    if (getenv("COLLSCOPE_PAR_STATS"))
        m->running = pthread_create(&m->th, NULL, cs_par_mem_run, m) == 0;
}

static void cs_par_mem_stop(cs_par_mem *m)
{
    if (!m->running)
        return;
    atomic_store(&m->stop, 1);
    pthread_join(m->th, NULL);
    cs_par_mem_sample(m);
    m->running = 0;
}

/* Each process's peaks (above), CPU time and bytes exchanged, one line a
 * process on the root's log. */
static void cs_par_stats(cs_par *par, const cs_par_mem *mem, FILE *log)
{
    struct {
        int64_t hwm_kb, anon_kb, pss_kb, cpu_us, trims;
        uint64_t sent, received;
    } mine = { cs_proc_kb("/proc/self/status", "VmHWM:"),
               mem->anon_kb,
               mem->pss_kb,
               0,
               cs_store_map_trims(),
               par->sent,
               par->received };
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        mine.cpu_us =
            (int64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
    void *all = NULL;
    size_t *lens = calloc((size_t)par->size, sizeof *lens);
    if (lens && par->gather(par, &mine, sizeof mine, &all, lens) == 0 && par->rank == 0 && log) {
        const char *p = all;
        for (int r = 0; r < par->size; r++, p += sizeof mine) {
            memcpy(&mine, p, sizeof mine);
            fprintf(
                log,
                "collscope: process %d: peak memory %lld KB, private %lld KB, pss %lld KB, cpu %.2f s, sent %llu B, "
                "received %llu B, mapped pages dropped %lld times\n",
                r, (long long)mine.hwm_kb, (long long)mine.anon_kb, (long long)mine.pss_kb, (double)mine.cpu_us / 1e6,
                (unsigned long long)mine.sent, (unsigned long long)mine.received, (long long)mine.trims);
        }
    }
    free(all);
    free(lens);
}

int cs_analysis_run_par(const cs_source *src, int force, cs_par *par, FILE *log, char *err, size_t errlen)
{
    err[0] = '\0';
    /* Every process reads every part: only its cursors' pages stay mapped */
    cs_analysis_map_bound(par->rank == 0 ? log : NULL);
    cs_par_mem mem;
    cs_par_mem_start(&mem);
    int rc = cs_par_run(src, force, par, log, err, errlen);
    cs_par_mem_stop(&mem);
    if (getenv("COLLSCOPE_PAR_STATS"))
        cs_par_stats(par, &mem, log);
    return rc;
}

static int cs_par_run(const cs_source *src, int force, cs_par *par, FILE *log, char *err, size_t errlen)
{
    const char *dir = src->path;
    cs_par_plan plan;
    memset(&plan, 0, sizeof plan);
    char why[1024] = "";
    int lock = -1; /* the root's, on its private folder */
    if (par->rank == 0)
        cs_par_decide(src, force, par, &plan, &lock, log, why, sizeof why);
    if (cs_par_share(par, &plan, sizeof plan) != 0) {
        if (par->rank == 0 && plan.action == CS_PAR_SPLIT)
            cs_par_clean_own(plan.scratch);
        if (lock >= 0)
            close(lock);
        snprintf(err, errlen, "an analysis process stopped before the work began");
        return -1;
    }
    cs_par_verdict v;
    memset(&v, 0, sizeof v);
    int followed = 0; /* this process failed because the root said the work failed */
    if (plan.action == CS_PAR_FAIL) {
        snprintf(err, errlen, "%s", par->rank == 0 ? why : "the analysis could not start (see process 0)");
        return -1;
    }
    if (plan.action == CS_PAR_KEEP)
        return 0;
    if (plan.action == CS_PAR_SPLIT) {
        /* step 2: the parts */
        cs_par_report mine, *all = NULL;
        memset(&mine, 0, sizeof mine);
        mine.part.min_id = 1;
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        if (par->rank < plan.nparts) {
            char path[4200];
            cs__an_ctx_scratch_file(path, sizeof path, plan.scratch, "part", par->rank);
            if (cs_store_job_part(dir, path, par->rank, plan.nparts, &mine.part, mine.err, sizeof mine.err) != 0 ||
                cs_par_check_part(dir, path, mine.err, sizeof mine.err) != 0)
                mine.rc = -1;
        }
        if (getenv("COLLSCOPE_AN_TIMES"))
            fprintf(stderr, "collscope: process %d: its part of the rank stores %.3f s\n", par->rank,
                    cs_par_since(&t0));
        cs_store_part total;
        memset(&total, 0, sizeof total);
        int32_t go = CS_PAR_FAIL;
        if (cs_par_reports(par, &mine, &all) != 0) {
            snprintf(why, sizeof why, "an analysis process stopped while reading the rank stores");
        } else if (par->rank == 0) {
            int s = cs_par_sum(all, par->size, plan.nparts, &total, why, sizeof why);
            go = s == 0 ? CS_PAR_SPLIT : s == 1 ? CS_PAR_ONE : CS_PAR_FAIL;
            if (s == 1)
                cs_par_log(log, "", "the rank stores' span ids overlap: the job is analysed by one process");
        }
        free(all);
        struct {
            int32_t go;
            cs_store_part total;
        } head = { go, total };
        if (cs_par_share(par, &head, sizeof head) != 0)
            head.go = CS_PAR_FAIL;
        if (head.go == CS_PAR_SPLIT) {
            v.rc = cs_par_analyse(dir, &plan, &head.total, par, log, v.err, sizeof v.err);
        } else if (head.go == CS_PAR_ONE) {
            plan.action = CS_PAR_ONE;
        } else {
            v.rc = -1;
            followed = par->rank != 0;
            snprintf(v.err, sizeof v.err, "%s", par->rank == 0 ? why : "the analysis failed (see process 0)");
        }
    }
    if (plan.action == CS_PAR_ONE && par->rank == 0) {
        if (par->size > 1)
            cs_par_log(log, dir, ": read by one process (a merged trace, or ids that overlap)");
        if (src->kind == CS_SOURCE_JOB) {
            /* ids that overlap: the job read through one part */
            cs_par self;
            cs_par_self(&self);
            v.rc = cs_par_run(src, force, &self, log, v.err, sizeof v.err);
        } else {
            v.rc = cs__an_open_run(src, force, log, v.err, sizeof v.err);
        }
    }
    /* step 4: every process has closed its files; the root's verdict */
    cs_par_report mine, *all = NULL;
    memset(&mine, 0, sizeof mine);
    mine.rc = v.rc >= 0 ? 0 : followed ? CS_PAR_FOLLOWED : -1;
    snprintf(mine.err, sizeof mine.err, "%s", v.err);
    int lost = cs_par_reports(par, &mine, &all) != 0;
    if (par->rank == 0) {
        if (plan.action != CS_PAR_KEEP && plan.scratch[0] && plan.action != CS_PAR_FAIL)
            cs_par_clean_own(plan.scratch);
        if (lock >= 0)
            close(lock);
        /* a process that failed is the cause of the root's failure (one
         * that failed only as another did says nothing) */
        for (int r = 1; !lost && r < par->size; r++)
            if (all[r].rc != 0 && all[r].rc != CS_PAR_FOLLOWED && (all[r].err[0] || v.rc >= 0)) {
                v.rc = -1;
                snprintf(v.err, sizeof v.err, "analysis process %d: %s", r, all[r].err[0] ? all[r].err : "it failed");
                break;
            }
        if (lost && v.rc >= 0) {
            v.rc = -1;
            snprintf(v.err, sizeof v.err, "an analysis process stopped before the end");
        }
    }
    free(all);
    if (cs_par_share(par, &v, sizeof v) != 0 && par->rank != 0) {
        v.rc = -1;
        snprintf(v.err, sizeof v.err, "the root of the analysis stopped");
    }
    snprintf(err, errlen, "%s", v.err);
    return v.rc;
}

/* The one-process transport: the root's own bytes are all there is. */
static int cs_par_self_gather(cs_par *p, const void *buf, size_t len, void **all, size_t *lens)
{
    (void)p;
    char *out = malloc(len ? len : 1);
    if (!out)
        return -1;
    if (len)
        memcpy(out, buf, len);
    lens[0] = len;
    *all = out;
    return 0;
}

static int cs_par_self_bcast(cs_par *p, void **buf, size_t *len)
{
    (void)p, (void)buf, (void)len;
    return 0;
}

void cs_par_self(cs_par *p)
{
    memset(p, 0, sizeof *p);
    p->size = 1;
    p->gather = cs_par_self_gather;
    p->bcast = cs_par_self_bcast;
}
