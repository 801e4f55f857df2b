/* cmd_run.c: `collscope run [-o DIR] -- LAUNCH...`: its usage and options;
 * the job itself is run by run.c. */
#include "config.h"
#include "analyzer/cmd/cli.h"
#include "analyzer/live/live.h"
#include "analyzer/live/live_serve.h"
#include "common/fmt.h"
#include "common/numarg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The MPIs --mpi names, each with the preload it picks
 * (collscope-PRELOAD.so); and the actions --hang-action takes. --help and
 * the messages for a value not here list the names from these tables. */
static const struct {
    const char *name, *preload;
} cs_run_mpis[] = { { "openmpi", "openmpi" }, { "mpich", "mpich" }, { "none", "nompi" } };
#define CS_RUN_NMPIS (sizeof cs_run_mpis / sizeof cs_run_mpis[0])
static const char *const cs_run_hang_actions[] = { "report", "abort" };
#define CS_RUN_NHANG_ACTIONS (sizeof cs_run_hang_actions / sizeof cs_run_hang_actions[0])

static const char *cs_run_mpi_name(size_t i, const void *arg)
{
    (void)arg;
    return cs_run_mpis[i].name;
}

static const char *cs_run_mpi_values(char *buf, size_t len)
{
    return cs_fmt_names(buf, len, CS_RUN_NMPIS, cs_run_mpi_name, NULL, 1);
}

static const char *cs_run_hang_action_name(size_t i, const void *arg)
{
    (void)arg;
    return cs_run_hang_actions[i];
}

static const char *cs_run_hang_action_values(char *buf, size_t len)
{
    return cs_fmt_names(buf, len, CS_RUN_NHANG_ACTIONS, cs_run_hang_action_name, NULL, 1);
}

