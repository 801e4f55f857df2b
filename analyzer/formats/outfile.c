/* outfile.c: the commands' output files (see outfile.h). */
#include "config.h"
#include "analyzer/formats/outfile.h"
#include "common/msg.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* The process's umask, for the mode of a file made by mkstemp. */
static mode_t cs_outfile_umask(void)
{
    mode_t m = umask(022);
    umask(m);
    return m;
}

/* ---- the command's temporary paths, removed on SIGINT, SIGTERM, SIGHUP ----
 *
 * A table of names (new files, new folders) and of worker processes. The
 * handler is async-signal-safe: it kills and reaps the workers first (so
 * that none writes on), removes each name (a folder with getdents64 and
 * unlinkat, never through a link), then lets the signal end the process
 * as it would have. Only the process that armed the table acts on it: a
 * forked worker that inherits the handler just ends. */
#define CS_GUARD_PATHS 8
#define CS_GUARD_KIDS 256
typedef struct cs_guard_path {
    volatile sig_atomic_t used; /* 0 free, 1 file, 2 folder */
    char path[4400];
} cs_guard_path;
static cs_guard_path cs_guard_paths[CS_GUARD_PATHS];
static volatile sig_atomic_t cs_guard_kids[CS_GUARD_KIDS];
static volatile sig_atomic_t cs_guard_owner;
static const int cs_guard_sigs[] = { SIGINT, SIGTERM, SIGHUP };

typedef struct cs_guard_dirent {
    uint64_t ino;
    int64_t off;
    unsigned short reclen;
    unsigned char type;
    char name[];
} cs_guard_dirent;

/* Remove the folder name (relative to dfd) and what it holds, down to
 * depth more levels of folders; links are removed, never followed. */
static void cs_guard_rmtree(int dfd, const char *name, int depth)
{
    int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    /* removing while reading may skip a name: read again until a pass
     * finds nothing to remove */
    for (int pass = 0, removed = 1; removed && pass < 16; pass++) {
        removed = 0;
        lseek(fd, 0, SEEK_SET);
        char buf[8192] __attribute__((aligned(8)));
        long n;
        while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
            for (long off = 0; off < n;) {
                cs_guard_dirent *d = (cs_guard_dirent *)(buf + off);
                off += d->reclen;
                if (d->name[0] == '.' && (!d->name[1] || (d->name[1] == '.' && !d->name[2])))
                    continue;
                if (unlinkat(fd, d->name, 0) == 0)
                    removed = 1;
                else if ((errno == EISDIR || errno == EPERM) && depth > 0) {
                    cs_guard_rmtree(fd, d->name, depth - 1);
                    removed = 1;
                }
            }
    }
    close(fd);
    unlinkat(dfd, name, AT_REMOVEDIR);
}

