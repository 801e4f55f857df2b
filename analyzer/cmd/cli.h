/* cli.h: what the collscope subcommands share: the command table's entry,
 * each command's entry point and help text (one cmd_*.c per command), and
 * the command's way of printing messages. The analysis itself is in
 * libcsanalysis (analyzer/analysis/csanalysis.h). */
#ifndef CS_CLI_H
#define CS_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "common/fmt.h"
#include "common/stats.h"
#include "common/msg.h"
#include "common/opts.h"
#include "libtrace/store.h"

/* A subcommand: collected in one table in main.c. */
typedef struct cs_cmd {
    const char *name;
    const char *summary;
    const cs_optset *opts; /* its operands, options and help texts: its parser,
                            * its --help and what `collscope --help` shows of it */
    int (*run)(int argc, char **argv);
} cs_cmd;

int cs_cmd_run(int argc, char **argv);
int cs_cmd_ingest(int argc, char **argv);
int cs_cmd_report(int argc, char **argv);
int cs_cmd_analyze(int argc, char **argv);
int cs_cmd_diff(int argc, char **argv);
int cs_cmd_check_estimate(int argc, char **argv);
int cs_cmd_export(int argc, char **argv);
int cs_cmd_import(int argc, char **argv);
int cs_cmd_status(int argc, char **argv);
int cs_cmd_merge(int argc, char **argv);
int cs_cmd_top(int argc, char **argv);
int cs_cmd_tui(int argc, char **argv); /* tui/cmd_tui.c */

/* Each command's options and help texts (cmd_NAME.c). */
extern const cs_optset cs_optset_run, cs_optset_ingest, cs_optset_report, cs_optset_analyze, cs_optset_diff,
    cs_optset_check_estimate, cs_optset_export, cs_optset_import, cs_optset_status, cs_optset_top, cs_optset_merge,
    cs_optset_tui;

/* Take the lock of the output folder DIR for command CMD (libtrace/dirlock.h):
 * 0 taken (held until the process ends or cs_dirlock_release); 1 another
 * command holds it (wait: block until it is free instead); -1 it cannot be
 * taken. On 1 and -1 the message is printed. */
int cs_cli_lock(const char *cmd, const char *dir, int wait);

/* `collscope report`'s options, parsed without running the report (the
 * pointers point into argv). */
typedef struct cs_report_opts {
    const char *format, *outpath, *baseline, *failon, *trace; /* format: a known one */
    int full;                                                 /* --full */
} cs_report_opts;
/* 0, or 2 (bad usage) after printing the usage or one message. */
int cs_report_parse_opts(int argc, char **argv, cs_report_opts *o);

/* Rebuild DIR/trace.db from DIR/logs (force: reconvert every log, else
 * only those without a current per-rank file). */
typedef struct cs_ingest_result {
    int logs, converted, failed, crashed;
    int damaged;   /* logs cut short or damaged: kept up to the damage */
    int other_run; /* logs of another run than the one kept, left out */
    int64_t spans, dropped;
    int unmerged; /* the job was left as rank stores and DIR/index.db */
    int nologs;   /* no process left a log: nothing was traced */
} cs_ingest_result;
/* How the job is kept (docs/schema.md): merged into DIR/trace.db, left as
 * its rank stores and an index, or by size (COLLSCOPE_MERGE_MAX). */
enum { CS_MERGE_AUTO = -1, CS_MERGE_NO = 0, CS_MERGE_YES = 1 };
/* The size past which a job is left unmerged: COLLSCOPE_MERGE_MAX bytes
 * of rank stores, else CS_MERGE_MAX_DEFAULT; -1 (with a message) when the
 * variable is no number. */
#define CS_MERGE_MAX_DEFAULT (2LL << 30)
int64_t cs_ingest_merge_max(void);
/* Build DIR/trace.db from DIR/logs (or, merge CS_MERGE_NO or a job past
 * cs_ingest_merge_max, DIR/index.db over the rank stores). The folder must be safe to write
 * into (cs_log_dir_safe; `force` accepts one of another user, and also
 * reconverts every log). Logs of one run only are merged: that of the
 * newest log. */
int cs_ingest_dir(const char *dir, int force, int merge, const char *command, cs_ingest_result *res);
/* When the job of `collscope run` ended (CLOCK_REALTIME ns of this host,
 * which the ingested spans' times follow), for the next cs_ingest_dir to keep in the trace
 * (meta job_end_ns, job_end_host): a process of this host that died
 * without an exit record was gone by then. */
void cs_ingest_job_end(int64_t mono_ns);
/* Remove DIR/NAME and its SQLite side files (-wal, -shm, -journal, .tmp),
 * where they are regular files: never through a link. */
void cs_ingest_remove(const char *dir, const char *name);

/* Run the job LAUNCH (argv style) under the tracer with the preload of
 * mpi ("openmpi", "mpich" or "nompi"), its output in the folder out, then
 * build out/trace.db unless !ingest (run.c). The folder is locked for the
 * whole run (cs_cli_lock; wait: wait for another command's run to end).
 * Returns the job's exit status (127 when it could not be started; 1 when
 * another command holds the folder, and the job was not started;
 * CS_RUN_NOTHING_TRACED when the job succeeded but no process of it left
 * a log, said with why and what to do instead). */
#define CS_RUN_NOTHING_TRACED 4
int cs_run_job(char **launch, const char *out, const char *mpi, int callsites, int ingest, int ncclprof, int force,
               int merge, int wait);
/* Follow the job cs_run_job starts while it runs (analyzer/live):
 * publish its metrics through pub (taken over, freed by the run; one of
 * neither file nor port publishes nothing); the alarms raised are told at
 * its end and kept in the trace. top: show the view (tui/top.c) in this
 * terminal while the job's output goes to DIR/CS_RUN_JOB_OUT and
 * DIR/CS_RUN_JOB_ERR (without a terminal: said, and run as without).
 * Call before cs_run_job. */
#define CS_RUN_JOB_OUT "job.out"
#define CS_RUN_JOB_ERR "job.err"
struct cs_live_pub;
struct cs_live_opts;
void cs_run_live(struct cs_live_pub *pub, const struct cs_live_opts *opt, int top);
/* The MPI a launch line uses, guessed from its launcher and program
 * (COLLSCOPE_MPI first): "openmpi", "mpich", "nompi" or what COLLSCOPE_MPI says. */
const char *cs_run_guess_mpi(char **launch);

/* Resolve call-site frames with addr2line and label the call sites. */
int cs_symbolize(cs_store *st);

#endif