enum {
    RN_OUTPUT,
    RN_FORCE,
    RN_WAIT,
    RN_MPI,
    RN_NOCALLSITES,
    RN_NOINGEST,
    RN_MERGE,
    RN_NOMERGE,
    RN_NONCCLPROF,
    RN_HANGTIMEOUT,
    RN_HANGACTION,
    RN_METRICSFILE,
    RN_METRICSPORT,
    RN_TOP
};
static const cs_opt cs_run_opt[] = {
    [RN_OUTPUT] = { "output", 'o', CS_OPT_REQUIRED, "DIR", NULL, CS_OPT_OWN,
                    "output folder (default: collscope.out); earlier traces in it are replaced (only "
                    "collscope's own files, never through a symbolic link)" },
    [RN_FORCE] = { "force", 0, CS_OPT_NONE, NULL, NULL, CS_OPT_OWN,
                   "accept an output folder that belongs to another user or that every user may write to "
                   "(refused by default)" },
    [RN_WAIT] = { "wait", 0, CS_OPT_NONE, NULL, NULL, CS_OPT_OWN,
                  "when another collscope command is using DIR (a run, an ingest, import or merge), wait for "
                  "it to end; without it, this run is refused (exit 1) and the job not started" },
    [RN_MPI] = { "mpi", 0, CS_OPT_REQUIRED, "IMPL", NULL, CS_OPT_OWN,
                 "which MPI the job uses: openmpi, mpich or none (default: guessed from the launcher and the "
                 "program)",
                 .values_of = cs_run_mpi_values },
    [RN_NOCALLSITES] = { "no-callsites", 0, CS_OPT_NONE, NULL, NULL, CS_OPT_OWN, "do not record call sites" },
    [RN_NOINGEST] = { "no-ingest", 0, CS_OPT_NONE, NULL, NULL, CS_OPT_OWN,
                      "leave the logs; build the trace later with collscope ingest" },
    [RN_MERGE] = { "merge", 0, CS_OPT_NONE, NULL, NULL, CS_OPT_OWN, "always merge the rank stores into DIR/trace.db" },
    [RN_NOMERGE] = { "no-merge", 0, CS_OPT_NONE, NULL, NULL, CS_OPT_OR,
                     "leave the rank stores in DIR/ranks with the job index DIR/index.db (default: so when "
                     "they hold more than COLLSCOPE_MERGE_MAX bytes, 2 GiB unless set)" },
    [RN_NONCCLPROF] = { "no-nccl-profiler", 0, CS_OPT_NONE, NULL, NULL, CS_OPT_OWN,
                        "do not offer the preload to NCCL as its profiler plugin (NCCL_PROFILER_PLUGIN; a value "
                        "already set is kept)" },
    [RN_HANGTIMEOUT] = { "hang-timeout", 0, CS_OPT_REQUIRED, "S", NULL, CS_OPT_OWN,
                         "a watchdog in every rank records a call in flight for more than S seconds, or a rank "
                         "whose frequent calls stopped for S seconds, with a stack sample, and says so on stderr "
                         "(COLLSCOPE_HANG_TIMEOUT; default off)" },
    [RN_HANGACTION] = { "hang-action", 0, CS_OPT_REQUIRED, "A", NULL, CS_OPT_UNDER,
                        "report (default): go on; abort: end the job once the hang is recorded "
                        "(COLLSCOPE_HANG_ACTION)",
                        .values_of = cs_run_hang_action_values },
    [RN_METRICSFILE] = { "metrics-file", 0, CS_OPT_REQUIRED, "PATH", NULL, CS_OPT_OWN,
                         "while the job runs, follow its logs (as collscope top does) and write Prometheus "
                         "metrics there about once a second (the node exporter's textfile format, renamed into "
                         "place); the alarms raised are told at the end" },
    [RN_METRICSPORT] = { "metrics-port", 0, CS_OPT_REQUIRED, "P", "[ADDR:]PORT", CS_OPT_OWN,
                         "serve them at http://127.0.0.1:P/metrics (ADDR:P for another address; 0: any free "
                         "port, told on stderr)" },
    [RN_TOP] = { "top", 0, CS_OPT_NONE, NULL, NULL, CS_OPT_OWN,
                 "show collscope top's view of the job in this terminal while it runs; the job's stdout and "
                 "stderr go to DIR/job.out and DIR/job.err (replaced when they are ours, never through a "
                 "link), its stdin is /dev/null; q leaves the view, the job runs on to its end; the alarms are "
                 "told and kept as with --metrics-*. Without a terminal, said, and run as without it" },
};

const cs_optset cs_optset_run = {
    .prog = "collscope run",
    .tail = "-- LAUNCH...",
    .flags = "+",
    .opt = cs_run_opt,
    .nopt = CS_OPTS_N(cs_run_opt),
    .about = "Run LAUNCH (an mpirun/mpiexec line, or a single program) with the collscope\n"
             "preload library, then merge what every process recorded into DIR/trace.db.\n"
             "Nothing in the job is rebuilt. The exit status is the job's; when the\n"
             "job succeeded but nothing was traced (no process called MPI or NCCL\n"
             "through the preload: a PyTorch job on gloo, a launcher that clears\n"
             "LD_PRELOAD), 4, with a message that says why and what to do instead\n"
             "(for a PyTorch job: record it with torch.profiler and use `collscope\n"
             "import`).\n"
             "\n",
    .after = "\n"
             "Environment read by the preload: COLLSCOPE_CALLSITES=0|1,\n"
             "COLLSCOPE_PAPI=EV,..., COLLSCOPE_LOG_MAX_MB (default 16384),\n"
             "COLLSCOPE_CLOCK=tsc|monotonic,\n"
             "COLLSCOPE_EXIT_CONVERT=0 (convert at the end of the run instead of at exit),\n"
             "COLLSCOPE_HANG_SIGNAL (the watchdog's stack-sampling signal, default RTMIN+6).\n"
             "See collscope(1).\n",
};

