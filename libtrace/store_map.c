/* store_map.c: a bound on the store pages a process keeps mapped.
 *
 * The analysis reads its stores through SQLite's map (mmap_size): up to
 * 2 GB of every file it reads, the parts of a job included. The kernel
 * keeps every page the process touched in its resident set until SQLite
 * unmaps the file, so a process that reads its share of the instances
 * through every part ends with every part's mapped pages counted in its
 * RSS (and in a cgroup's limit), though it needs only the pages under its
 * cursors. Every connection opened after cs_store_map_bound checks, every
 * CS_MAP_CHECK_OPS of SQLite's instructions, how many file pages the
 * process has resident (/proc/self/statm); past the bound, it drops the
 * page-table entries of SQLite's maps of the stores (madvise
 * MADV_DONTNEED). The pages stay in the page cache and the next
 * read faults them back in from there: no data is lost or re-read from
 * disk, and SQLite's map stays valid (the files are only read through it).
 */
#include "config.h"
#include "libtrace/store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* SQLite instructions between checks: a few milliseconds of reading. */
#define CS_MAP_CHECK_OPS 200000

static int64_t cs_map_bound_kb;     /* 0: no bound */
static int64_t cs_map_base_kb = -1; /* file pages resident after the last trim */
static int64_t cs_map_trims;

/* The process's resident file and shared-memory pages, in KB; -1. */
static int64_t cs_map_resident_kb(void)
{
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[128];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    long long size, resident, shared;
    if (sscanf(buf, "%lld %lld %lld", &size, &resident, &shared) != 3)
        return -1;
    return shared * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Drop the page-table entries of every read-only shared mapping of a
 * store (a file named *.db): SQLite's maps of the stores. Called on the
 * thread that runs SQLite, inside one of its calls: only that thread maps
 * and unmaps the stores, so none goes away while this runs. (SQLite's
 * sorter threads may map and unmap their temporary files, which have no
 * such name, and are left alone.) */
static void cs_map_trim(void)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return;
    char line[4352];
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[8];
        int at = 0;
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &lo, &hi, perms, &at) != 3 || at <= 0)
            continue;
        size_t n = strcspn(line + at, "\n");
        if (strcmp(perms, "r--s") == 0 && line[at] == '/' && n > 3 && memcmp(line + at + n - 3, ".db", 3) == 0)
            madvise((void *)lo, hi - lo, MADV_DONTNEED);
    }
    fclose(f);
    cs_map_trims++;
}

static int cs_map_progress(void *arg)
{
    (void)arg;
    int64_t kb = cs_map_resident_kb();
    if (kb < 0)
        return 0;
    if (cs_map_base_kb < 0 || kb < cs_map_base_kb)
        cs_map_base_kb = kb;
    if (kb - cs_map_base_kb > cs_map_bound_kb) {
        cs_map_trim();
        cs_map_base_kb = cs_map_resident_kb();
    }
    return 0; /* never interrupts the statement */
}

static int cs_map_connect(sqlite3 *db, const char **err, const struct sqlite3_api_routines *api)
{
    (void)err;
    (void)api;
    if (cs_map_bound_kb > 0)
        sqlite3_progress_handler(db, CS_MAP_CHECK_OPS, cs_map_progress, NULL);
    return SQLITE_OK;
}

double cs_store_map_bound(void)
{
    const char *v = getenv("COLLSCOPE_MAPPED_MB");
    char *end = NULL;
    double mb = v && *v ? strtod(v, &end) : CS_STORE_MAPPED_MB;
    int bad = end && (end == v || *end || !(mb >= 0 && mb <= 1e12));
    if (bad)
        mb = CS_STORE_MAPPED_MB;
    cs_map_bound_kb = (int64_t)(mb * 1024);
    if (cs_map_bound_kb > 0)
        sqlite3_auto_extension((void (*)(void))cs_map_connect);
    return bad ? -1 : mb;
}

int64_t cs_store_map_trims(void)
{
    return cs_map_trims;
}
