/* msg.h: how collscope's programs print a message: one line on stderr
 * after "collscope: ". Only programs and the code that speaks for them
 * (the commands, the import and export drivers) print; the libraries
 * return their message in the caller's buffer. */
#ifndef CS_MSG_H
#define CS_MSG_H

/* An error: the command will exit non-zero. */
void cs_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A note: what the command did or left out; it goes on. */
void cs_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
