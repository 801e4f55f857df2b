/* report_format.c: the format table: each report format's name for
 * --format and its writer (report_<format>.c). A new format is a new
 * writer file and one entry here. */
#include "config.h"
#include "analyzer/report/report_int.h"

#include <string.h>

static const struct {
    const char *name;
    cs_report_writer write;
} cs_report_formats[] = {
    { "text", cs_report_text_write },   { "json", cs_report_json_write },   { "markdown", cs_report_markdown_write },
    { "md", cs_report_markdown_write }, { "junit", cs_report_junit_write },
};

cs_report_writer cs_report_format(const char *name)
{
    for (size_t i = 0; i < sizeof cs_report_formats / sizeof cs_report_formats[0]; i++)
        if (strcmp(name, cs_report_formats[i].name) == 0)
            return cs_report_formats[i].write;
    return NULL;
}
