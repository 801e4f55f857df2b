/* dirlock.h: an output folder belongs to one collscope command at a time.
 * The lock is an flock(2) on DIR/collscope.lock, a regular file collscope
 * creates (never through a link) and keeps; it holds the holder's pid,
 * command line and start time. The kernel releases it when the holder
 * ends, however it ends. The descriptor is close-on-exec: a traced job
 * never holds it. Locks are counted per process: a command that holds a
 * folder may take it again (run, then its ingest and merge). */
#ifndef CS_DIRLOCK_H
#define CS_DIRLOCK_H

#include <stddef.h>

#define CS_DIRLOCK_FILE "collscope.lock"

/* Take DIR's lock. wait: block until it is free. 0 taken; 1 held by
 * another process (err names DIR and the holder: pid, command, start
 * time); -1 it cannot be taken (err says why: a link or another user's
 * file at the name, a folder that cannot be written). */
int cs_dirlock_take(const char *dir, int wait, char *err, size_t errlen);

/* Give back one take of DIR's lock (the last one frees it). */
void cs_dirlock_release(const char *dir);

/* Without taking it: 1 when another process holds DIR's lock (holder
 * says who, as cs_dirlock_take's message does), 0 otherwise (no lock
 * file, a free one, this process's own, or one that cannot be read). */
int cs_dirlock_test(const char *dir, char *holder, size_t holderlen);

#endif
