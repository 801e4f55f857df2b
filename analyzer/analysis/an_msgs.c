/* an_msgs.c: the paired point-to-point messages, read one at a time.
 *
 * One process holds them in memory. In a parallel analysis each process
 * pairs the messages to its share of the ranks and writes them, in order,
 * into a file of the private folder; the root's passes read the files
 * merged, a small buffer a file, so that no process holds every message
 * (72 bytes each: 1.2 GB for 16 M messages). The files are the processes'
 * own cs_msg records: every process runs the same program on a folder
 * they all reach. */
#include "config.h"
#include "analyzer/analysis/analysis.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CS_MSG_BUF 1024

struct cs_msg_file {
    FILE *fp;
    size_t n, at;
    cs_msg buf[CS_MSG_BUF];
};

/* The (comm, src, dst, tag) of the file's next message: a process's
 * messages are in that order, and no two processes pair one such group. */
static int cs_msg_key_cmp(const cs_msg *x, const cs_msg *y)
{
    if (x->comm != y->comm)
        return x->comm < y->comm ? -1 : 1;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    return (x->tag > y->tag) - (x->tag < y->tag);
}

/* The file's next message into its buffer: 1, 0 at its end, -1. */
static int cs_msg_fill(struct cs_msg_file *f)
{
    if (f->at < f->n)
        return 1;
    f->n = fread(f->buf, sizeof f->buf[0], CS_MSG_BUF, f->fp);
    f->at = 0;
    if (f->n > 0)
        return 1;
    return ferror(f->fp) ? -1 : 0;
}

static int cs_msg_heap_less(const cs_msg_iter *it, int x, int y)
{
    const struct cs_msg_file *a = &it->f[x], *b = &it->f[y];
    int c = cs_msg_key_cmp(&a->buf[a->at], &b->buf[b->at]);
    return c < 0 || (c == 0 && x < y);
}

static void cs_msg_heap_down(cs_msg_iter *it, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < it->nheap && cs_msg_heap_less(it, it->heap[l], it->heap[m]))
            m = l;
        if (r < it->nheap && cs_msg_heap_less(it, it->heap[r], it->heap[m]))
            m = r;
        if (m == i)
            return;
        int t = it->heap[i];
        it->heap[i] = it->heap[m];
        it->heap[m] = t;
        i = m;
    }
}

int cs__an_msgs_begin(const cs_an_msgs *m, cs_msg_iter *it)
{
    memset(it, 0, sizeof *it);
    it->m = m;
    if (!m->files)
        return 0;
    it->f = calloc((size_t)(m->nfiles > 0 ? m->nfiles : 1), sizeof *it->f);
    it->heap = calloc((size_t)(m->nfiles > 0 ? m->nfiles : 1), sizeof *it->heap);
    if (!it->f || !it->heap) {
        cs__an_msgs_end(it);
        return -1;
    }
    for (int i = 0; i < m->nfiles; i++) {
        if (!(it->f[i].fp = fopen(m->files[i], "rb"))) {
            it->err = 1;
            cs__an_msgs_end(it);
            return -1;
        }
        int got = cs_msg_fill(&it->f[i]);
        if (got < 0)
            it->err = 1;
        else if (got > 0)
            it->heap[it->nheap++] = i;
    }
    for (int i = it->nheap / 2 - 1; i >= 0; i--)
        cs_msg_heap_down(it, i);
    return 0;
}

const cs_msg *cs__an_msgs_next(cs_msg_iter *it)
{
    if (!it->m->files)
        return it->i < it->m->nmsgs ? &it->m->msgs[it->i++] : NULL;
    if (it->nheap == 0 || it->err)
        return NULL;
    if (it->i > 0) {
        /* the message returned last stayed in its file's buffer until
         * now: that file moves on */
        struct cs_msg_file *f = &it->f[it->heap[0]];
        f->at++;
        int got = cs_msg_fill(f);
        if (got < 0) {
            it->err = 1;
            return NULL;
        }
        if (got == 0)
            it->heap[0] = it->heap[--it->nheap];
        if (it->nheap == 0)
            return NULL;
        cs_msg_heap_down(it, 0);
    }
    it->i++;
    struct cs_msg_file *f = &it->f[it->heap[0]];
    return &f->buf[f->at];
}

int cs__an_msgs_end(cs_msg_iter *it)
{
    int rc = it->err ? -1 : 0;
    /* read to the end: as many as the processes said they wrote */
    if (rc == 0 && it->m && it->m->files && it->nheap == 0 && it->i != it->m->nmsgs)
        rc = -1;
    for (int i = 0; it->f && it->m && i < it->m->nfiles; i++)
        if (it->f[i].fp)
            fclose(it->f[i].fp);
    free(it->f);
    free(it->heap);
    it->f = NULL;
    it->heap = NULL;
    return rc;
}

int cs__an_msgs_save(cs_an_msgs *m, const char *path)
{
    FILE *fp = fopen(path, "wbx");
    if (!fp)
        return -1;
    size_t put = m->nmsgs ? fwrite(m->msgs, sizeof *m->msgs, m->nmsgs, fp) : 0;
    int e = put == m->nmsgs ? 0 : errno;
    if (fclose(fp) != 0 && !e)
        e = errno;
    free(m->msgs);
    m->msgs = NULL;
    if (e) {
        errno = e;
        return -1;
    }
    return 0;
}

void cs__an_msgs_free(cs_an_msgs *m)
{
    free(m->msgs);
    m->msgs = NULL;
    cs__an_ctx_scratch_files_free(m->files, m->nfiles);
    m->files = NULL;
    m->nfiles = 0;
}
