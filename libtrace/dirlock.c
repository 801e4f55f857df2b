/* dirlock.c: the lock of an output folder (dirlock.h). */
#include "config.h"
#include "libtrace/dirlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The folders this process holds, by device and inode. */
typedef struct cs_dirlock_held {
    dev_t dev;
    ino_t ino;
    int fd, refs;
} cs_dirlock_held;
static cs_dirlock_held cs_dirlock_tab[16];
static int cs_dirlock_n;

static cs_dirlock_held *cs_dirlock_find(const struct stat *d)
{
    for (int i = 0; i < cs_dirlock_n; i++)
        if (cs_dirlock_tab[i].dev == d->st_dev && cs_dirlock_tab[i].ino == d->st_ino)
            return &cs_dirlock_tab[i];
    return NULL;
}

/* "pid P (COMMAND), started TIME" from the lock file's content. */
static void cs_dirlock_holder(int fd, char *out, size_t len)
{
    char buf[1024];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    long long pid = 0, start = 0;
    char *cmd = strstr(buf, "command ");
    if (sscanf(buf, "pid %lld\nstart %lld\n", &pid, &start) != 2 || !cmd) {
        snprintf(out, len, "another collscope command (its pid is not written yet)");
        return;
    }
    cmd += 8;
    cmd[strcspn(cmd, "\n")] = '\0';
    char when[64] = "?";
    time_t t = (time_t)start;
    struct tm tm;
    if (gmtime_r(&t, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
    snprintf(out, len, "pid %lld (%.400s), started %s", pid, cmd, when);
}

/* This process's command line, its arguments joined by spaces. */
static void cs_dirlock_cmdline(char *out, size_t len)
{
    snprintf(out, len, "collscope");
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, out, len - 1);
    close(fd);
    if (n <= 0) {
        snprintf(out, len, "collscope");
        return;
    }
    while (n > 0 && out[n - 1] == '\0')
        n--;
    out[n] = '\0';
    for (ssize_t i = 0; i < n; i++)
        if (out[i] == '\0' || out[i] == '\n')
            out[i] = ' ';
}

int cs_dirlock_take(const char *dir, int wait, char *err, size_t errlen)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat ds, fs;
    if (dfd < 0 || fstat(dfd, &ds) != 0) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        if (dfd >= 0)
            close(dfd);
        return -1;
    }
    cs_dirlock_held *h = cs_dirlock_find(&ds);
    if (h) {
        h->refs++;
        close(dfd);
        return 0;
    }
    if (cs_dirlock_n == (int)(sizeof cs_dirlock_tab / sizeof cs_dirlock_tab[0])) {
        snprintf(err, errlen, "%s: too many output folders locked at once", dir);
        close(dfd);
        return -1;
    }
    int fd = openat(dfd, CS_DIRLOCK_FILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    int e = errno;
    close(dfd);
    if (fd < 0) {
        snprintf(err, errlen, "cannot lock %s: %s/%s: %s", dir, dir, CS_DIRLOCK_FILE,
                 e == ELOOP ? "a symbolic link (refused)" : strerror(e));
        return -1;
    }
    /* Only a file of ours, with no other name: the holder's line is
     * written into it. */
    if (fstat(fd, &fs) != 0 || !S_ISREG(fs.st_mode) || fs.st_nlink != 1 || fs.st_uid != geteuid()) {
        snprintf(err, errlen, "cannot lock %s: %s/%s is not a regular file of yours with one name (refused)", dir, dir,
                 CS_DIRLOCK_FILE);
        close(fd);
        return -1;
    }
    while (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
        if (errno == EINTR)
            continue;
        if (errno == EWOULDBLOCK) {
            char who[600];
            cs_dirlock_holder(fd, who, sizeof who);
            snprintf(err, errlen, "%s is in use by %s", dir, who);
            close(fd);
            return 1;
        }
        snprintf(err, errlen, "cannot lock %s/%s: %s", dir, CS_DIRLOCK_FILE, strerror(errno));
        close(fd);
        return -1;
    }
    char cmd[700], line[800];
    cs_dirlock_cmdline(cmd, sizeof cmd);
    int n = snprintf(line, sizeof line, "pid %lld\nstart %lld\ncommand %s\n", (long long)getpid(),
                     (long long)time(NULL), cmd);
    if (n > (int)sizeof line - 1)
        n = (int)sizeof line - 1;
    /* The holder's line is for messages only: the lock is held whether
     * it could be written or not. */
    if (ftruncate(fd, 0) == 0 && pwrite(fd, line, (size_t)n, 0) != n)
        (void)ftruncate(fd, 0);
    cs_dirlock_tab[cs_dirlock_n++] = (cs_dirlock_held){ ds.st_dev, ds.st_ino, fd, 1 };
    return 0;
}

void cs_dirlock_release(const char *dir)
{
    struct stat ds;
    if (stat(dir, &ds) != 0)
        return;
    cs_dirlock_held *h = cs_dirlock_find(&ds);
    if (!h || --h->refs > 0)
        return;
    close(h->fd);
    *h = cs_dirlock_tab[--cs_dirlock_n];
}

int cs_dirlock_test(const char *dir, char *holder, size_t holderlen)
{
    holder[0] = '\0';
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat ds, fs;
    if (dfd < 0)
        return 0;
    if (fstat(dfd, &ds) != 0 || cs_dirlock_find(&ds)) {
        close(dfd);
        return 0;
    }
    int fd = openat(dfd, CS_DIRLOCK_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    close(dfd);
    if (fd < 0)
        return 0;
    int busy = 0;
    if (fstat(fd, &fs) == 0 && S_ISREG(fs.st_mode)) {
        if (flock(fd, LOCK_SH | LOCK_NB) == 0)
            flock(fd, LOCK_UN);
        else if (errno == EWOULDBLOCK) {
            cs_dirlock_holder(fd, holder, holderlen);
            busy = 1;
        }
    }
    close(fd);
    return busy;
}