static void cs_guard_on_signal(int sig)
{
    if (cs_guard_owner == (sig_atomic_t)getpid()) {
        for (int i = 0; i < CS_GUARD_KIDS; i++) {
            pid_t k = (pid_t)cs_guard_kids[i];
            if (k > 0 && kill(k, SIGKILL) == 0)
                waitpid(k, NULL, 0);
        }
        for (int i = 0; i < CS_GUARD_PATHS; i++) {
            if (cs_guard_paths[i].used == 1)
                unlink(cs_guard_paths[i].path);
            else if (cs_guard_paths[i].used == 2)
                cs_guard_rmtree(AT_FDCWD, cs_guard_paths[i].path, 2);
        }
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* The handler, installed once (a signal the caller ignores stays ignored). */
static void cs_guard_install(void)
{
    if (cs_guard_owner == (sig_atomic_t)getpid())
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = cs_guard_on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof cs_guard_sigs / sizeof cs_guard_sigs[0]; i++)
        sigaddset(&sa.sa_mask, cs_guard_sigs[i]);
    for (size_t i = 0; i < sizeof cs_guard_sigs / sizeof cs_guard_sigs[0]; i++) {
        struct sigaction old;
        if (sigaction(cs_guard_sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(cs_guard_sigs[i], &sa, NULL);
    }
    cs_guard_owner = (sig_atomic_t)getpid();
}

/* Block the signals while the table changes (the handler reads it). */
static void cs_guard_block(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof cs_guard_sigs / sizeof cs_guard_sigs[0]; i++)
        sigaddset(&set, cs_guard_sigs[i]);
    sigprocmask(SIG_BLOCK, &set, old);
}

int cs_outfile_guard(const char *path, int folder)
{
    sigset_t old;
    int rc = -1;
    cs_guard_block(&old);
    cs_guard_install();
    for (int i = 0; i < CS_GUARD_PATHS && rc; i++)
        if (!cs_guard_paths[i].used && strlen(path) < sizeof cs_guard_paths[i].path) {
            snprintf(cs_guard_paths[i].path, sizeof cs_guard_paths[i].path, "%s", path);
            cs_guard_paths[i].used = folder ? 2 : 1;
            rc = 0;
        }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return rc;
}

void cs_outfile_unguard(const char *path)
{
    sigset_t old;
    cs_guard_block(&old);
    for (int i = 0; i < CS_GUARD_PATHS; i++)
        if (cs_guard_paths[i].used && strcmp(cs_guard_paths[i].path, path) == 0) {
            cs_guard_paths[i].used = 0;
            break;
        }
    sigprocmask(SIG_SETMASK, &old, NULL);
}

pid_t cs_outfile_fork(void)
{
    sigset_t old;
    cs_guard_block(&old);
    cs_guard_install();
    pid_t p = fork();
    if (p > 0)
        for (int i = 0; i < CS_GUARD_KIDS; i++)
            if (cs_guard_kids[i] == 0) {
                cs_guard_kids[i] = (sig_atomic_t)p;
                break;
            }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return p;
}

void cs_outfile_guard_child(pid_t pid, int on)
{
    sigset_t old;
    cs_guard_block(&old);
    cs_guard_install();
    for (int i = 0; i < CS_GUARD_KIDS; i++)
        if (on ? cs_guard_kids[i] == 0 : cs_guard_kids[i] == (sig_atomic_t)pid) {
            cs_guard_kids[i] = on ? (sig_atomic_t)pid : 0;
            break;
        }
    sigprocmask(SIG_SETMASK, &old, NULL);
}

/* ---- stale temporary names of killed commands ----
 *
 * A new file or folder beside PATH is named PATH.tmp-PID-HOST-XXXXXX
 * (and a replaced folder, while it is removed, that name .oldXXXXXX): the
 * process and the host that write it. One whose process of this host no
 * longer runs was left by a command that was killed (SIGKILL, a crash). */

/* This host's name as it goes into a file name. */
static void cs_guard_host(char *out, size_t len)
{
    char h[256] = "";
    gethostname(h, sizeof h - 1);
    size_t o = 0;
    for (const char *p = h; *p && o + 1 < len && o < 64; p++)
        out[o++] = (isalnum((unsigned char)*p) || *p == '.' || *p == '_') ? *p : '_';
    out[o] = '\0';
}

/* The temporary name of path for this process, before its XXXXXX. */
static int cs_guard_tmpname(char *out, size_t len, const char *path, size_t n)
{
    char host[80];
    cs_guard_host(host, sizeof host);
    return (size_t)snprintf(out, len, "%.*s.tmp-%ld-%s-XXXXXX", (int)n, path, (long)getpid(), host) >= len ? -1 : 0;
}

/* Whether name (in path's folder) is a temporary name of path (base is
 * its last part) whose process of this host is gone. */
static int cs_guard_is_stale(const char *name, const char *base, size_t nbase, const char *host)
{
    if (strncmp(name, base, nbase) != 0 || strncmp(name + nbase, ".tmp-", 5) != 0)
        return 0;
    const char *p = name + nbase + 5;
    char *end;
    errno = 0;
    long pid = strtol(p, &end, 10);
    if (end == p || *end != '-' || errno || pid <= 0 || pid == (long)getpid())
        return 0;
    const char *h = end + 1;
    size_t rest = strlen(h), nh = strlen(host);
    /* HOST-XXXXXX, or HOST-XXXXXX.oldXXXXXX */
    if (rest == nh + 17 && strncmp(h + nh + 7, ".old", 4) == 0)
        rest = nh + 7;
    if (rest != nh + 7 || strncmp(h, host, nh) != 0 || h[nh] != '-')
        return 0;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

static int cs_outdir_walk(const char *path, const char *const *names, int remove, const char **why);

/* Remove the stale temporary names of path (regular files of ours for a
 * file; folders of ours that hold only names for a folder output), never
 * through a link; each one removed is named in a note. */
static void cs_guard_clean(const char *cmd, const char *path, size_t n, const char *const *names)
{
    char folder[4300], host[80];
    const char *slash = NULL;
    for (size_t i = 0; i < n; i++)
        if (path[i] == '/')
            slash = path + i;
    const char *base = slash ? slash + 1 : path;
    size_t nbase = n - (size_t)(base - path);
    if (!nbase)
        return;
    if (slash)
        snprintf(folder, sizeof folder, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    else
        snprintf(folder, sizeof folder, ".");
    cs_guard_host(host, sizeof host);
    DIR *d = opendir(folder);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!cs_guard_is_stale(e->d_name, base, nbase, host))
            continue;
        struct stat sb;
        if (fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || sb.st_uid != geteuid())
            continue;
        char full[4600];
        if ((size_t)snprintf(full, sizeof full, "%s/%s", folder, e->d_name) >= sizeof full)
            continue;
        const char *why;
        int gone = 0;
        struct stat pb;
        size_t nl = strlen(e->d_name);
        if (names && S_ISDIR(sb.st_mode) && nl > 10 && strncmp(e->d_name + nl - 10, ".old", 4) == 0 &&
            lstat(path, &pb) != 0 && errno == ENOENT) {
            /* killed between moving the earlier output aside and putting
             * the new one in its place: the earlier one goes back */
            char dest[4300];
            snprintf(dest, sizeof dest, "%.*s", (int)n, path);
            if (cs_outdir_walk(full, names, 0, &why) == 0 && rename(full, dest) == 0)
                cs_note("%s: %s: the earlier output put back (from %s, left by a command that was killed)", cmd, dest,
                        full);
            continue;
        }
        if (!names && S_ISREG(sb.st_mode))
            gone = unlinkat(dirfd(d), e->d_name, 0) == 0;
        else if (names && S_ISDIR(sb.st_mode) && cs_outdir_walk(full, names, 1, &why) == 0)
            gone = unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) == 0;
        if (gone)
            cs_note("%s: %s: removed: the unfinished output of a command that was killed", cmd, full);
    }
    closedir(d);
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
    if (cs_guard_tmpname(o->tmp, sizeof o->tmp, path, strlen(path)) != 0) {
        cs_error("%s: %s: the name is too long", cmd, path);
        return -1;
    }
    cs_guard_clean(cmd, path, strlen(path), NULL);
    /* made and named in the table with the signals held: a signal never
     * finds the new file unnamed */
    sigset_t old;
    cs_guard_block(&old);
    int fd = mkstemp(o->tmp), e = errno;
    if (fd >= 0 && cs_outfile_guard(o->tmp, 0) != 0) {
        close(fd);
        unlink(o->tmp);
        fd = -1;
        e = EMFILE;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (fd < 0) {
        cs_error("%s: cannot write %s: %s", cmd, path, strerror(e));
        o->tmp[0] = '\0';
        return -1;
    }
    o->f = fchmod(fd, 0644 & ~cs_outfile_umask()) == 0 ? fdopen(fd, "w") : NULL;
    if (!o->f) {
        cs_error("%s: cannot write %s: %s", cmd, path, strerror(errno));
        close(fd);
        unlink(o->tmp);
        cs_outfile_unguard(o->tmp);
        o->tmp[0] = '\0';
        return -1;
    }
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
    cs_outfile_unguard(o->tmp);
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
    if (cs_guard_tmpname(o->tmp, sizeof o->tmp, path, n) != 0) {
        cs_error("%s: %s: the name is too long", cmd, path);
        o->tmp[0] = '\0';
        return -1;
    }
    cs_guard_clean(cmd, path, n, names);
    sigset_t old;
    cs_guard_block(&old);
    int made = mkdtemp(o->tmp) != NULL;
    int e = errno;
    if (made && cs_outfile_guard(o->tmp, 1) != 0) {
        rmdir(o->tmp);
        made = 0;
        e = EMFILE;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (!made) {
        cs_error("%s: cannot write %s: %s", cmd, path, strerror(e));
        o->tmp[0] = '\0';
        return -1;
    }
    if (chmod(o->tmp, 0755 & ~cs_outfile_umask()) != 0) {
        cs_error("%s: cannot write %s: %s", cmd, path, strerror(errno));
        rmdir(o->tmp);
        cs_outfile_unguard(o->tmp);
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
    /* the old folder moved aside and the new one put in its place with the
     * signals held: a signal never finds the path without either */
    sigset_t held;
    cs_guard_block(&held);
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
    sigprocmask(SIG_SETMASK, &held, NULL);
    if (rc != 0)
        cs_outdir_remove(o->tmp, names);
    if (old[0])
        cs_outdir_remove(old, names);
    cs_outfile_unguard(o->tmp);
    o->tmp[0] = '\0';
    return rc;
}
