/* outfile.c: the commands' output files (see outfile.h). */
#include "config.h"
#include "analyzer/formats/outfile.h"
#include "common/msg.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The process's umask, for the mode of a file made by mkstemp. */
static mode_t cs_outfile_umask(void)
{
    mode_t m = umask(022);
    umask(m);
    return m;
}

/* The new file being written, removed if SIGINT, SIGTERM or SIGHUP ends
 * the command before it is renamed into place: the handler only unlinks
 * that name (async-signal-safe), then lets the signal end the process as
 * it would have. One file at a time: the commands write one. */
static char cs_outfile_sig_tmp[4300];
static volatile sig_atomic_t cs_outfile_sig_armed;
static const int cs_outfile_sigs[] = { SIGINT, SIGTERM, SIGHUP };

static void cs_outfile_on_signal(int sig)
{
    if (cs_outfile_sig_armed)
        unlink(cs_outfile_sig_tmp);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void cs_outfile_arm(const char *tmp)
{
    cs_outfile_sig_armed = 0;
    snprintf(cs_outfile_sig_tmp, sizeof cs_outfile_sig_tmp, "%s", tmp);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = cs_outfile_on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof cs_outfile_sigs / sizeof cs_outfile_sigs[0]; i++) {
        struct sigaction old;
        /* a signal the caller ignores stays ignored */
        if (sigaction(cs_outfile_sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(cs_outfile_sigs[i], &sa, NULL);
    }
    cs_outfile_sig_armed = 1;
}

static void cs_outfile_disarm(void)
{
    cs_outfile_sig_armed = 0;
}

int cs_outfile_open(cs_outfile *o, const char *cmd, const char *path)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    if (strcmp(path, "-") == 0) {
        o->f = stdout;
        return 0;
    }
    struct stat sb;
    if (lstat(path, &sb) == 0) {
        if (S_ISLNK(sb.st_mode)) {
            cs_error("%s: %s is a symbolic link: refusing to write through it", cmd, path);
            return -1;
        }
        if (S_ISDIR(sb.st_mode)) {
            cs_error("%s: %s is a folder: give a file name", cmd, path);
            return -1;
        }
        if (!S_ISREG(sb.st_mode)) {
            cs_error("%s: %s is not a regular file", cmd, path);
            return -1;
        }
    } else if (errno != ENOENT) {
        cs_error("%s: cannot write %s: %s", cmd, path, strerror(errno));
        return -1;
    }
    if ((size_t)snprintf(o->tmp, sizeof o->tmp, "%s.tmpXXXXXX", path) >= sizeof o->tmp) {
        cs_error("%s: %s: the name is too long", cmd, path);
        return -1;
    }
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        cs_error("%s: cannot write %s: %s", cmd, path, strerror(errno));
        o->tmp[0] = '\0';
        return -1;
    }
    o->f = fchmod(fd, 0644 & ~cs_outfile_umask()) == 0 ? fdopen(fd, "w") : NULL;
    if (!o->f) {
        cs_error("%s: cannot write %s: %s", cmd, path, strerror(errno));
        close(fd);
        unlink(o->tmp);
        o->tmp[0] = '\0';
        return -1;
    }
    cs_outfile_arm(o->tmp);
    return 0;
}

int cs_outfile_close(cs_outfile *o, const char *cmd, int ok)
{
    if (!o->f)
        return ok ? 0 : -1;
    int rc = ok ? 0 : -1;
    if (o->f == stdout) {
        if ((fflush(stdout) != 0 || ferror(stdout)) && rc == 0) {
            cs_error("%s: cannot write to standard output: %s", cmd, strerror(errno));
            rc = -1;
        }
        o->f = NULL;
        return rc;
    }
    int werr = ferror(o->f) || fflush(o->f) != 0 || fsync(fileno(o->f)) != 0;
    int e = errno;
    if (fclose(o->f) != 0 && !werr) {
        werr = 1;
        e = errno;
    }
    o->f = NULL;
    if (werr && rc == 0) {
        cs_error("%s: cannot write %s: %s", cmd, o->path, strerror(e));
        rc = -1;
    }
    if (rc == 0 && rename(o->tmp, o->path) != 0) {
        cs_error("%s: cannot write %s: %s", cmd, o->path, strerror(errno));
        rc = -1;
    }
    if (rc != 0)
        unlink(o->tmp);
    cs_outfile_disarm();
    o->tmp[0] = '\0';
    return rc;
}

/* ---- output folders ---- */

/* Is name one of names? */
static int cs_outdir_named(const char *name, const char *const *names)
{
    for (; *names; names++)
        if (strcmp(name, *names) == 0)
            return 1;
    return 0;
}

/* Remove the regular files of the folder dfd (not following links); -1 when
 * it holds anything else or a removal fails. dfd is closed. */
static int cs_outdir_clear(int dfd, int remove)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        struct stat sb;
        if (fstatat(dfd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode))
            rc = -1;
        else if (remove && unlinkat(dfd, e->d_name, 0) != 0)
            rc = -1;
    }
    closedir(d);
    return rc;
}

