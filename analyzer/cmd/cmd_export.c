/* cmd_export.c: `collscope export DIR|TRACE.db [--format FMT] [-o PATH]`:
 * the trace and its analysis (analysed first unless current, as `report`
 * does) in a format other viewers read (the table of export.c). */
#include "config.h"
#include "analyzer/cmd/cli.h"
#include "analyzer/analysis/csanalysis.h"
#include "analyzer/formats/export.h"
#include "analyzer/formats/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { EX_FORMAT, EX_OUTPUT };
static const cs_opt cs_export_opt[] = {
    [EX_FORMAT] = { "format", 0, CS_OPT_REQUIRED, "FMT", NULL, CS_OPT_OWN,
                    "chrome (the default): Chrome trace-event JSON, for ui.perfetto.dev and chrome://tracing: a "
                    "process per rank, a track per thread and per GPU stream, every span one slice with its op, "
                    "communicator, seq, bytes, peer, call site and flags; flow arrows from each send to its "
                    "receive and from the last rank to enter each collective to the others; an \"analysis\" "
                    "process with the steps, the straggler verdicts and the imposed waits; each rank's waits as "
                    "a counter\n"
                    "perfetto: Perfetto's native protobuf trace (TracePacket, TrackEvent), the same content, for "
                    "traces too big for JSON: a process per rank, a track per thread, GPU stream and counter, "
                    "every span a slice with the same fields as debug annotations, flows, the analysis\n"
                    "otf2: an OTF2 archive (folder; anchor file traces.otf2) for Vampir and Scalasca: a location "
                    "per rank thread and per GPU stream, Enter/Leave per span, MPI collectives, sends and "
                    "receives as OTF2's MPI records, communicators as OTF2 groups and comms (needs a build with "
                    "libotf2)\n"
                    "kineto: PyTorch profiler (Kineto) JSON, one file per rank (rank-R.pt.trace.json) in a "
                    "folder, for Holistic Trace Analysis and `collscope import`: distributedInfo with the "
                    "communicators as process groups, collectives and p2p as record_param_comms, NCCL GPU times "
                    "and CUPTI activity as kernels on streams, ProfilerStep#N from the step markers",
                    .values_of = cs_export_values },
    [EX_OUTPUT] = { "output", 'o', CS_OPT_REQUIRED, "PATH", NULL, CS_OPT_OWN,
                    "the output file (default DIR/trace.chrome.json, or DIR/trace.perfetto-trace; for a file "
                    "STEM.db, STEM.chrome.json or STEM.perfetto-trace beside it); - for standard output. Written "
                    "to a new file beside PATH and renamed onto it when complete: never through a symbolic link, "
                    "never a folder, nothing left behind on failure\n"
                    "otf2: the archive's folder (default DIR/otf2; for a file STEM.db, STEM.otf2 beside it), "
                    "written as a new folder and renamed into place; an existing one is replaced only when it "
                    "holds nothing but an OTF2 archive of this user's\n"
                    "kineto: the folder (default DIR/kineto; for a file STEM.db, STEM.kineto beside it), made "
                    "when absent, never through a link; its files are written as above, none left when the "
                    "export fails; not - (standard output)" },
};

const cs_optset cs_optset_export = {
    .prog = "collscope export",
    .lead = "DIR|TRACE.db",
    .opt = cs_export_opt,
    .nopt = CS_OPTS_N(cs_export_opt),
    .about = "Write the trace and its analysis (run and stored first unless current, as\n"
             "by `collscope report`) in a format other viewers read. Times are on the\n"
             "aligned time line of the analysis.\n"
             "\n",
    .after = "\n"
             "See docs/interop.md for what maps to what and what is lost.\n"
             "\n"
             "Exit status: 0; 1 when the trace cannot be read or the output cannot be\n"
             "written (one message names the file), or when the trace was damaged and\n"
             "the export is of what could be read of it; 2 on bad usage.\n",
};

/* The default output: DIR/trace.SUFFIX for a folder, STEM.SUFFIX for a
 * file STEM.db. */
static void export_default_path(const cs_source *src, const char *suffix, char *out, size_t len)
{
    char db[4200];
    snprintf(db, sizeof db, src->is_dir ? "%s/trace.db" : "%s", src->arg);
    size_t n = strlen(db);
    if (n > 3 && strcmp(db + n - 3, ".db") == 0)
        n -= 3;
    snprintf(out, len, "%.*s.%s", (int)n, db, suffix);
}

/* The default output folder of a folder format: DIR/FOLDER for a folder,
 * STEM.FOLDER for a file STEM.db. */
