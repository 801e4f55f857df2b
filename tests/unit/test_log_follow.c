/* test_log_follow.c: a log followed while it is written (libtrace/
 * log_follow.c): each record handed once; a slot claimed but not yet
 * committed (a record being written) is not read until it is; a call in
 * flight is handed at every poll until it returns, then once as a span;
 * a poll with nothing new reads almost nothing; the budget of a poll
 * leaves the rest for the next; the follower never writes the file. */
#include "config.h"
#include "tests/unit/check.h"
#include "libtrace/clock.h"
#include "libtrace/log.h"
#include "libtrace/log_follow.h"
#include "libtrace/ops.gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct seen {
    long spans, fly, other;
    uint32_t last_seq;
    int order_ok;
} seen;

static void on_rec(void *arg, const cs_rec *x, int fresh)
{
    seen *s = arg;
    uint32_t k = CS_REC_KIND(x->hdr);
    if (k == CS_REC_SPAN && fresh) {
        if (s->spans && x->seq != s->last_seq + 1 && x->op == CS_OP_MPI_Allreduce)
            s->order_ok = 0;
        if (x->op == CS_OP_MPI_Allreduce)
            s->last_seq = x->seq;
        s->spans++;
    } else if (k == CS_REC_INFLIGHT && !fresh) {
        s->fly++;
    } else if (fresh) {
        s->other++;
    }
}

static void span(uint32_t seq)
{
    cs_rec *r = cs_log_slot();
    memset(r, 0, sizeof *r);
    r->op = CS_OP_MPI_Allreduce;
    r->t0 = cs_clock_ticks();
    r->t1 = r->t0 + 10;
    r->seq = seq;
    cs_log_commit(r, CS_REC_HDR(CS_REC_SPAN, CS_F_HAS_SEQ));
}

int main(void)
{
    char dir[] = "/tmp/cs-test-log-follow.XXXXXX", path[600], err[512];
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    cs_clock_init(CS_CLOCK_AUTO);
    snprintf(path, sizeof path, "%s/f.cslog", dir);
    cs_log_header proto;
    memset(&proto, 0, sizeof proto);
    proto.rank = 5;
    proto.ticks_per_ns = 1;
    if (cs_log_open(path, &proto, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    cs_logf *f = cs_logf_open(path, err, sizeof err);
    CHECK(f != NULL, "cs_logf_open: %s", err);
    if (!f)
        return 1;
    CHECK(cs_logf_header(f)->rank == 5, "the header's rank: %d", cs_logf_header(f)->rank);
    struct stat st0;
    stat(path, &st0);
    seen s = { .order_ok = 1 };

    /* records written before the first poll, then more: each once */
    uint32_t seq = 0;
    for (int i = 0; i < 100; i++)
        span(seq++);
    long got = cs_logf_poll(f, 0, on_rec, &s, err, sizeof err);
    CHECK(got >= 100 && s.spans == 100, "first poll: %ld fresh, %ld spans (want 100)", got, s.spans);
    for (int i = 0; i < 3000; i++) /* past several chunks */
        span(seq++);
    cs_logf_poll(f, 0, on_rec, &s, err, sizeof err);
    CHECK(s.spans == 3100, "after 3000 more: %ld spans (want 3100)", s.spans);
    CHECK(s.order_ok, "spans out of order or twice");

    /* a poll with nothing new reads only the open chunk's next slot */
    uint64_t before = cs_logf_bytes_read(f);
    got = cs_logf_poll(f, 0, on_rec, &s, err, sizeof err);
    CHECK(got == 0 && cs_logf_bytes_read(f) - before <= 4 * 64, "an idle poll: %ld fresh, %llu bytes read", got,
          (unsigned long long)(cs_logf_bytes_read(f) - before));

    /* a record being written: claimed, filled, not committed */
    cs_rec *r = cs_log_slot();
    memset(r, 0, sizeof *r);
    r->op = CS_OP_MPI_Allreduce;
    r->seq = seq++;
    cs_logf_poll(f, 0, on_rec, &s, err, sizeof err);
    CHECK(s.spans == 3100, "an uncommitted slot was read (%ld spans)", s.spans);
    cs_log_commit(r, CS_REC_HDR(CS_REC_SPAN, CS_F_HAS_SEQ));
    cs_logf_poll(f, 0, on_rec, &s, err, sizeof err);
    CHECK(s.spans == 3101, "the slot once committed: %ld spans (want 3101)", s.spans);

    /* a call in flight, handed at each poll, then once as a span */
    cs_rec *h = cs_log_hold();
    memset(h, 0, sizeof *h);
    h->op = CS_OP_MPI_Barrier;
    h->t0 = cs_clock_ticks();
    cs_log_commit(h, CS_REC_HDR(CS_REC_INFLIGHT, 0));
    for (int i = 0; i < 1100; i++) /* its thread writes on, past its chunk */
        span(seq++);
    cs_logf_poll(f, 0, on_rec, &s, err, sizeof err);
    cs_logf_poll(f, 0, on_rec, &s, err, sizeof err);
    CHECK(s.fly == 2, "the call in flight was handed %ld times in 2 polls", s.fly);
    CHECK(s.spans == 4201, "%ld spans (want 4201)", s.spans);
    h->t1 = h->t0 + 5;
    cs_log_release(h, CS_REC_HDR(CS_REC_SPAN, 0));
    cs_logf_poll(f, 0, on_rec, &s, err, sizeof err);
    cs_logf_poll(f, 0, on_rec, &s, err, sizeof err);
    CHECK(s.spans == 4202 && s.fly == 2, "after it returned: %ld spans (want 4202), in flight %ld", s.spans, s.fly);

    /* a budget: at most 500 fresh records a poll, the rest next time */
    for (int i = 0; i < 1200; i++)
        span(seq++);
    long a = cs_logf_poll(f, 500, on_rec, &s, err, sizeof err);
    long b = cs_logf_poll(f, 500, on_rec, &s, err, sizeof err);
    long c = cs_logf_poll(f, 500, on_rec, &s, err, sizeof err);
    CHECK(a == 500 && b == 500 && c >= 200, "budgeted polls: %ld %ld %ld", a, b, c);
    CHECK(s.spans == 5402 && s.order_ok, "after the budgeted polls: %ld spans (want 5402)", s.spans);

    /* the writer closes: the state is seen, nothing is handed again */
    cs_log_close();
    long spans = s.spans;
    cs_logf_poll(f, 0, on_rec, &s, err, sizeof err);
    CHECK(cs_logf_header(f)->state == CS_LOG_CLOSED, "the closed state is not seen");
    CHECK(s.spans == spans, "records handed again after the close");
    cs_logf_close(f);

    /* a link is refused */
    char link[700];
    snprintf(link, sizeof link, "%s/link.cslog", dir);
    CHECK(symlink(path, link) == 0, "symlink");
    CHECK(cs_logf_open(link, err, sizeof err) == NULL && strstr(err, "link"), "a link was followed: %s", err);
    if (failures) {
        fprintf(stderr, "%d checks failed (files in %s)\n", failures, dir);
        return 1;
    }
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) != 0;
}
