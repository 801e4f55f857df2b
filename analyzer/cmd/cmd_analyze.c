/* cmd_analyze.c: `collscope analyze [-j K [--via mpi|workers]] [--force]
 * DIR|TRACE.db`: run the cross-rank analysis and store it in the trace
 * (cs_analysis_run), or, for a job kept as rank stores, in K processes
 * (par.h): an MPI job of collscope-analyze-MPI started under mpirun, or
 * forked workers. Started by mpirun itself, it becomes that MPI's
 * collscope-analyze-MPI at once. */
#include "config.h"
#include "analyzer/cmd/cli.h"
#include "analyzer/analysis/csanalysis.h"
#include "common/numarg.h"
#include "analyzer/par/par_fork.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { AN_JOBS, AN_VIA, AN_FORCE };
static const cs_opt cs_analyze_opt[] = {
    [AN_JOBS] = { NULL, 'j', CS_OPT_REQUIRED, "K", NULL, CS_OPT_OWN,
                  "K processes (K >= 1). Where an MPI is installed they are an MPI job that collscope starts "
                  "itself (mpirun -np K), else K-1 worker processes forked beside this one. A merged trace is "
                  "analysed by one process (a note says so)." },
    [AN_VIA] = { "via", 0, CS_OPT_REQUIRED, "HOW", NULL, CS_OPT_UNDER,
                 "how -j K starts them: mpi (under mpirun; Open MPI first, then MPICH; an error where none is "
                 "installed), openmpi or mpich (that one), workers (forked); default mpi where installed, else "
                 "workers." },
    [AN_FORCE] = { "force", 0, CS_OPT_NONE, NULL, NULL, CS_OPT_OWN,
                   "analyse again even when the stored analysis is current" },
};

const cs_optset cs_optset_analyze = {
    .prog = "collscope analyze",
    .tail = "DIR|TRACE.db",
    .opt = cs_analyze_opt,
    .nopt = CS_OPTS_N(cs_analyze_opt),
    .about = "Run the cross-rank analysis and store it in the trace: clock alignment\n"
             "(the clocks table), collective instances and their wait states, point-to-\n"
             "point pairs, steps, per-rank statistics, straggler verdicts and tail\n"
             "latency (tables instances, waits, p2p, steps, rank_stats, stragglers,\n"
             "tails), cost models of the collectives, the what-if replay and its\n"
             "proposals (tables models, proposals; see docs/report-json.md).\n"
             "`collscope report` and `collscope tui`\n"
             "read them. A current stored analysis is kept unless --force. A trace\n"
             "that cannot be written here is refused (report analyses a private copy\n"
             "of it instead). A trace with damaged pages is never written: what SQLite\n"
             "can still read of it is copied into STEM.recovered.db beside it and\n"
             "analysed there, with one message naming the damaged file and what was\n"
             "kept and lost. A job kept as rank stores (DIR/ranks and DIR/index.db, see\n"
             "collscope ingest) is read from them, and its analysis stored in\n"
             "DIR/results.db; a rank store missing or unreadable is named, the others\n"
             "analysed (exit status 1).\n"
             "\n"
             "A job kept as rank stores can be analysed by K processes, with the same\n"
             "results: each merges its share of the rank stores into a part of the job\n"
             "(in a private folder DIR/.collscope-analyze.*, removed at the end; one\n"
             "left by an analysis that was killed is removed by the next), pairs the\n"
             "messages to its share of the ranks and matches its share of the\n"
             "collective instances; process 0 aligns the clocks, finds the steps and\n"
             "runs the other passes while process 1 copies the wait states into the\n"
             "results (docs/scale.md). Without -j, one process takes the same steps.\n",
    .after = "`mpirun -np K collscope analyze DIR` (Open MPI or MPICH) runs the same\n"
             "analysis on the K processes mpirun started, on as many nodes as it gives\n"
             "(DIR must be on a file system they share). COLLSCOPE_VERBOSE set prints how\n"
             "the processes were started and the bytes they exchanged;\n"
             "COLLSCOPE_PAR_STATS set, each process's peak memory (private, proportional\n"
             "and resident), CPU time and bytes. COLLSCOPE_MAPPED_MB bounds the store\n"
             "pages a process keeps mapped in its resident memory (default 256; 0: none).\n"
             "\n"
             "Exit status: 0; 1 when the trace cannot be read or written, or when it\n"
             "was damaged and what could be read of it was analysed; 2 on bad usage.\n",
};

