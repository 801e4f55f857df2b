/* json.h: writing JSON values to a stream. Every JSON collscope writes
 * goes through these, so strings are escaped one way and a number that is
 * not finite never reaches the output as bare nan or inf. */
#ifndef CS_JSON_H
#define CS_JSON_H

#include <stdint.h>
#include <stdio.h>

/* A string with quotes; NULL writes "". Control characters are escaped;
 * bytes of 0x80 and above are copied (the input is taken as UTF-8). */
void cs_json_str(FILE *f, const char *s);
/* A number with printf format fmt (for example "%.3f"), or null when v is
 * NaN or infinite. Returns 1 when null was written, else 0. */
int cs_json_num(FILE *f, const char *fmt, double v);
/* How many numbers cs_json_num has written as null in this process. */
unsigned long cs_json_nulls(void);
/* When cs_json_num wrote more nulls than since (an earlier cs_json_nulls()),
 * one more object member: ,"null_note": "N figures were not finite ...",
 * so a reader knows the nulls stand for NaN or infinite figures. Write it
 * last in an object, before the closing brace. */
void cs_json_null_note(FILE *f, unsigned long since);
/* An integer, or null when v is negative (the store's "unknown"). */
void cs_json_i64_or_null(FILE *f, int64_t v);

#endif