static void export_default_dir(const cs_source *src, const char *folder, char *out, size_t len)
{
    const char *arg = src->arg;
    size_t n = strlen(arg);
    if (src->is_dir) {
        while (n > 1 && arg[n - 1] == '/')
            n--;
        snprintf(out, len, "%.*s/%s", (int)n, arg, folder);
        return;
    }
    if (n > 3 && strcmp(arg + n - 3, ".db") == 0)
        n -= 3;
    snprintf(out, len, "%.*s.%s", (int)n, arg, folder);
}

/* A folder format (export.h): written into a new folder, renamed onto
 * outpath when complete. 0, or -1 with one message printed. */
static int export_dir(const cs_export_format *fmt, const char *outpath, cs_store *st, cs_export_stats *stats)
{
    char err[1024] = "";
    cs_outdir out;
    if (cs_outdir_open(&out, "export", outpath, fmt->names) != 0)
        return -1;
    int rc = fmt->write_dir(out.tmp, st, stats, err, sizeof err);
    if (rc != 0)
        cs_error("%s", err);
    if (cs_outdir_close(&out, "export", rc == 0, fmt->names) != 0)
        rc = -1;
    return rc;
}

int cs_cmd_export(int argc, char **argv)
{
    const char *format = "chrome", *outpath = NULL;
    int c;
    cs_opts_parser p;
    cs_opts_begin(&p, &cs_optset_export);
    while ((c = cs_opts_next(&p, argc, argv)) != CS_OPTS_END) {
        switch (c) {
        case EX_FORMAT: format = optarg; break;
        case EX_OUTPUT: outpath = optarg; break;
        default: cs_opts_help(stderr, &cs_optset_export); return 2;
        }
    }
    if (optind != argc - 1) {
        cs_opts_help(stderr, &cs_optset_export);
        return 2;
    }
    const char *trace = argv[optind];
    /* One thread reads the store: SQLite without the mutex it takes in
     * every call (a quarter of a big export's reading time). Refused,
     * harmlessly, where SQLite has already started. */
    sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
    const cs_export_format *fmt = cs_export_find(format);
    if (!fmt) {
        char names[256];
        cs_error("export: unknown format '%s' (%s)", format, cs_export_names(names, sizeof names));
        return 2;
    }
    char defpath[4200] = "", err[1024] = "";
    cs_source src;
    if (cs_source_open(trace, &src, err, sizeof err) != 0) {
        cs_error("%s", err);
        return 1;
    }
    if (!outpath) {
        if (fmt->write_dir)
            export_default_dir(&src, fmt->folder, defpath, sizeof defpath);
        else
            export_default_path(&src, fmt->suffix, defpath, sizeof defpath);
        outpath = defpath;
    }
    if (fmt->write_dir && strcmp(outpath, "-") == 0) {
        cs_error("export: the %s format writes a folder, not standard output", fmt->name);
        return 2;
    }
    int tostdout = strcmp(outpath, "-") == 0;
    cs_store *st = cs_analysis_open(&src, 0, 0, stderr, err, sizeof err);
    if (!st) {
        cs_error("%s", err);
        return 1;
    }
    /* A damaged trace: cs_analysis_open said so (one note) and gave what
     * could be read of it: exported all the same, exit 1. */
    char from[4200], recovered[1536];
    int partial = cs_store_recovered(st, from, sizeof from, recovered, sizeof recovered);
    cs_export_stats stats;
    memset(&stats, 0, sizeof stats);
    if (fmt->write_dir) {
        int drc;
        if (fmt->names) {
            drc = export_dir(fmt, outpath, st, &stats);
        } else {
            drc = fmt->write_dir(outpath, st, &stats, err, sizeof err);
            if (drc != 0 && err[0])
                cs_error("%s", err);
        }
        if (drc == 0)
            cs_note("export: %s: %lld spans, %lld flows, %lld steps (%lld events)", outpath, (long long)stats.spans,
                    (long long)stats.flows, (long long)stats.analysis, (long long)stats.events);
        cs_store_close(st);
        return drc != 0 ? 1 : partial ? 1 : 0;
    }
    cs_outfile out;
    if (cs_outfile_open(&out, "export", outpath) != 0) {
        cs_store_close(st);
        return 1;
    }
    FILE *f = out.f;
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    int rc = fmt->write(f, st, &stats, err, sizeof err);
    if (rc != 0)
        cs_error("%s", err);
    if (cs_outfile_close(&out, "export", rc == 0) != 0)
        rc = -1;
    if (rc == 0)
        cs_note("export: %s: %lld spans, %lld flows, %lld analysis events (%lld events)", tostdout ? "stdout" : outpath,
                (long long)stats.spans, (long long)stats.flows, (long long)stats.analysis, (long long)stats.events);
    cs_store_close(st);
    return rc != 0 ? 1 : partial ? 1 : 0;
}
