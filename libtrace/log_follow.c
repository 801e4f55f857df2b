/* log_follow.c: a log followed while its process writes it (log_follow.h).
 *
 * A thread fills a chunk of slots in order, so per chunk still being
 * filled the follower keeps the next slot to read; a chunk is done when
 * that reaches its end, or when the thread that filled it has written in a
 * later chunk (it left the rest of this one empty). Calls in flight sit in
 * slots that change kind when the call returns: the follower keeps their
 * places and looks at them again at every poll. */
#include "config.h"
#include "libtrace/log_follow.h"
#include "common/map.h"
#include "common/vec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct logf_chunk {
    uint64_t chunk;
    uint32_t pos; /* next slot to read */
    int32_t tid;  /* the thread that fills it, -1 until a record says */
} logf_chunk;

struct cs_logf {
    int fd;
    const char *map;
    size_t size;
    char path[1024];
    cs_log_header hdr;
    uint64_t known; /* chunks [0, known) are in aOpen or done */
    logf_chunk *aOpen;
    size_t nOpen, capOpen;
    uint64_t *aFly; /* slots of calls in flight */
    size_t nFly, capFly;
    cs_map tidChunk; /* tid -> the latest chunk it wrote in */
    uint64_t bytes;
};

static int logf_map(cs_logf *f, size_t size, char *err, size_t errlen)
{
    const char *p = mmap(NULL, size, PROT_READ, MAP_SHARED, f->fd, 0);
    if (p == MAP_FAILED) {
        snprintf(err, errlen, "%s: cannot map: %s", f->path, strerror(errno));
        return -1;
    }
    if (f->map)
        munmap((void *)f->map, f->size);
    f->map = p;
    f->size = size;
    return 0;
}

cs_logf *cs_logf_open(const char *path, char *err, size_t errlen)
{
    int64_t size;
    int fd = cs__log_open_read(path, &size, err, errlen);
    if (fd < 0)
        return NULL;
    cs_logf *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, errlen, "%s: out of memory", path);
        close(fd);
        return NULL;
    }
    f->fd = fd;
    snprintf(f->path, sizeof f->path, "%s", path);
    if (logf_map(f, (size_t)size, err, errlen) != 0 ||
        cs__log_header_check((const cs_log_header *)f->map, path, err, errlen) != 0) {
        cs_logf_close(f);
        return NULL;
    }
    cs_logf_header(f);
    return f;
}

void cs_logf_close(cs_logf *f)
{
    if (!f)
        return;
    if (f->map)
        munmap((void *)f->map, f->size);
    close(f->fd);
    free(f->aOpen);
    free(f->aFly);
    cs_map_free(&f->tidChunk);
    free(f);
}

const cs_log_header *cs_logf_header(cs_logf *f)
{
    const cs_log_header *h = (const cs_log_header *)f->map;
    memcpy(&f->hdr, h, sizeof f->hdr);
    f->hdr.state = __atomic_load_n(&h->state, __ATOMIC_ACQUIRE);
    f->hdr.next_chunk = __atomic_load_n(&h->next_chunk, __ATOMIC_ACQUIRE);
    f->hdr.host[sizeof f->hdr.host - 1] = '\0';
    f->hdr.exe[sizeof f->hdr.exe - 1] = '\0';
    f->hdr.mpi[sizeof f->hdr.mpi - 1] = '\0';
    f->hdr.tool_version[sizeof f->hdr.tool_version - 1] = '\0';
    f->hdr.papi_events[sizeof f->hdr.papi_events - 1] = '\0';
    f->hdr.note[sizeof f->hdr.note - 1] = '\0';
    f->hdr.run_id[sizeof f->hdr.run_id - 1] = '\0';
    return &f->hdr;
}

uint64_t cs_logf_bytes_read(const cs_logf *f)
{
    return f->bytes;
}

static int logf_has_tid(uint32_t kind)
{
    return kind == CS_REC_SPAN || kind == CS_REC_INFLIGHT || kind == CS_REC_REQDONE;
}

