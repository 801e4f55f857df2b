/* export.c: the table of export formats (export.h). A new format is one
 * row here and its writer in export_NAME.c. */
#include "config.h"
#include "analyzer/formats/export.h"
#include "common/fmt.h"

#include <stdio.h>
#include <string.h>

/* In the order --help and the messages list them. */
static const cs_export_format cs_export_table[] = {
    { .name = "chrome",
      .suffix = "chrome.json",
      .summary = "Chrome trace-event JSON (ui.perfetto.dev, chrome://tracing)",
      .write = cs_export_chrome },
    { .name = "perfetto",
      .suffix = "perfetto-trace",
      .summary = "Perfetto's protobuf trace (ui.perfetto.dev, trace_processor)",
#ifdef HAVE_PROTOBUF_C
      .write = cs_export_perfetto },
#else
      .missing = "the perfetto format is not in this build of collscope (configure found no protobuf-c: "
                 "install libprotobuf-c-dev and protobuf-c-compiler, then configure and build again)" },
#endif
#ifdef HAVE_OTF2
    { .name = "otf2",
      .folder = "otf2",
      .summary = "OTF2 archive (Vampir, Scalasca, otf2-print)",
      .names = cs_export_otf2_names,
      .write_dir = cs_export_otf2 },
#else
    { .name = "otf2",
      .folder = "otf2",
      .summary = "OTF2 archive (not in this build)",
      .missing = "this collscope was built without OTF2 (install libotf2-trace-dev and run configure again)" },
#endif
    { .name = "kineto",
      .folder = "kineto",
      .summary = "PyTorch profiler (Kineto) JSON, a file per rank, for Holistic Trace Analysis",
      .write_dir = cs_export_kineto },
};
#define CS_EXPORT_NFORMATS (sizeof cs_export_table / sizeof cs_export_table[0])

const cs_export_format *cs_export_find(const char *name)
{
    for (size_t i = 0; name && i < CS_EXPORT_NFORMATS; i++)
        if (strcmp(cs_export_table[i].name, name) == 0)
            return &cs_export_table[i];
    return NULL;
}

const cs_export_format *cs_export_formats(size_t *n)
{
    *n = CS_EXPORT_NFORMATS;
    return cs_export_table;
}

static const char *cs_export_name(size_t i, const void *arg)
{
    (void)arg;
    return cs_export_table[i].name;
}

/* The formats' names into buf: "a, b or c", or with bar "a|b|c". */
static const char *cs_export_names_sep(char *buf, size_t len, int bar)
{
    return cs_fmt_names(buf, len, CS_EXPORT_NFORMATS, cs_export_name, NULL, bar);
}

const char *cs_export_names(char *buf, size_t len)
{
    return cs_export_names_sep(buf, len, 0);
}

const char *cs_export_values(char *buf, size_t len)
{
    return cs_export_names_sep(buf, len, 1);
}