/* Does the folder at path hold only what names allows (see outfile.h),
 * owned by this user? With remove, its content is removed too (the folder
 * itself stays). 0 when it does; -1 with what in why. */
static int cs_outdir_walk(const char *path, const char *const *names, int remove, const char **why)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        *why = "cannot be read";
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (sb.st_uid != geteuid()) {
        *why = "belongs to another user";
        close(fd);
        return -1;
    }
    DIR *d = fdopendir(fd);
    if (!d) {
        *why = "cannot be read";
        close(fd);
        return -1;
    }
    int rc = 0, anchor = 0;
    struct dirent *e;
    *why = "holds files that are not this export's";
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (!cs_outdir_named(e->d_name, names) || fstatat(fd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
            rc = -1;
            break;
        }
        if (strcmp(e->d_name, names[0]) == 0)
            anchor = S_ISREG(sb.st_mode);
        if (S_ISDIR(sb.st_mode)) {
            int sub = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
            if (sub < 0 || cs_outdir_clear(sub, remove) != 0 || (remove && unlinkat(fd, e->d_name, AT_REMOVEDIR) != 0))
                rc = -1;
        } else if (!S_ISREG(sb.st_mode) || (remove && unlinkat(fd, e->d_name, 0) != 0)) {
            rc = -1;
        }
    }
    closedir(d);
    if (rc == 0 && !anchor && !remove) {
        *why = "holds no earlier output";
        rc = -1;
    }
    return rc;
}

int cs_outdir_open(cs_outdir *o, const char *cmd, const char *path, const char *const *names)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    if (strcmp(path, "-") == 0) {
        cs_error("%s: this format is a folder of files: give its path, not -", cmd);
        return -1;
    }
    struct stat sb;
    const char *why;
    if (lstat(path, &sb) == 0) {
        if (S_ISLNK(sb.st_mode)) {
            cs_error("%s: %s is a symbolic link: refusing to write through it", cmd, path);
            return -1;
        }
        if (!S_ISDIR(sb.st_mode)) {
            cs_error("%s: %s exists and is not a folder: give a new path", cmd, path);
            return -1;
        }
        if (cs_outdir_walk(path, names, 0, &why) != 0) {
            cs_error("%s: %s exists and %s: refusing to replace it (only an earlier output, %s and its files, is)", cmd,
                     path, why, names[0]);
            return -1;
        }
    } else if (errno != ENOENT) {
        cs_error("%s: cannot write %s: %s", cmd, path, strerror(errno));
        return -1;
    }
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    if ((size_t)snprintf(o->tmp, sizeof o->tmp, "%.*s.tmpXXXXXX", (int)n, path) >= sizeof o->tmp) {
        cs_error("%s: %s: the name is too long", cmd, path);
        o->tmp[0] = '\0';
        return -1;
    }
    if (!mkdtemp(o->tmp)) {
        cs_error("%s: cannot write %s: %s", cmd, path, strerror(errno));
        o->tmp[0] = '\0';
        return -1;
    }
    if (chmod(o->tmp, 0755 & ~cs_outfile_umask()) != 0) {
        cs_error("%s: cannot write %s: %s", cmd, path, strerror(errno));
        rmdir(o->tmp);
        o->tmp[0] = '\0';
        return -1;
    }
    return 0;
}

/* Remove a folder this output wrote (the names of outfile.h). */
static void cs_outdir_remove(const char *dir, const char *const *names)
{
    const char *why;
    cs_outdir_walk(dir, names, 1, &why);
    rmdir(dir);
}

int cs_outdir_close(cs_outdir *o, const char *cmd, int ok, const char *const *names)
{
    if (!o->tmp[0])
        return ok ? 0 : -1;
    int rc = ok ? 0 : -1;
    char old[4400] = "";
    struct stat sb;
    const char *why;
    if (rc == 0 && lstat(o->path, &sb) == 0) {
        /* Checked again: what was ours at open must still be. */
        if (S_ISLNK(sb.st_mode) || !S_ISDIR(sb.st_mode) || cs_outdir_walk(o->path, names, 0, &why) != 0) {
            cs_error("%s: %s changed while it was written: left alone", cmd, o->path);
            rc = -1;
        } else {
            snprintf(old, sizeof old, "%s.oldXXXXXX", o->tmp);
            if (!mkdtemp(old) || rename(o->path, old) != 0) {
                cs_error("%s: cannot replace %s: %s", cmd, o->path, strerror(errno));
                if (old[0])
                    rmdir(old);
                old[0] = '\0';
                rc = -1;
            }
        }
    }
    if (rc == 0 && rename(o->tmp, o->path) != 0) {
        cs_error("%s: cannot write %s: %s", cmd, o->path, strerror(errno));
        rc = -1;
        if (old[0] && rename(old, o->path) == 0)
            old[0] = '\0';
    }
    if (rc != 0)
        cs_outdir_remove(o->tmp, names);
    if (old[0])
        cs_outdir_remove(old, names);
    o->tmp[0] = '\0';
    return rc;
}