long cs_logf_poll(cs_logf *f, long max, cs_logf_fn fn, void *arg, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(f->fd, &st) != 0) {
        snprintf(err, errlen, "%s: %s", f->path, strerror(errno));
        return -1;
    }
    if ((size_t)st.st_size < f->size) {
        snprintf(err, errlen, "%s: the log shrank (%lld bytes, was %zu): not written by collscope", f->path,
                 (long long)st.st_size, f->size);
        return -1;
    }
    if ((size_t)st.st_size > f->size && logf_map(f, (size_t)st.st_size, err, errlen) != 0)
        return -1;
    const cs_log_header *h = cs_logf_header(f);
    uint64_t recs = h->chunk_recs;
    uint64_t slots = (f->size - CS_LOG_HEADER_BYTES) / CS_REC_SIZE;
    uint64_t in_file = (slots + recs - 1) / recs;
    uint64_t claimed = h->next_chunk < in_file ? h->next_chunk : in_file;
    const cs_rec *base = (const cs_rec *)(f->map + CS_LOG_HEADER_BYTES);
    long fresh = 0;
    /* calls in flight at the last poll: returned since, or still in it */
    size_t keep = 0;
    for (size_t i = 0; i < f->nFly; i++) {
        const cs_rec *x = base + f->aFly[i];
        uint32_t k = CS_REC_KIND(__atomic_load_n(&x->hdr, __ATOMIC_ACQUIRE));
        f->bytes += CS_REC_SIZE;
        if (k == CS_REC_INFLIGHT) {
            fn(arg, x, 0);
            f->aFly[keep++] = f->aFly[i];
        } else if (k == CS_REC_SPAN) {
            fn(arg, x, 1);
            fresh++;
        }
    }
    f->nFly = keep;
    /* the chunks claimed since */
    if (claimed > f->known) {
        if (CS_VEC_RESERVE(f->aOpen, f->capOpen, f->nOpen + (size_t)(claimed - f->known)) != 0) {
            snprintf(err, errlen, "%s: out of memory", f->path);
            return -1;
        }
        for (uint64_t c = f->known; c < claimed; c++)
            f->aOpen[f->nOpen++] = (logf_chunk){ .chunk = c, .pos = 0, .tid = -1 };
        f->known = claimed;
    }
    /* the new slots of each chunk still being filled */
    long budget = max > 0 ? max : -1;
    for (size_t i = 0; i < f->nOpen; i++) {
        logf_chunk *c = &f->aOpen[i];
        uint64_t first = c->chunk * recs;
        while (c->pos < recs && first + c->pos < slots && budget != 0) {
            const cs_rec *x = base + first + c->pos;
            uint32_t hdr = __atomic_load_n(&x->hdr, __ATOMIC_ACQUIRE);
            f->bytes += CS_REC_SIZE;
            if (hdr == 0)
                break;
            uint32_t k = CS_REC_KIND(hdr);
            c->pos++;
            if (k == 0 || k >= CS_REC_KIND_MAX)
                continue;
            if (logf_has_tid(k))
                c->tid = x->tid;
            if (k == CS_REC_INFLIGHT) {
                if (CS_VEC_RESERVE(f->aFly, f->capFly, f->nFly + 1) == 0)
                    f->aFly[f->nFly++] = first + c->pos - 1;
                fn(arg, x, 0);
            } else {
                fn(arg, x, 1);
                fresh++;
                budget -= budget > 0;
            }
        }
        if (c->tid >= 0) {
            int64_t last = -1;
            cs_map_get(&f->tidChunk, (uint64_t)c->tid, &last);
            if ((int64_t)c->chunk > last && cs_map_put(&f->tidChunk, (uint64_t)c->tid, (int64_t)c->chunk) != 0) {
                snprintf(err, errlen, "%s: out of memory", f->path);
                return -1;
            }
        }
    }
    /* drop the chunks read to their end, and those their thread left */
    size_t n = 0;
    for (size_t i = 0; i < f->nOpen; i++) {
        logf_chunk *c = &f->aOpen[i];
        int64_t last = -1;
        if (c->pos >= recs)
            continue;
        if (c->tid >= 0 && cs_map_get(&f->tidChunk, (uint64_t)c->tid, &last) && last > (int64_t)c->chunk)
            continue;
        f->aOpen[n++] = *c;
    }
    f->nOpen = n;
    return fresh;
}
