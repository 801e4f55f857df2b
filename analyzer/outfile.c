/* outfile.c: the commands' output files (see outfile.h). */
#include "config.h"
#include "analyzer/outfile.h"
#include "analyzer/cli.h"

#include <errno.h>
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
    o->tmp[0] = '\0';
    return rc;
}
