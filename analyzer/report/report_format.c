/* report_format.c: the format table: each report format's name for
 * --format and its writer (report_<format>.c). A new format is a new
 * writer file and one entry here; `collscope report --help` and the
 * message for an unknown format list the names from it. */
#include "config.h"
#include "analyzer/report/report_int.h"
#include "common/fmt.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    cs_report_writer write;
    int alias; /* another name of the format before it (md): taken, not listed in --help or messages */
} cs_report_formats[] = {
    { "text", cs_report_text_write, 0 },         { "json", cs_report_json_write, 0 },
    { "markdown", cs_report_markdown_write, 0 }, { "md", cs_report_markdown_write, 1 },
    { "junit", cs_report_junit_write, 0 },
};
#define CS_REPORT_NFORMATS (sizeof cs_report_formats / sizeof cs_report_formats[0])

cs_report_writer cs_report_format(const char *name)
{
    for (size_t i = 0; i < CS_REPORT_NFORMATS; i++)
        if (strcmp(name, cs_report_formats[i].name) == 0)
            return cs_report_formats[i].write;
    return NULL;
}

/* The name of format i for --help and messages; NULL for an alias. */
static const char *cs_report_format_name(size_t i, const void *arg)
{
    (void)arg;
    return cs_report_formats[i].alias ? NULL : cs_report_formats[i].name;
}

const char *cs_report_format_names(char *buf, size_t len, int bar)
{
    return cs_fmt_names(buf, len, CS_REPORT_NFORMATS, cs_report_format_name, NULL, bar);
}

const char *cs_report_format_values(char *buf, size_t len)
{
    return cs_report_format_names(buf, len, 1);
}
