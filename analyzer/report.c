/* report.c: `collscope report`: where the communication time went, per op,
 * per communicator and per call site, and each rank's share of time in
 * communication. Text for a terminal, JSON (versioned) for programs. */
#include "config.h"
#include "analyzer/analysis.h"
#include "analyzer/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cs_help_report[] = "usage: collscope report DIR|TRACE.db [--format text|json|markdown|junit] [-o FILE]\n"
                              "                        [--baseline DIR] [--fail-on GATES]\n"
                              "\n"
                              "Summarize a trace: for each op, communicator and call site the number of\n"
                              "calls, the bytes, and the total, p50, p90, p99 and maximum time; for each\n"
                              "rank the share of its wall time spent inside traced calls. Then the\n"
                              "cross-rank analysis (run and stored first unless current, as by\n"
                              "`collscope analyze`; in a private copy in $TMPDIR when the trace cannot\n"
                              "be written here): aligned clocks, straggler verdicts with evidence,\n"
                              "steps, who made the others wait, and tail latency per collective group;\n"
                              "the cost model of each collective, the what-if replay (its error against\n"
                              "the measured step time) and the proposals it estimates (fusion with the\n"
                              "apply-mode settings, overlap), each with evidence and gain per step.\n"
                              "\n"
                              "  --format FMT     text (default), json (format \"collscope-report\",\n"
                              "                   version 2, docs/report-json.md), markdown (a CI job\n"
                              "                   summary) or junit (JUnit XML, one test case per gate)\n"
                              "  -o FILE          write the report to FILE instead of standard output\n"
                              "  --baseline DIR   a run to compare with (for the p99 and step gates)\n"
                              "  --fail-on GATES  comma-separated gates; any that fails makes the exit\n"
                              "                   status 3:\n"
                              "                     straggler=PCT  a straggler costs more than PCT % of\n"
                              "                                    the median step time\n"
                              "                     p99=PCT        a collective group's p99 grew more than\n"
                              "                                    PCT % over the baseline\n"
                              "                     step=PCT       the median step time grew more than\n"
                              "                                    PCT % over the baseline\n"
                              "                     verdict        any straggler verdict at all\n"
                              "\n"
                              "Exit status: 0, 1 when the trace cannot be read (one message names the\n"
                              "file and the problem), 2 on bad usage, 3 when a gate failed.\n";

#define CS_REPORT_VERSION 2

typedef cs_group_stat cs_grp;

typedef struct cs_grps {
    cs_grp *a;
    size_t n;
} cs_grps;

static int cs_grp_by_total(const void *x, const void *y)
{
    const cs_grp *a = x, *b = y;
    return a->total < b->total ? 1 : a->total > b->total ? -1 : strcmp(a->key, b->key);
}

/* The groups of one kind, the costliest first. */
static int cs_collect_groups(cs_store *st, const char *by, cs_grps *g)
{
    if (cs_store_group_stats(st, by, &g->a, &g->n) != 0)
        return -1;
    qsort(g->a, g->n, sizeof *g->a, cs_grp_by_total);
    return 0;
}

typedef struct cs_rankrow {
    int rank;
    int64_t busy, wall, spans;
} cs_rankrow;
typedef struct cs_ranks {
    cs_rankrow *a;
    size_t n, cap;
} cs_ranks;

static int cs_rank_row(int rank, int64_t busy, int64_t wall, int64_t spans, void *arg)
{
    cs_ranks *r = arg;
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 16;
        cs_rankrow *na = realloc(r->a, r->cap * sizeof *na);
        if (!na)
            return -1;
        r->a = na;
    }
    r->a[r->n++] = (cs_rankrow){ rank, busy, wall, spans };
    return 0;
}

/* ---- GPU overlap (CUPTI activity; printed only when the trace has it) ---- */
static int cs_overlap_row(int rank, int64_t comm_ns, int64_t exposed_ns, void *arg)
{
    FILE *f = arg;
    char b1[32], b2[32];
    fprintf(f, "  %6d %12s %12s %7.1f%%\n", rank, cs_fmt_ns(comm_ns, b1, sizeof b1),
            cs_fmt_ns(exposed_ns, b2, sizeof b2), comm_ns > 0 ? 100.0 * (double)exposed_ns / (double)comm_ns : 0.0);
    return 0;
}

static void cs_text_gpu_overlap(FILE *f, cs_store *st)
{
    /* The header goes out only if there are rows: write them to memory first. */
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return;
    int n = cs_store_gpu_overlap(st, cs_overlap_row, m);
    fclose(m);
    if (n > 0)
        fprintf(f,
                "\nGPU overlap: NCCL time on the GPU not overlapped by compute (kernels of other streams)\n"
                "  %6s %12s %12s %8s\n%s",
                "rank", "comm (GPU)", "not overlap", "share", buf);
    free(buf);
}

