/* fuzz_report_opts.c: the report's option parser. The bytes are split at
 * NUL bytes into `collscope report`'s arguments; cs_report_parse_opts
 * parses them as the command does (without running the report), and the
 * gates of --fail-on are parsed and evaluated on a small report model
 * with a baseline, as the command does after loading the analysis. */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "analyzer/cmd/cli.h"
#include "analyzer/report/report.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The message functions (common/msg.h), silent here. */
void cs_error(const char *fmt, ...)
{
    (void)fmt;
}
void cs_note(const char *fmt, ...)
{
    (void)fmt;
}
void cs_msg_out(const char *fmt, ...)
{
    (void)fmt;
}
void cs_msg_line(FILE *f, const char *fmt, ...)
{
    (void)f, (void)fmt;
}
void cs_msg_vline(FILE *f, const char *prefix, const char *fmt, va_list ap)
{
    (void)f, (void)prefix, (void)fmt, (void)ap;
}
const char *cs_msg_name(const char *name, char *buf, size_t len)
{
    (void)name;
    if (len)
        buf[0] = '\0';
    return buf;
}

#define CS_FUZZ_MAXARGS 64

static void cs_fuzz_model(cs_report_data *d, cs_straggler *s, cs_tail_row *t, int64_t step)
{
    memset(d, 0, sizeof *d);
    d->strag = s;
    d->nstrag = 1;
    d->tails = t;
    d->ntails = 1;
    d->step_median_ns = step;
    d->step_p90_ns = step + step / 10;
    snprintf(s->kind, sizeof s->kind, "persistent");
    s->rank = 2;
    s->src = s->dst = -1;
    s->cost_ns = step / 2 + step / 100; /* 51 % of the step */
    s->lateness_ns = s->cost_ns;
    t->op = 1;
    t->comm = 1;
    t->count = 100;
    t->p50_ns = step / 10;
    t->p90_ns = step / 5;
    t->p99_ns = step / 2;
    t->max_ns = step;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = 0;
    char *argv[CS_FUZZ_MAXARGS + 2];
    int argc = 0;
    argv[argc++] = "report";
    for (size_t i = 0; i <= size && argc < CS_FUZZ_MAXARGS;) {
        argv[argc++] = buf + i;
        i += strlen(buf + i) + 1;
    }
    argv[argc] = NULL;
    cs_report_opts o;
    if (cs_report_parse_opts(argc, argv, &o) == 0 && o.failon) {
        cs_straggler s, bs;
        cs_tail_row t, bt;
        memset(&s, 0, sizeof s);
        memset(&bs, 0, sizeof bs);
        memset(&t, 0, sizeof t);
        memset(&bt, 0, sizeof bt);
        cs_report_data d, base;
        cs_fuzz_model(&d, &s, &t, 10000000);
        cs_fuzz_model(&base, &bs, &bt, 9000000);
        cs_gate *gates = NULL;
        char err[512];
        cs_gates_eval(o.failon, &d, o.baseline ? &base : NULL, &gates, err, sizeof err);
        free(gates);
    }
    free(buf);
    return 0;
}