enum { CS_ANALYZE_OMPI, CS_ANALYZE_MPICH, CS_ANALYZE_NMPI };
static const struct {
    const char *name, *helper, *mpirun;
} cs_analyze_mpis[CS_ANALYZE_NMPI] = {
    [CS_ANALYZE_OMPI] = { "openmpi", "collscope-analyze-openmpi", MPIRUN_OMPI },
    [CS_ANALYZE_MPICH] = { "mpich", "collscope-analyze-mpich", MPIRUN_MPICH },
};

static int cs_analyze_verbose(void)
{
    const char *v = getenv("COLLSCOPE_VERBOSE");
    return v && *v;
}

/* The program of that MPI's analysis processes: beside this program (the
 * build tree), else where it is installed. 0 with its path, or -1. */
static int cs_analyze_helper(int mpi, char *out, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            snprintf(out, len, "%.*s/%s", (int)(slash - self), self, cs_analyze_mpis[mpi].helper);
            if (access(out, X_OK) == 0)
                return 0;
        }
    }
    snprintf(out, len, "%s/%s", PKGLIBEXECDIR, cs_analyze_mpis[mpi].helper);
    return access(out, X_OK) == 0 ? 0 : -1;
}

/* The MPI whose mpirun started this process with more than one process,
 * with *rank set to this one's; -1 when none did (or with one process).
 * Open MPI sets OMPI_COMM_WORLD_SIZE; MPICH's Hydra sets PMI_SIZE and
 * PMI_RANK (its MPI_LOCALNRANKS counts one node's processes only). */
static int cs_analyze_launcher(int *size, int *rank)
{
    static const struct {
        int mpi;
        const char *size, *rank;
    } vars[] = { { CS_ANALYZE_OMPI, "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK" },
                 { CS_ANALYZE_MPICH, "PMI_SIZE", "PMI_RANK" } };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *s = getenv(vars[i].size), *r = getenv(vars[i].rank);
        if (s && atoi(s) > 1) {
            *size = atoi(s);
            *rank = r ? atoi(r) : 0;
            return vars[i].mpi;
        }
    }
    return -1;
}

/* Run the helper of mpi under its mpirun with k processes and wait for it:
 * its exit status (0, 1, 2), or 1 after one message. */
static int cs_analyze_mpirun(int mpi, const char *helper, int k, const char *dir, int force)
{
    char np[16];
    snprintf(np, sizeof np, "%d", k);
    const char *argv[10];
    int argc = 0;
    argv[argc++] = cs_analyze_mpis[mpi].mpirun;
    argv[argc++] = "-np";
    argv[argc++] = np;
    if (mpi == CS_ANALYZE_OMPI) {
        argv[argc++] = "--oversubscribe"; /* K may exceed the cores */
        argv[argc++] = "--quiet";         /* no banner for an exit status of 1 */
    }
    argv[argc++] = helper;
    if (force)
        argv[argc++] = "--force";
    argv[argc++] = dir;
    argv[argc] = NULL;
    if (cs_analyze_verbose())
        cs_note("analysing %s with %d processes under %s (%s)", dir, k, argv[0], helper);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        cs_error("cannot start %s: %s", argv[0], strerror(errno));
        return 1;
    }
    if (pid == 0) {
        /* the job is ours: Open MPI refuses root unless told twice */
        if (mpi == CS_ANALYZE_OMPI && geteuid() == 0) {
            setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
            setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
        }
        execv(argv[0], (char **)argv);
        cs_error("cannot run %s: %s", argv[0], strerror(errno));
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            cs_error("waiting for %s: %s", argv[0], strerror(errno));
            return 1;
        }
    if (WIFSIGNALED(st)) {
        cs_error("%s stopped (signal %d)", argv[0], WTERMSIG(st));
        return 1;
    }
    int rc = WEXITSTATUS(st);
    if (rc <= 2)
        return rc; /* the analysis's own, its messages printed */
    if (rc > 128 && rc < 128 + 65)
        cs_error("an analysis process under %s stopped (signal %d)", argv[0], rc - 128);
    else
        cs_error("%s ended with status %d", argv[0], rc);
    return 1;
}

