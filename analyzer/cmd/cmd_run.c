/* cmd_run.c: `collscope run [-o DIR] -- LAUNCH...`: its usage and options;
 * the job itself is run by run.c. */
#include "config.h"
#include "analyzer/cmd/cli.h"
#include "analyzer/live/live.h"
#include "analyzer/live/live_serve.h"
#include "common/numarg.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cs_help_run[] = "usage: collscope run [-o DIR] [--mpi openmpi|mpich|none] [--no-callsites]\n"
                           "                     [--no-nccl-profiler] [--no-ingest] [--merge | --no-merge]\n"
                           "                     [--force] [--wait] [--hang-timeout S [--hang-action report|abort]]\n"
                           "                     [--metrics-file PATH] [--metrics-port [ADDR:]PORT] [--top]\n"
                           "                     -- LAUNCH...\n"
                           "\n"
                           "Run LAUNCH (an mpirun/mpiexec line, or a single program) with the collscope\n"
                           "preload library, then merge what every process recorded into DIR/trace.db.\n"
                           "Nothing in the job is rebuilt. The exit status is the job's; when the\n"
                           "job succeeded but nothing was traced (no process called MPI or NCCL\n"
                           "through the preload: a PyTorch job on gloo, a launcher that clears\n"
                           "LD_PRELOAD), 4, with a message that says why and what to do instead\n"
                           "(for a PyTorch job: record it with torch.profiler and use `collscope\n"
                           "import`).\n"
                           "\n"
                           "  -o, --output DIR   output folder (default: collscope.out); earlier traces\n"
                           "                     in it are replaced (only collscope's own files, never\n"
                           "                     through a symbolic link)\n"
                           "  --force            accept an output folder that belongs to another user or\n"
                           "                     that every user may write to (refused by default)\n"
                           "  --wait             when another collscope command is using DIR (a run, an\n"
                           "                     ingest, import or merge), wait for it to end; without\n"
                           "                     it, this run is refused (exit 1) and the job not started\n"
                           "  --mpi IMPL         which MPI the job uses: openmpi, mpich or none (default:\n"
                           "                     guessed from the launcher and the program)\n"
                           "  --no-callsites     do not record call sites\n"
                           "  --no-ingest        leave the logs; build the trace later with collscope ingest\n"
                           "  --merge            always merge the rank stores into DIR/trace.db\n"
                           "  --no-merge         leave the rank stores in DIR/ranks with the job index\n"
                           "                     DIR/index.db (default: so when they hold more than\n"
                           "                     COLLSCOPE_MERGE_MAX bytes, 2 GiB unless set)\n"
                           "  --no-nccl-profiler do not offer the preload to NCCL as its profiler plugin\n"
                           "                     (NCCL_PROFILER_PLUGIN; a value already set is kept)\n"
                           "  --hang-timeout S   a watchdog in every rank records a call in flight for\n"
                           "                     more than S seconds, or a rank whose frequent calls\n"
                           "                     stopped for S seconds, with a stack sample, and says\n"
                           "                     so on stderr (COLLSCOPE_HANG_TIMEOUT; default off)\n"
                           "  --hang-action A    report (default): go on; abort: end the job once the\n"
                           "                     hang is recorded (COLLSCOPE_HANG_ACTION)\n"
                           "  --metrics-file PATH  while the job runs, follow its logs (as collscope top\n"
                           "                     does) and write Prometheus metrics there about once a\n"
                           "                     second (the node exporter's textfile format, renamed\n"
                           "                     into place); the alarms raised are told at the end\n"
                           "  --metrics-port P   serve them at http://127.0.0.1:P/metrics (ADDR:P for\n"
                           "                     another address; 0: any free port, told on stderr)\n"
                           "  --top              show collscope top's view of the job in this terminal\n"
                           "                     while it runs; the job's stdout and stderr go to\n"
                           "                     DIR/job.out and DIR/job.err (replaced when they are\n"
                           "                     ours, never through a link), its stdin is /dev/null;\n"
                           "                     q leaves the view, the job runs on to its end; the\n"
                           "                     alarms are told and kept as with --metrics-*. Without\n"
                           "                     a terminal, said, and run as without it\n"
                           "\n"
                           "Environment read by the preload: COLLSCOPE_CALLSITES=0|1, COLLSCOPE_PAPI=EV,...,\n"
                           "COLLSCOPE_LOG_MAX_MB (default 16384), COLLSCOPE_CLOCK=tsc|monotonic,\n"
                           "COLLSCOPE_EXIT_CONVERT=0 (convert at the end of the run instead of at exit),\n"
                           "COLLSCOPE_HANG_SIGNAL (the watchdog's stack-sampling signal, default RTMIN+6).\n"
                           "See collscope(1).\n";

