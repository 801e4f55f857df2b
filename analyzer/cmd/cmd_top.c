/* cmd_top.c: `collscope top DIR`, the command line of analyzer/live (the
 * figures, the alarms, the metrics) and of its terminal view (tui/top.c). */
#include "config.h"
#include "analyzer/cmd/cli.h"
#include "analyzer/live/live.h"
#include "analyzer/live/live_serve.h"
#include "common/numarg.h"
#ifdef HAVE_NCURSES
#include "tui/top.h"
#endif

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum {
    TP_ONCE,
    TP_HEADLESS,
    TP_INTERVAL,
    TP_SORT,
    TP_COLS,
    TP_METRICSFILE,
    TP_METRICSPORT,
    TP_HANG,
    TP_BASELINE,
    TP_THRESHOLD
};
static const cs_opt cs_top_opt[] = {
    [TP_ONCE] = { "once", 0, CS_OPT_NONE, NULL, NULL, CS_OPT_OWN,
                  "print one frame as text (two polls --interval apart) and exit: for scripts" },
    [TP_HEADLESS] = { "headless", 0, CS_OPT_NONE, NULL, NULL, CS_OPT_OWN,
                      "no view: follow the job until its processes all end (or are gone), publishing the "
                      "metrics" },
    [TP_INTERVAL] = { "interval", 0, CS_OPT_REQUIRED, "S", NULL, CS_OPT_OWN, "seconds between refreshes (default 1)" },
    [TP_SORT] = { "sort", 0, CS_OPT_REQUIRED, "KEY", NULL, CS_OPT_OWN, "rank, straggler, step or comm (default rank)",
                  .values_of = cs_live_sort_values },
    [TP_COLS] = { "cols", 0, CS_OPT_REQUIRED, "N", NULL, CS_OPT_OWN, "width of the --once frame (default 80)" },
    [TP_METRICSFILE] = { "metrics-file", 0, CS_OPT_REQUIRED, "PATH", NULL, CS_OPT_OWN,
                         "write Prometheus metrics there at every refresh (the node exporter's textfile format, "
                         "renamed into place)" },
    [TP_METRICSPORT] = { "metrics-port", 0, CS_OPT_REQUIRED, "P", "[ADDR:]PORT", CS_OPT_OWN,
                         "serve them at http://127.0.0.1:P/metrics (ADDR:P for another address; 0: any free "
                         "port, told on stderr)" },
    [TP_HANG] = { "hang", 0, CS_OPT_REQUIRED, "S", NULL, CS_OPT_OWN,
                  "every rank in a call this long is a hang (default 10)" },
    [TP_BASELINE] = { "baseline", 0, CS_OPT_REQUIRED, "N", NULL, CS_OPT_OWN,
                      "steps of each rank's baseline (default 16)" },
    [TP_THRESHOLD] = { "threshold", 0, CS_OPT_REQUIRED, "H", NULL, CS_OPT_OWN,
                       "the CUSUM's threshold in deviations (default 20)" },
};

const cs_optset cs_optset_top = {
    .prog = "collscope top",
    .lead = "DIR",
    .opt = cs_top_opt,
    .nopt = CS_OPTS_N(cs_top_opt),
    .about = "Watch a job traced into DIR by `collscope run` while it runs, from the\n"
             "logs its ranks write (DIR/logs): only new bytes are read at each refresh,\n"
             "read-only and without a lock, so a slow or stopped top never holds a rank\n"
             "up. Per rank: steps done, the latest steps' median time and its trend\n"
             "(the last 8 against the 8 before), the share of its time inside traced\n"
             "calls, the call it is in and for how long, and a straggler score (its\n"
             "own time per step above the ranks' median, in MADs; 5 or more: late).\n"
             "Steps are the intervals between MPI_Pcontrol markers, or without them\n"
             "between calls of a proxy collective chosen after a warm-up: on the\n"
             "communicator of the most members, the least frequent that recurs (the\n"
             "view says which). The job line: step rate, the slowest rank and its lag,\n"
             "alarms. An alarm names a rank whose own time per step shifted up and\n"
             "stayed, a pipeline stage all of whose ranks' did, a communicator whose\n"
             "collective calls' time per step (once all its members were in them) did,\n"
             "or a link (two ranks) whose point-to-point transfers' time did (a CUSUM\n"
             "against its first steps; docs/live.md; communicators and links not while\n"
             "this host runs more ranks than it has processors, unless\n"
             "COLLSCOPE_COMM_ALARMS=on, COLLSCOPE_LINK_ALARMS=on), with the step where\n"
             "it began and the factor,\n"
             "or a hang (every rank in a call for --hang seconds), named as\n"
             "`collscope status` names it.\n"
             "Keys: q quits, s changes the sort (rank, straggler score, step time,\n"
             "time in calls). Quitting leaves the job alone.\n"
             "\n",
    .after = "\n"
             "Exit status: 0; 1 DIR cannot be read or the terminal cannot be used (one\n"
             "message says why); 2 bad usage. See docs/live.md.\n",
};

static volatile sig_atomic_t top_stop;
static void top_on_signal(int sig)
{
    top_stop = sig;
}

typedef struct top_run {
    cs_live *l;
    cs_live_pub *pub;
    int failed;
} top_run;

