/* outfile.h: the commands' output files (-o PATH): written to a new file
 * beside PATH (O_EXCL, so never through a link planted there) and renamed
 * onto it once complete, so that PATH is never a symlink followed, a
 * folder, a device, or a half-written file. "-" is standard output.
 * The new name is PATH.tmp-PID-HOST-XXXXXX: a signal that ends the
 * command removes it (the table below), and the next open of PATH removes
 * such names of processes of this host that no longer run (a command
 * killed outright), naming each in a note. */
#ifndef CS_OUTFILE_H
#define CS_OUTFILE_H

#include <stdio.h>
#include <sys/types.h>

typedef struct cs_outfile {
    FILE *f;
    const char *path; /* as given; "-" for standard output */
    char tmp[4300];   /* the new file beside it, until renamed */
} cs_outfile;

/* Open for writing; 0, or -1 with one message (naming cmd and the path)
 * printed. */
int cs_outfile_open(cs_outfile *o, const char *cmd, const char *path);
/* Finish: ok = the writer succeeded. Flushes, syncs and renames the new
 * file onto the path, or removes it (ok == 0, or a write failed). 0, or -1
 * with one message printed when a write failed (never twice for ok == 0). */
int cs_outfile_close(cs_outfile *o, const char *cmd, int ok);

/* Output folders (a format written as several files, such as an OTF2
 * archive): written into a new folder beside PATH and renamed onto it once
 * complete. PATH may exist only as a folder this user owns that holds
 * nothing but what the same output writes: the names in `names` (the
 * first, the anchor, among them), each a regular file or a folder of
 * regular files; anything else there (a link, another file, another
 * user's folder) is refused and left alone. */
typedef struct cs_outdir {
    const char *path;
    char tmp[4300]; /* the new folder beside it, until renamed */
} cs_outdir;

/* Make the new folder; 0, or -1 with one message (naming cmd and the
 * path) printed. names: NULL-terminated. */
int cs_outdir_open(cs_outdir *o, const char *cmd, const char *path, const char *const *names);
/* Finish: ok = the writer succeeded. Renames the new folder onto the path
 * (the old one, checked as at open, removed), or removes it. 0, or -1
 * with one message printed (never for ok == 0). */
int cs_outdir_close(cs_outdir *o, const char *cmd, int ok, const char *const *names);

/* The command's temporary files and folders: a path in this table is
 * removed (a folder with what it holds, two levels deep, never through a
 * link) if SIGINT, SIGTERM or SIGHUP ends the command; a worker process
 * in it is killed first. The -o files and folders above are in it while
 * they are written. A signal the caller ignores stays ignored. 0, or -1
 * when the table is full. */
int cs_outfile_guard(const char *path, int folder);
void cs_outfile_unguard(const char *path);
/* fork(2) for a worker of the command, named in the table as it starts
 * (the signals held meanwhile): killed first if a signal ends the command. */
pid_t cs_outfile_fork(void);
/* on: pid is a worker of the command; off: it ended (reaped). */
void cs_outfile_guard_child(pid_t pid, int on);

#endif