int cs_cmd_run(int argc, char **argv)
{
    static const struct option opts[] = { { "output", required_argument, NULL, 'o' },
                                          { "mpi", required_argument, NULL, 'm' },
                                          { "no-callsites", no_argument, NULL, 'C' },
                                          { "no-ingest", no_argument, NULL, 'I' },
                                          { "no-nccl-profiler", no_argument, NULL, 'P' },
                                          { "force", no_argument, NULL, 'F' },
                                          { "hang-timeout", required_argument, NULL, 'T' },
                                          { "hang-action", required_argument, NULL, 'A' },
                                          { "merge", no_argument, NULL, 'g' },
                                          { "no-merge", no_argument, NULL, 'G' },
                                          { "wait", no_argument, NULL, 'W' },
                                          { "metrics-file", required_argument, NULL, 'x' },
                                          { "metrics-port", required_argument, NULL, 'X' },
                                          { "top", no_argument, NULL, 'V' },
                                          { NULL, 0, NULL, 0 } };
    const char *out = "collscope.out", *mpi = NULL, *hang_timeout = NULL, *hang_action = NULL;
    const char *metrics_file = NULL, *metrics_port = NULL;
    int callsites = 1, ingest = 1, ncclprof = 1, force = 0, merge = CS_MERGE_AUTO, wait = 0, top = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+o:", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'm': mpi = optarg; break;
        case 'C': callsites = 0; break;
        case 'I': ingest = 0; break;
        case 'P': ncclprof = 0; break;
        case 'F': force = 1; break;
        case 'T': hang_timeout = optarg; break;
        case 'A': hang_action = optarg; break;
        case 'g': merge = CS_MERGE_YES; break;
        case 'G': merge = CS_MERGE_NO; break;
        case 'W': wait = 1; break;
        case 'x': metrics_file = optarg; break;
        case 'X': metrics_port = optarg; break;
        case 'V': top = 1; break;
        default: fputs(cs_help_run, stderr); return 2;
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
        if (strcmp(hang_action, "report") != 0 && strcmp(hang_action, "abort") != 0) {
            cs_error("run: --hang-action '%s' is not report or abort", hang_action);
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
    if (strcmp(mpi, "none") == 0)
        mpi = "nompi";
    if (strcmp(mpi, "openmpi") != 0 && strcmp(mpi, "mpich") != 0 && strcmp(mpi, "nompi") != 0) {
        cs_error("run: unknown MPI '%s' (openmpi, mpich or none)", mpi);
        return 2;
    }
    if (metrics_file || metrics_port || top) {
        char err[1200];
        cs_live_opts lo;
        cs_live_opts_default(&lo);
        cs_live_pub *pub = cs_live_pub_new(metrics_file, metrics_port, err, sizeof err);
        if (!pub) {
            cs_error("run: %s", err);
            return 2;
        }
        cs_run_live(pub, &lo, top);
    }

    return cs_run_job(launch, out, mpi, callsites, ingest, ncclprof, force, merge, wait);
}