int cs_cmd_analyze(int argc, char **argv)
{
    int force = 0, c;
    long long k = 0;
    const char *via = NULL;
    char err[1024];
    cs_opts_parser p;
    cs_opts_begin(&p, &cs_optset_analyze);
    while ((c = cs_opts_next(&p, argc, argv)) != CS_OPTS_END) {
        if (c == AN_FORCE)
            force = 1;
        else if (c == AN_JOBS) {
            if (cs_numarg_ll("-j", optarg, 1, 65536, &k, err, sizeof err) != 0) {
                cs_error("%s", err);
                cs_opts_help(stderr, &cs_optset_analyze);
                return 2;
            }
        } else if (c == AN_VIA && (strcmp(optarg, "mpi") == 0 || strcmp(optarg, "workers") == 0 ||
                                   strcmp(optarg, "openmpi") == 0 || strcmp(optarg, "mpich") == 0))
            via = optarg;
        else {
            if (c == AN_VIA)
                cs_error("--via %s: want mpi, openmpi, mpich or workers", optarg);
            cs_opts_help(stderr, &cs_optset_analyze);
            return 2;
        }
    }
    if (optind != argc - 1 || (via && !k)) {
        if (via && !k)
            cs_error("--via is for -j K");
        cs_opts_help(stderr, &cs_optset_analyze);
        return 2;
    }
    const char *dir = argv[optind];
    char helper[PATH_MAX + 64];

    /* Started by mpirun: MPI_Init belongs to that MPI's program. */
    int wsize, wrank, mpi = cs_analyze_launcher(&wsize, &wrank);
    if (mpi >= 0) {
        /* A refusal: process 0 says why; the others wait a moment before
         * they fail, as a launcher (MPICH's) kills the job's processes
         * when one exits with an error, which could be before process 0
         * printed anything. */
        if (k) {
            if (wrank == 0)
                cs_error("-j %lld under mpirun: the %d processes mpirun started are the analysis's", k, wsize);
            else
                usleep(300000);
            return 2;
        }
        if (cs_analyze_helper(mpi, helper, sizeof helper) != 0) {
            if (wrank == 0)
                cs_error("started by mpirun (%s) with %d processes, but %s is not installed (%s)",
                         cs_analyze_mpis[mpi].name, wsize, cs_analyze_mpis[mpi].helper, helper);
            else
                usleep(300000);
            return 1;
        }
        char *hargv[] = { helper, force ? "--force" : (char *)dir, force ? (char *)dir : NULL, NULL };
        execv(helper, hargv);
        cs_error("cannot run %s: %s", helper, strerror(errno));
        return 1;
    }

    cs_source src;
    if (cs_source_open(dir, &src, err, sizeof err) != 0) {
        cs_error("%s", err);
        return 1;
    }
    if (k > 1 && src.kind != CS_SOURCE_JOB) {
        cs_note("a merged trace is analysed by one process (-j %lld ignored)", k);
        k = 1;
    }
    if (k > 1) {
        int use = -1;
        int workers = via && strcmp(via, "workers") == 0;
        for (int m = 0; m < CS_ANALYZE_NMPI && use < 0 && !workers; m++)
            if ((!via || strcmp(via, "mpi") == 0 || strcmp(via, cs_analyze_mpis[m].name) == 0) &&
                strcmp(cs_analyze_mpis[m].mpirun, "no") != 0 && cs_analyze_helper(m, helper, sizeof helper) == 0)
                use = m;
        if (use >= 0)
            return cs_analyze_mpirun(use, helper, (int)k, dir, force);
        if (via && !workers) {
            cs_error("--via %s: no %s to run the analysis on (collscope was built without it, or its mpirun or "
                     "collscope-analyze-MPI program is not installed)",
                     via, strcmp(via, "mpi") == 0 ? "MPI" : via);
            return 1;
        }
        if (cs_analyze_verbose())
            cs_note("analysing %s with %lld forked processes", dir, k);
        int rc = cs_par_fork_run((int)k, &src, force, stderr, err, sizeof err);
        if (rc < 0)
            cs_error("%s", err);
        return rc != 0;
    }
    int rc = cs_analysis_run(&src, force, stderr, err, sizeof err);
    if (rc < 0)
        cs_error("%s", err);
    return rc != 0; /* 1: damaged, the note on stderr said what was analysed */
}
