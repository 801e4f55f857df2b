/* fmt.h: how collscope prints times and sizes, in every report and
 * screen alike. Each function writes into buf (at least 16 bytes are
 * enough for any value) and returns buf. */
#ifndef CS_FMT_H
#define CS_FMT_H

#include <stddef.h>
#include <stdint.h>

/* A duration: "0.84 us", "12.3 us", "4.56 ms", "2.10 s"; a negative value
 * (the store's "unknown") prints as "-". */
const char *cs_fmt_ns(int64_t ns, char *buf, size_t len);
/* A signed time difference, in the same units: "-12.3 us", "+0.84 us" when
 * plus is set, else without a sign when positive. */
const char *cs_fmt_dns(int64_t ns, int plus, char *buf, size_t len);
/* A size: "512 B", "4.0 KiB", "1.5 MiB", "2.00 GiB"; negative as "-". */
const char *cs_fmt_bytes(int64_t b, char *buf, size_t len);
/* A table's names joined into buf: name(i, arg) for i < n, a NULL name
 * left out; "a, b or c", or with bar "a|b|c" (as --help shows a value
 * list); cut to fit len. */
const char *cs_fmt_names(char *buf, size_t len, size_t n, const char *(*name)(size_t i, const void *arg),
                         const void *arg, int bar);
/* The output formats of the commands that print text or JSON (diff,
 * status): 0 for "text", 1 for "json", -1 for any other name; their
 * names as cs_fmt_names joins them ("text or json", with bar
 * "text|json"); cs_fmt_textjson_values (with bar) is an option table's
 * values_of, so --help lists what the parser takes. */
int cs_fmt_textjson(const char *name);
const char *cs_fmt_textjson_names(char *buf, size_t len, int bar);
const char *cs_fmt_textjson_values(char *buf, size_t len);

#endif