int cs_cmd_run(int argc, char **argv)
{
    const char *out = "collscope.out", *mpi = NULL, *hang_timeout = NULL, *hang_action = NULL;
    const char *metrics_file = NULL, *metrics_port = NULL;
    int callsites = 1, ingest = 1, ncclprof = 1, force = 0, merge = CS_MERGE_AUTO, wait = 0, top = 0, c;
    cs_opts_parser p;
    cs_opts_begin(&p, &cs_optset_run);
    while ((c = cs_opts_next(&p, argc, argv)) != CS_OPTS_END) {
        switch (c) {
        case RN_OUTPUT: out = optarg; break;
        case RN_MPI: mpi = optarg; break;
        case RN_NOCALLSITES: callsites = 0; break;
        case RN_NOINGEST: ingest = 0; break;
        case RN_NONCCLPROF: ncclprof = 0; break;
        case RN_FORCE: force = 1; break;
        case RN_HANGTIMEOUT: hang_timeout = optarg; break;
        case RN_HANGACTION: hang_action = optarg; break;
        case RN_MERGE: merge = CS_MERGE_YES; break;
        case RN_NOMERGE: merge = CS_MERGE_NO; break;
        case RN_WAIT: wait = 1; break;
        case RN_METRICSFILE: metrics_file = optarg; break;
        case RN_METRICSPORT: metrics_port = optarg; break;
        case RN_TOP: top = 1; break;
        default: cs_opts_help(stderr, &cs_optset_run); return 2;
        }
    }
    if (optind < argc && strcmp(argv[optind], "--") == 0)
        optind++;
    if (optind >= argc) {
        cs_error("run: nothing to run (usage: collscope run [-o DIR] -- LAUNCH...)");
        return 2;
    }
    if (hang_timeout) {
        double t;
        char err[256];
        if (cs_numarg_double("--hang-timeout", hang_timeout, 0.001, 1e6, 0, &t, err, sizeof err) != 0) {
            cs_error("run: %s", err);
            return 2;
        }
        setenv("COLLSCOPE_HANG_TIMEOUT", hang_timeout, 1);
    }
    if (hang_action) {
        size_t i = 0;
        while (i < CS_RUN_NHANG_ACTIONS && strcmp(hang_action, cs_run_hang_actions[i]) != 0)
            i++;
        if (i == CS_RUN_NHANG_ACTIONS) {
            char names[64];
            cs_error("run: unknown --hang-action '%s' (%s)", hang_action,
                     cs_fmt_names(names, sizeof names, CS_RUN_NHANG_ACTIONS, cs_run_hang_action_name, NULL, 0));
            return 2;
        }
        if (!hang_timeout) {
            cs_error("run: --hang-action needs --hang-timeout");
            return 2;
        }
        setenv("COLLSCOPE_HANG_ACTION", hang_action, 1);
    }
    char **launch = argv + optind;
    if (!mpi)
        mpi = cs_run_guess_mpi(launch);
    /* a name of the table (--mpi, COLLSCOPE_MPI), or a preload's (a guess) */
    size_t mi = 0;
    while (mi < CS_RUN_NMPIS && strcmp(mpi, cs_run_mpis[mi].name) != 0 && strcmp(mpi, cs_run_mpis[mi].preload) != 0)
        mi++;
    if (mi == CS_RUN_NMPIS) {
        char names[64];
        cs_error("run: unknown MPI '%s' (%s)", mpi,
                 cs_fmt_names(names, sizeof names, CS_RUN_NMPIS, cs_run_mpi_name, NULL, 0));
        return 2;
    }
    mpi = cs_run_mpis[mi].preload;
    if (metrics_file || metrics_port || top) {
        char err[1200];
        cs_live_opts lo;
        cs_live_opts_default(&lo);
        if (cs_live_opts_env(&lo, err, sizeof err) != 0) {
            cs_error("run: %s", err);
            return 1;
        }
        cs_live_pub *pub = cs_live_pub_new(metrics_file, metrics_port, err, sizeof err);
        if (!pub) {
            cs_error("run: %s", err);
            return 2;
        }
        cs_run_live(pub, &lo, top);
    }

    return cs_run_job(launch, out, mpi, callsites, ingest, ncclprof, force, merge, wait);
}