static void top_refreshed(void *arg)
{
    top_run *t = arg;
    char err[1200];
    if (t->pub && cs_live_pub_refresh(t->pub, t->l, err, sizeof err) != 0 && !t->failed++)
        cs_note("top: metrics: %s", err);
}

static void top_ready(void *arg)
{
    top_run *t = arg;
    cs_live_pub_answer(t->pub);
}

int cs_cmd_top(int argc, char **argv)
{
    cs_live_opts o;
    cs_live_opts_default(&o);
    int once = 0, headless = 0, sort = CS_LIVE_BY_RANK, c;
    double interval = 1, cols = 80, base = o.base_steps;
    const char *file = NULL, *port = NULL;
    char err[1200];
    if (cs_live_opts_env(&o, err, sizeof err) != 0) {
        cs_error("top: %s", err);
        return 1;
    }
    cs_opts_parser p;
    cs_opts_begin(&p, &cs_optset_top);
    while ((c = cs_opts_next(&p, argc, argv)) != CS_OPTS_END) {
        int bad = 0;
        switch (c) {
        case TP_ONCE: once = 1; break;
        case TP_HEADLESS: headless = 1; break;
        case TP_INTERVAL:
            bad = cs_numarg_double("--interval", optarg, 0.05, 3600, 0, &interval, err, sizeof err);
            break;
        case TP_COLS: bad = cs_numarg_double("--cols", optarg, 40, 1000, 0, &cols, err, sizeof err); break;
        case TP_HANG: bad = cs_numarg_double("--hang", optarg, 0.1, 1e6, 0, &o.hang_s, err, sizeof err); break;
        case TP_BASELINE: bad = cs_numarg_double("--baseline", optarg, 4, 100000, 0, &base, err, sizeof err); break;
        case TP_THRESHOLD: bad = cs_numarg_double("--threshold", optarg, 1, 1e6, 0, &o.cusum_h, err, sizeof err); break;
        case TP_METRICSFILE: file = optarg; break;
        case TP_METRICSPORT: port = optarg; break;
        case TP_SORT:
            if ((sort = cs_live_sort_find(optarg)) < 0) {
                char keys[128];
                snprintf(err, sizeof err, "--sort %s: %s", optarg, cs_live_sort_keys(keys, sizeof keys, 0));
                bad = 1;
            }
            break;
        default: cs_opts_help(stderr, &cs_optset_top); return 2;
        }
        if (bad) {
            cs_error("top: %s", err);
            return 2;
        }
    }
    if (optind != argc - 1) {
        cs_opts_help(stderr, &cs_optset_top);
        return 2;
    }
    o.base_steps = (int)base;
    const char *dir = argv[optind];
    top_run t = { 0 };
    t.l = cs_live_new(dir, &o, err, sizeof err);
    if (!t.l) {
        cs_error("top: %s", err);
        return 1;
    }
    if ((file || port) && !(t.pub = cs_live_pub_new(file, port, err, sizeof err))) {
        cs_error("top: %s", err);
        cs_live_free(t.l);
        return 1;
    }
    int rc = 0;
    if (access(dir, R_OK | X_OK) != 0) {
        cs_error("top: %s: cannot read it: not the output folder of collscope run", dir);
        rc = 1;
    } else if (once) {
        /* two polls: the step rate needs two looks */
        for (int i = 0; i < 2 && rc == 0; i++) {
            if (i)
                usleep((useconds_t)(interval * 1e6));
            /* one frame of everything written (for at most 60 refreshes:
             * ranks that write faster than it reads leave it behind) */
            int polls = 0;
            do {
                if (cs_live_poll(t.l, err, sizeof err) != 0) {
                    cs_error("top: %s", err);
                    rc = 1;
                }
            } while (rc == 0 && cs_live_behind(t.l) && ++polls < 60);
        }
        if (rc == 0) {
            top_refreshed(&t);
            cs_live_frame(t.l, stdout, (int)cols, 0, sort);
        }
    } else if (headless) {
        signal(SIGINT, top_on_signal);
        signal(SIGTERM, top_on_signal);
        signal(SIGHUP, top_on_signal);
        while (!top_stop) {
            if (cs_live_poll(t.l, err, sizeof err) != 0) {
                cs_error("top: %s", err);
                rc = 1;
                break;
            }
            top_refreshed(&t);
            if (cs_live_nproc(t.l) && cs_live_nclosed(t.l) + cs_live_ngone(t.l) == cs_live_nproc(t.l))
                break;
            if (t.pub)
                cs_live_pub_wait(t.pub, (int)(interval * 1000));
            else
                usleep((useconds_t)(interval * 1e6));
        }
        const cs_live_alarm *a;
        size_t n = cs_live_alarms(t.l, &a);
        for (size_t i = 0; i < n; i++)
            cs_msg_line(stdout, "alarm: %s", a[i].text);
    } else {
#ifdef HAVE_NCURSES
        cs_tui_top_hooks hk = {
            .refreshed = top_refreshed, .fd = t.pub ? cs_live_pub_fd(t.pub) : -1, .ready = top_ready, .arg = &t
        };
        rc = cs_tui_top(t.l, interval, sort, &hk);
#else
        (void)top_ready;
        cs_error("top: the terminal view was not built (configure did not find ncursesw); use --once or --headless");
        rc = 1;
#endif
    }
    cs_live_pub_free(t.pub);
    cs_live_free(t.l);
    return rc;
}
