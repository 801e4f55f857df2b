/* store_int.h: what the store's own files (libtrace/store_*.c) share.
 * Nothing outside libtrace/store_*.c includes this; other parts use
 * store.h and store_sql.h. */
#ifndef CS_STORE_INT_H
#define CS_STORE_INT_H

#include <limits.h>

#include <sqlite3.h>

#include "libtrace/store.h"

struct cs_store {
    sqlite3 *db;
    char path[PATH_MAX];
    int version;
    /* A private copy being used in place of the file at path (which
     * messages and reports name): removed at close. "" when none. */
    char scratch[PATH_MAX];
    /* A job read through parts (cs_store_open_parts): attached as p0..,
     * their span rows read through temporary views; 0 otherwise. */
    int nparts;
    int64_t spans; /* with parts: the span rows of all (cs_store_part.spans) */
    /* A read that failed for want of a resource (memory, I/O, disk), not
     * for damage (cs_store_check_pages): its message; "" when none. */
    char fault[512];
};

/* Bytes of a store mapped for reading (SQLite's mmap_size, capped by
 * its SQLITE_MAX_MMAP_SIZE). Nothing of ours shrinks a store that another
 * process may be reading (SQLite's caveat for mapped files). */
#define CS_STORE_MMAP "17179869184"
/* The page cache of a store opened for reading, in KiB (negative). The
 * map covers at most 2 GB of a file with Debian's SQLite (its
 * SQLITE_MAX_MMAP_SIZE): beyond, pages are read into this cache. A read in
 * (comm, seq) order of a job's rows, which lie rank by rank, keeps a page
 * per rank in use: 1024 ranks of 64 KB pages need 64 MB and the indexes'
 * pages besides (100 M spans on 1024 ranks, match: 635 s with 8 MB). */
#define CS_STORE_READ_CACHE "-262144"
#define CS_STORE_READ_CACHE_KB 262144LL
/* A part's share of it, at the least (cs_store_open_parts), in KiB. */
#define CS_STORE_PART_CACHE_MIN_KB 65536LL

/* A span iterator is one statement whose columns are CS_SPAN_COLS*. */
struct cs_span_iter {
    sqlite3_stmt *s;
};

/* ---- store_index.c ---- */

/* The meta of a job's store (kind, the index's command, times and end,
 * job_index, job_fingerprint, the recovery note of total's faults); its
 * path becomes the index's. */
void cs__store_job_meta(cs_store *job, const char *dir, const cs_store_part *total);

/* ---- store_parts.c ---- */

/* cs_store_span_sql over a job read through parts: one ordered read per
 * part, merged by SQLite. */
char *cs__store_parts_span_sql(const cs_store *st, int raw, int order, const char *where);

/* ---- store_sql.c ---- */

/* A full disk, for cs_store_disk_full: db's last error was SQLITE_FULL
 * (note), or the caller saw one (note_full). */
void cs__store_sql_note(sqlite3 *db);
void cs__store_sql_note_full(void);

/* ---- store_file.c ---- */

/* Remove a database file and its -wal, -shm and -journal side files. */
void cs__store_file_unlink(const char *path);
/* Make an empty private file $TMPDIR/PREFIX-XXXXXX (mkstemp; /tmp when
 * TMPDIR is unset) and put its name in buf; *dir is the folder, for a
 * message. 0, or -1 with errno set. */
int cs__store_file_scratch(char *buf, size_t len, const char *prefix, const char **dir);
/* cs_store_create into path as it is: no file there, or an empty one
 * (mkstemp's); never through a symbolic link. */
int cs__store_file_create(const char *path, cs_store **out, char *err, size_t errlen);
/* The same with the size hint of cs_store_create_sized. */
int cs__store_file_create_sized(const char *path, long long expect_bytes, cs_store **out, char *err, size_t errlen);
/* Below this many bytes of rows a store is made with 4 KiB pages, from it
 * on with 64 KiB ones. */
#define CS_STORE_SMALL_BYTES (4LL << 20)
/* The settings of a store being built in one go (no journal, exclusive):
 * cs_store_finish turns on WAL. */
void cs__store_file_build_pragmas(cs_store *st);

/* ---- store_schema.c ---- */

/* Create the tables of CS_SCHEMA_VERSION in a new, empty store, with this
 * build's op and datatype tables and the format marks. */
int cs__store_schema_create(cs_store *st, char *err, size_t errlen);
/* Upgrade a store of version `from` (< CS_SCHEMA_VERSION) in place, in
 * one transaction. 0, or -1 with a reason (nothing changed). */
int cs__store_schema_upgrade(cs_store *st, long from, char *err, size_t errlen);

/* ---- store_copy.c ---- */

/* A copy of the open store `from` as a new file `to`, made by SQLite (it
 * reads a WAL store's pending pages too): -1, with a reason, on failure. */
int cs__store_copy_file(cs_store *from, const char *to, char *err, size_t errlen);

#endif
