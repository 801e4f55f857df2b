/* fuzz_util.c: the scratch folder of the fuzz targets (fuzz.h). */
#include "tests/fuzz/fuzz.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char cs_fuzz_path[PATH_MAX];

static void cs_fuzz_remove(void)
{
    if (!cs_fuzz_path[0])
        return;
    cs_fuzz_clear(cs_fuzz_path);
    rmdir(cs_fuzz_path);
}

const char *cs_fuzz_dir(void)
{
    if (cs_fuzz_path[0])
        return cs_fuzz_path;
    const char *tmp = getenv("TMPDIR");
    snprintf(cs_fuzz_path, sizeof cs_fuzz_path, "%s/cs-fuzz.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(cs_fuzz_path)) {
        perror("cs-fuzz: mkdtemp");
        abort();
    }
    atexit(cs_fuzz_remove);
    return cs_fuzz_path;
}

int cs_fuzz_write(const char *path, const uint8_t *data, size_t size)
{
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -1;
    size_t off = 0;
    while (off < size) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        off += (size_t)w;
    }
    return close(fd);
}

static void cs_fuzz_clear_level(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[PATH_MAX + 256];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            if (depth > 0) {
                cs_fuzz_clear_level(p, depth - 1);
                rmdir(p);
            }
        } else
            unlink(p);
    }
    closedir(d);
}

void cs_fuzz_clear(const char *dir)
{
    cs_fuzz_clear_level(dir, 1);
}