static void cs_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void cs_text_table(FILE *f, const char *title, const char *keyname, const cs_grps *g, int show_op)
{
    char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
    fprintf(f, "\n%s\n", title);
    fprintf(f, "  %-40s %9s %11s %11s %10s %10s %10s %10s\n", keyname, "calls", "bytes", "total", "p50", "p90", "p99",
            "max");
    for (size_t i = 0; i < g->n; i++) {
        const cs_grp *x = &g->a[i];
        char key[300];
        if (show_op)
            snprintf(key, sizeof key, "%s [%s]", x->key, x->op);
        else
            snprintf(key, sizeof key, "%s", x->key);
        fprintf(f, "  %-40.40s %9lld %11s %11s %10s %10s %10s %10s\n", key, (long long)x->count,
                cs_fmt_bytes(x->bytes, b1, sizeof b1), cs_fmt_ns(x->total, b2, sizeof b2),
                cs_fmt_ns(x->p50, b3, sizeof b3), cs_fmt_ns(x->p90, b4, sizeof b4), cs_fmt_ns(x->p99, b5, sizeof b5),
                cs_fmt_ns(x->max, b6, sizeof b6));
    }
    if (g->n == 0)
        fprintf(f, "  (none)\n");
}

static void cs_json_groups(FILE *f, const char *name, const char *keyname, const cs_grps *g, int last)
{
    fprintf(f, "  \"%s\": [", name);
    for (size_t i = 0; i < g->n; i++) {
        const cs_grp *x = &g->a[i];
        fprintf(f, "%s\n    {\"%s\": ", i ? "," : "", keyname);
        cs_json_str(f, x->key);
        fprintf(f, ", \"op\": ");
        cs_json_str(f, x->op);
        fprintf(f,
                ", \"calls\": %lld, \"bytes\": %lld, \"total_ns\": %lld, \"p50_ns\": %lld, \"p90_ns\": %lld,"
                " \"p99_ns\": %lld, \"max_ns\": %lld}",
                (long long)x->count, (long long)x->bytes, (long long)x->total, (long long)x->p50, (long long)x->p90,
                (long long)x->p99, (long long)x->max);
    }
    fprintf(f, "%s]%s\n", g->n ? "\n  " : "", last ? "" : ",");
}

