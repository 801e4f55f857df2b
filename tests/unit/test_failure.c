/* test_failure.c: the diagnosis of analyzer/status/failure.c on models filled by
 * hand (no MPI, no logs): each kind with its culprits, waiting ranks, call,
 * communicator, seq, call site and line; a job that ended well has none;
 * a rank's sampled stack and GPU operation in flight are printed when set. */
#include "config.h"
#include "tests/unit/check.h"
#include "analyzer/status/failure.h"
#include "libtrace/ops.gen.h"
#include "libtrace/span.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_NS 1000000000LL
#define NOW (100 * S_NS)

/* 4 ranks, alive, on MPI_COMM_WORLD (id 1); every rank entered and
 * completed seq 2 and has a last call (MPI_Sendrecv, ended 5 s ago). */
static void model4(cs_failure_model *m)
{
    memset(m, 0, sizeof *m);
    m->now = NOW;
    cs_failure_comm *c = cs_failure_comm_get(m, 1, 4);
    c->how = CS_COMM_WORLD;
    for (int k = 0; k < 4; k++) {
        c->world[k] = k;
        cs_failure_rank *r = cs_failure_rank_add(m);
        r->rank = k;
        r->pid = 100 + k;
        r->world = 4;
        r->alive = 1;
        snprintf(r->host, sizeof r->host, "node");
        cs_failure_seq *q = cs_failure_seq_get(r, 1);
        q->entered = q->completed = 2;
        r->has_last = 1;
        r->last.op = CS_OP_MPI_Sendrecv;
        r->last.comm = 1;
        r->last.t0 = NOW - 6 * S_NS;
        r->last.t1 = NOW - 5 * S_NS;
        snprintf(r->last.site, sizeof r->last.site, "train.c:93 (main)");
    }
}

/* Rank k in a call since `ago` seconds. */
static void fly(cs_failure_model *m, int k, int op, int64_t seq, int peer, int ago, const char *site)
{
    cs_failure_rank *r = &m->r[k];
    r->has_fly = 1;
    r->fly.op = op;
    r->fly.comm = 1;
    r->fly.seq = seq;
    r->fly.peer = peer;
    r->fly.tag = 7;
    r->fly.bytes = 8;
    r->fly.t0 = NOW - ago * S_NS;
    snprintf(r->fly.site, sizeof r->fly.site, "%s", site);
    if (seq >= 0)
        cs_failure_seq_get(r, 1)->entered = seq;
}

static const cs_failure *find(const cs_failure_list *l, const char *kind, int first_culprit)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].kind, kind) == 0 && l->v[i].nculprits > 0 && l->v[i].culprits[0] == first_culprit)
            return &l->v[i];
    return NULL;
}

static int ranks_are(const int *v, int n, const char *want)
{
    char b[128];
    cs_failure_ranks_text(v, n, b, sizeof b);
    return strcmp(b, want) == 0;
}

