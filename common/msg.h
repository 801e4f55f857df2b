/* msg.h: how collscope's programs print a message: one line on stderr
 * after "collscope: ". Only programs and the code that speaks for them
 * (the commands, the import and export drivers) print; the libraries
 * return their message in the caller's buffer.
 *
 * A message is one line, whatever its parts hold: a control character in
 * it (a newline, an escape, any byte below 0x20 and 0x7f) is printed
 * escaped, as \n, \t, \r or \xHH, and a backslash as \\, so a file name
 * can neither forge a line of collscope's output nor drive the terminal. */
#ifndef CS_MSG_H
#define CS_MSG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* An error: the command will exit non-zero. */
void cs_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A note: what the command did or left out; it goes on. */
void cs_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A result line on standard output ("collscope: " and the line, escaped
 * as above). */
void cs_msg_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* One line to f (no prefix; the newline added), escaped as above: for
 * the lines of a program's own output that carry names. */
void cs_msg_line(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The same with a prefix and a va_list, for a library's notes on the
 * stream its caller gave. */
void cs_msg_vline(FILE *f, const char *prefix, const char *fmt, va_list ap);

/* name escaped as above into buf (cut to len - 1 bytes, never inside an
 * escape); returns buf. For a name printed where a whole line cannot go
 * through the functions above. */
const char *cs_msg_name(const char *name, char *buf, size_t len);

#endif