int cs_cmd_report(int argc, char **argv)
{
    static const struct option opts[] = { { "format", required_argument, NULL, 'f' },
                                          { "output", required_argument, NULL, 'o' },
                                          { "baseline", required_argument, NULL, 'b' },
                                          { "fail-on", required_argument, NULL, 'g' },
                                          { NULL, 0, NULL, 0 } };
    const char *format = "text", *outpath = NULL, *baseline = NULL, *failon = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "f:o:", opts, NULL)) != -1) {
        switch (c) {
        case 'f': format = optarg; break;
        case 'o': outpath = optarg; break;
        case 'b': baseline = optarg; break;
        case 'g': failon = optarg; break;
        default: fputs(cs_help_report, stderr); return 2;
        }
    }
    if (optind != argc - 1) {
        fputs(cs_help_report, stderr);
        return 2;
    }
    int json = strcmp(format, "json") == 0, md = strcmp(format, "markdown") == 0 || strcmp(format, "md") == 0,
        junit = strcmp(format, "junit") == 0;
    if (!json && !md && !junit && strcmp(format, "text") != 0) {
        cs_error("report: unknown format '%s' (text, json, markdown or junit)", format);
        return 2;
    }
    cs_report_data ad, bd;
    memset(&ad, 0, sizeof ad);
    memset(&bd, 0, sizeof bd);
    cs_gate *gates = NULL;
    int ngates = 0;
    if (baseline) {
        cs_store *bs = cs_analysis_open(baseline, 0, 0);
        if (!bs)
            return 1;
        int r = cs_report_load(bs, &bd);
        if (r != 0)
            cs_error("%s: cannot read the stored analysis", cs_store_path(bs));
        cs_store_close(bs);
        if (r != 0) {
            cs_report_free(&bd);
            return 1;
        }
    }
    cs_store *st = cs_analysis_open(argv[optind], 0, 0);
    if (!st) {
        cs_report_free(&bd);
        return 1;
    }
    if (cs_report_load(st, &ad) != 0) {
        cs_error("%s: cannot read the stored analysis", cs_store_path(st));
        cs_store_close(st);
        cs_report_free(&bd);
        return 1;
    }
    {
        char gerr[512];
        ngates = cs_gates_eval(failon, &ad, baseline ? &bd : NULL, &gates, gerr, sizeof gerr);
        if (ngates < 0) {
            cs_error("%s", gerr);
            cs_store_close(st);
            cs_report_free(&ad);
            cs_report_free(&bd);
            return 2;
        }
    }
    cs_proc *procs = NULL;
    int nproc = 0;
    cs_grps by_op, by_comm, by_site;
    cs_ranks ranks = { 0 };
    if (cs_store_procs(st, &procs, &nproc) != 0 || cs_collect_groups(st, "op", &by_op) != 0 ||
        cs_collect_groups(st, "comm", &by_comm) != 0 || cs_collect_groups(st, "callsite", &by_site) != 0 ||
        cs_store_rank_busy(st, cs_rank_row, &ranks) != 0) {
        cs_error("%s: cannot read the trace (corrupt?)", cs_store_path(st));
        cs_store_close(st);
        cs_report_free(&ad);
        cs_report_free(&bd);
        free(gates);
        return 1;
    }
    FILE *f = stdout;
    if (outpath && !(f = fopen(outpath, "w"))) {
        cs_error("cannot write %s", outpath);
        cs_store_close(st);
        cs_report_free(&ad);
        cs_report_free(&bd);
        free(gates);
        return 1;
    }
    int64_t spans = 0, dropped = 0, overhead = 0;
    int crashed = 0;
    for (int i = 0; i < nproc; i++) {
        spans += procs[i].spans;
        dropped += procs[i].dropped;
        overhead += procs[i].overhead_ns;
        crashed += strcmp(procs[i].status, "crashed") == 0;
    }
    char b1[32], b2[32];
    if (md) {
        cs_write_markdown(f, cs_store_path(st), &ad, gates, ngates);
    } else if (junit) {
        cs_write_junit(f, cs_store_path(st), &ad, gates, ngates);
    } else if (!json) {
        fprintf(f, "collscope report: %s\n", cs_store_path(st));
        fprintf(f, "  %d processes, %lld spans", nproc, (long long)spans);
        if (dropped)
            fprintf(f, ", %lld dropped (log full)", (long long)dropped);
        if (crashed) {
            fprintf(f, ", crashed ranks:");
            for (int i = 0; i < nproc; i++)
                if (strcmp(procs[i].status, "crashed") == 0)
                    fprintf(f, " %d", procs[i].rank);
        }
        fprintf(f, "\n  clocks: %s; tool overhead about %s in all\n", nproc ? procs[0].clock : "-",
                cs_fmt_ns(overhead, b1, sizeof b1));
        cs_text_table(f, "Per op", "op", &by_op, 0);
        cs_text_table(f, "Per communicator (job-wide id)", "communicator", &by_comm, 1);
        cs_text_table(f, "Per call site", "call site", &by_site, 1);
        fprintf(f, "\nPer rank: time inside traced calls\n  %6s %12s %12s %8s %10s\n", "rank", "in calls", "wall",
                "share", "spans");
        for (size_t i = 0; i < ranks.n; i++) {
            cs_rankrow *r = &ranks.a[i];
            fprintf(f, "  %6d %12s %12s %7.1f%% %10lld\n", r->rank, cs_fmt_ns(r->busy, b1, sizeof b1),
                    cs_fmt_ns(r->wall, b2, sizeof b2), r->wall > 0 ? 100.0 * (double)r->busy / (double)r->wall : 0.0,
                    (long long)r->spans);
        }
        cs_write_analysis_text(f, &ad, gates, ngates);
        cs_text_gpu_overlap(f, st);
    } else {
        fprintf(f, "{\n  \"format\": \"collscope-report\",\n  \"version\": %d,\n  \"trace\": ", CS_REPORT_VERSION);
        cs_json_str(f, cs_store_path(st));
        fprintf(f, ",\n  \"processes\": %d,\n  \"spans\": %lld,\n  \"dropped\": %lld,\n  \"tool_overhead_ns\": %lld,\n",
                nproc, (long long)spans, (long long)dropped, (long long)overhead);
        fprintf(f, "  \"ranks\": [");
        for (size_t i = 0; i < ranks.n; i++) {
            cs_rankrow *r = &ranks.a[i];
            const cs_proc *p = NULL;
            for (int k = 0; k < nproc; k++)
                if (procs[k].rank == r->rank)
                    p = &procs[k];
            fprintf(f,
                    "%s\n    {\"rank\": %d, \"in_calls_ns\": %lld, \"wall_ns\": %lld, \"share\": %.4f, "
                    "\"spans\": %lld, \"status\": ",
                    i ? "," : "", r->rank, (long long)r->busy, (long long)r->wall,
                    r->wall > 0 ? (double)r->busy / (double)r->wall : 0.0, (long long)r->spans);
            cs_json_str(f, p ? p->status : "");
            fprintf(f, ", \"clock\": ");
            cs_json_str(f, p ? p->clock : "");
            fprintf(f, "}");
        }
        fprintf(f, "%s],\n", ranks.n ? "\n  " : "");
        cs_json_groups(f, "ops", "op", &by_op, 0);
        cs_json_groups(f, "comms", "comm", &by_comm, 0);
        cs_json_groups(f, "callsites", "callsite", &by_site, 0);
        cs_write_analysis_json(f, &ad, gates, ngates);
        fprintf(f, "}\n");
    }
    if (f != stdout)
        fclose(f);
    free(procs);
    free(by_op.a);
    free(by_comm.a);
    free(by_site.a);
    free(ranks.a);
    cs_store_close(st);
    int failed = 0;
    for (int i = 0; i < ngates; i++)
        failed += gates[i].failed;
    free(gates);
    cs_report_free(&ad);
    cs_report_free(&bd);
    return failed ? 3 : 0;
}