int main(void)
{
    cs_failure_model m;
    cs_failure_list l = { 0 };

    /* missing rank: 0,2,3 in the allreduce, rank 1 in a receive from 2 */
    model4(&m);
    for (int k = 0; k < 4; k++)
        if (k != 1)
            fly(&m, k, CS_OP_MPI_Allreduce, 3, -1, 3, "train.c:91 (main)");
    fly(&m, 1, CS_OP_MPI_Recv, -1, 2, 4, "train.c:89 (main)");
    cs_failure_diagnose(&m, 2.0, &l);
    const cs_failure *x = find(&l, "missing_rank", 1);
    CHECK(x, "missing rank: no finding with culprit 1 (%zu findings)", l.n);
    if (x) {
        CHECK(ranks_are(x->culprits, x->nculprits, "1"), "missing rank: culprits");
        CHECK(ranks_are(x->waiting, x->nwaiting, "0,2,3"), "missing rank: waiting");
        CHECK(!strcmp(x->call, "MPI_Allreduce") && !strcmp(x->comm, "MPI_COMM_WORLD") && x->seq == 3,
              "missing rank: call %s comm %s seq %lld", x->call, x->comm, (long long)x->seq);
        CHECK(!strcmp(x->doing, "MPI_Recv") && !strcmp(x->site, "train.c:89 (main)"), "missing rank: in %s at %s",
              x->doing, x->site);
        CHECK(x->for_s > 2.99 && x->for_s < 3.01, "missing rank: for %.3f s", x->for_s);
        CHECK(strstr(x->text,
                     "seq 3 of MPI_COMM_WORLD (MPI_Allreduce, 8 B): ranks 0,2,3 waiting 3.0 s; rank 1 never "
                     "entered: it is in MPI_Recv from rank 2 (tag 7) since 4.0 s at train.c:89 (main)") == x->text,
              "missing rank: %s", x->text);
    }
    /* rank 1 waits on 2, which waits in the allreduce on 1: a cycle too */
    x = find(&l, "deadlock", 1);
    CHECK(x && ranks_are(x->culprits, x->nculprits, "1,2") && !strcmp(x->call, "MPI_Recv"), "skip: the cycle 1-2");
    CHECK(!find(&l, "dead_rank", 1) && !find(&l, "compute", 1), "skip: nothing else on rank 1");
    /* nothing is stuck below the limit */
    cs_failure_list_free(&l);
    cs_failure_diagnose(&m, 10.0, &l);
    CHECK(l.n == 0, "after 10 s: %zu findings", l.n);
    cs_failure_list_free(&l);
    cs_failure_model_free(&m);

    /* mismatch: rank 1 in a Bcast (root 0) where the others are in the allreduce */
    model4(&m);
    for (int k = 0; k < 4; k++)
        if (k != 1)
            fly(&m, k, CS_OP_MPI_Allreduce, 3, -1, 3, "train.c:91 (main)");
    fly(&m, 1, CS_OP_MPI_Bcast, 3, 0, 3, "train.c:76 (main)");
    cs_failure_diagnose(&m, 2.0, &l);
    x = find(&l, "mismatch", 1);
    CHECK(x && ranks_are(x->waiting, x->nwaiting, "0,2,3") && !strcmp(x->call, "MPI_Bcast") && x->seq == 3 &&
              !strcmp(x->site, "train.c:76 (main)") &&
              !strcmp(x->text, "mismatch at seq 3 of MPI_COMM_WORLD: ranks 0,2,3 in MPI_Allreduce, but rank 1 in "
                               "MPI_Bcast (root 0)"),
          "mismatch: %s", x ? x->text : "none");
    cs_failure_list_free(&l);
    cs_failure_model_free(&m);

    /* deadlock: 1 -> 2 -> 3 -> 1 receiving; rank 0 in the allreduce */
    model4(&m);
    fly(&m, 0, CS_OP_MPI_Allreduce, 3, -1, 3, "train.c:91 (main)");
    for (int k = 1; k < 4; k++)
        fly(&m, k, CS_OP_MPI_Recv, -1, k == 3 ? 1 : k + 1, 3, "train.c:89 (main)");
    cs_failure_diagnose(&m, 2.0, &l);
    x = find(&l, "deadlock", 1);
    CHECK(x && ranks_are(x->culprits, x->nculprits, "1-3") && x->seq == -1 &&
              strstr(x->text, "deadlock, a cycle of 3 ranks: rank 1 (in MPI_Recv from rank 2 (tag 7)") == x->text &&
              strstr(x->text, "-> rank 3 (in MPI_Recv from rank 1 (tag 7) since 3.0 s at train.c:89 (main)) -> rank 1"),
          "deadlock3: %s", x ? x->text : "none");
    cs_failure_list_free(&l);
    cs_failure_model_free(&m);

    /* compute: rank 1 outside any call; named as the missing rank only */
    model4(&m);
    for (int k = 0; k < 4; k++)
        if (k != 1)
            fly(&m, k, CS_OP_MPI_Allreduce, 3, -1, 3, "train.c:91 (main)");
    cs_failure_diagnose(&m, 2.0, &l);
    x = find(&l, "missing_rank", 1);
    CHECK(x &&
              strstr(x->text, "rank 1 never entered: it is outside any traced call since 5.0 s (its last call: "
                              "MPI_Sendrecv at train.c:93 (main))") &&
              !strcmp(x->site, "train.c:93 (main)") && !x->doing[0],
          "compute: %s", x ? x->text : "none");
    CHECK(!find(&l, "compute", 1), "compute: named twice");
    cs_failure_list_free(&l);
    cs_failure_model_free(&m);

    /* post mortem: rank 1 exited without MPI_Finalize, the others killed in the allreduce */
    model4(&m);
    for (int k = 0; k < 4; k++) {
        m.r[k].alive = 0;
        if (k != 1)
            fly(&m, k, CS_OP_MPI_Allreduce, 3, -1, 1, "train.c:91 (main)");
    }
    m.r[1].closed = 1;
    cs_failure_diagnose(&m, 0.0, &l);
    x = find(&l, "dead_rank", 1);
    CHECK(
        x && !strcmp(x->text, "rank 1 (pid 101 on node) exited without MPI_Finalize; 3 other rank(s) never finished") &&
            !strcmp(x->call, "MPI_Sendrecv"),
        "exit: %s", x ? x->text : "none");
    x = find(&l, "dead_rank", 2);
    CHECK(x && !strcmp(x->text, "rank 2 (pid 102 on node) died without an exit record (killed?) in MPI_Allreduce at "
                                "train.c:91 (main)"),
          "killed: %s", x ? x->text : "none");
    x = find(&l, "missing_rank", 1);
    CHECK(x && strstr(x->text, "rank 1 never entered: it exited without MPI_Finalize"), "exit: missing %s",
          x ? x->text : "none");
    cs_failure_list_free(&l);
    cs_failure_model_free(&m);

    /* a job that ended well */
    model4(&m);
    for (int k = 0; k < 4; k++) {
        m.r[k].alive = 0;
        m.r[k].closed = m.r[k].finalized = 1;
    }
    cs_failure_diagnose(&m, 0.0, &l);
    CHECK(l.n == 0, "finished: %zu findings (%s)", l.n, l.n ? l.v[0].text : "");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cs_failure_json(f, &l);
    fclose(f);
    CHECK(buf && !strcmp(buf, "[]"), "finished: JSON %s", buf ? buf : "(null)");
    free(buf);
    cs_failure_list_free(&l);

    /* what other sources add: a sampled stack and a GPU operation in flight */
    m.r[1].closed = m.r[1].finalized = 0;
    m.r[1].alive = 1;
    m.r[1].nframes = 2;
    m.r[1].stack_t = NOW - S_NS;
    snprintf(m.r[1].stack, sizeof m.r[1].stack, "hang_spin_forever at hang.c:40\nmain at hang.c:80");
    m.r[2].has_gpu = 1;
    m.r[2].gpu.op = CS_OP_ncclAllReduce;
    m.r[2].gpu.comm = 1;
    m.r[2].gpu.seq = 7;
    m.r[2].gpu.t0 = NOW - 30 * S_NS;
    buf = NULL;
    f = open_memstream(&buf, &len);
    cs_failure_print_ranks(&m, f);
    fclose(f);
    CHECK(buf && strstr(buf, "  rank 1: stack (2 frames, sampled 1.0 s ago):\n    hang_spin_forever at hang.c:40\n"
                             "    main at hang.c:80\n"),
          "stack: %s", buf ? buf : "(null)");
    CHECK(buf && strstr(buf, "  rank 2: GPU ncclAllReduce seq 7 of MPI_COMM_WORLD enqueued 30.0 s ago, not finished\n"),
          "gpu: %s", buf ? buf : "(null)");
    CHECK(buf && strstr(buf, "  ranks 0,2,3: finished\n"), "ranks alike: %s", buf ? buf : "(null)");
    free(buf);
    cs_failure_model_free(&m);

    if (failures)
        return 1;
    printf("ok: the diagnosis of hand-made models: missing rank, cycle, mismatch, deadlock of 3, compute, exit "
           "without MPI_Finalize, killed, finished; stack and GPU printed\n");
    return 0;
}
