/* tui_gen: write a synthetic trace of any size, for the TUI benchmark and
 * tests: RANKS ranks run steps of compute, six allreduces, a send/receive
 * pair with a neighbour, a barrier and a step marker; one rank is late in
 * one step out of ten.
 *   tui_gen OUT.db [--spans N] [--ranks R] [--straggler RANK]  */
#include "config.h"
#include "libtrace/ops.gen.h"
#include "libtrace/span.h"
#include "libtrace/store_tui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GEN_SPANS_PER_STEP 10

static uint64_t gen_rng = 88172645463325252ull;
static int64_t gen_rand(int64_t n)
{
    gen_rng ^= gen_rng << 13;
    gen_rng ^= gen_rng >> 7;
    gen_rng ^= gen_rng << 17;
    return (int64_t)(gen_rng % (uint64_t)n);
}

int main(int argc, char **argv)
{
    const char *out = NULL;
    int64_t nspans = 1000000;
    int nranks = 4, late = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--spans") && i + 1 < argc)
            nspans = strtoll(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--ranks") && i + 1 < argc)
            nranks = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--straggler") && i + 1 < argc)
            late = atoi(argv[++i]);
        else if (argv[i][0] != '-' && !out)
            out = argv[i];
        else {
            fprintf(stderr, "usage: tui_gen OUT.db [--spans N] [--ranks R] [--straggler RANK]\n");
            return 2;
        }
    }
    if (!out || nranks < 1 || nspans < 1) {
        fprintf(stderr, "usage: tui_gen OUT.db [--spans N] [--ranks R] [--straggler RANK]\n");
        return 2;
    }
    int64_t steps = nspans / ((int64_t)nranks * GEN_SPANS_PER_STEP);
    if (steps < 1)
        steps = 1;
    char err[1024];
    cs_tui_bulk *b;
    if (cs_tui_bulk_open(out, &b, err, sizeof err) != 0) {
        fprintf(stderr, "tui_gen: %s\n", err);
        return 1;
    }
    int64_t *tr = calloc((size_t)nranks, sizeof *tr), *entry = calloc((size_t)nranks, sizeof *entry);
    if (!tr || !entry)
        return 1;
    int64_t id = 1, seq = 0, t0 = 1000000;
    for (int r = 0; r < nranks; r++)
        tr[r] = t0;
    cs_span s;
    memset(&s, 0, sizeof s);
    s.peer = s.peer2 = s.tag = -1;
    s.callsite = 1;
#define EMIT(RANK, OP, B, E, COMM, SEQ, BYTES, FLAGS)           \
    do {                                                        \
        s.id = id++;                                            \
        s.rank = (RANK);                                        \
        s.op = (OP);                                            \
        s.begin_ns = (B);                                       \
        s.end_ns = (E);                                         \
        s.comm = (COMM);                                        \
        s.seq = (SEQ);                                          \
        s.bytes = (BYTES);                                      \
        s.flags = (FLAGS);                                      \
        if (cs_tui_bulk_span(b, &s) != 0) {                     \
            fprintf(stderr, "tui_gen: cannot write %s\n", out); \
            return 1;                                           \
        }                                                       \
    } while (0)
    uint32_t collf = CS_F_HAS_SEQ | CS_F_HAS_COMM;
    for (int64_t st = 0; st < steps; st++) {
        for (int r = 0; r < nranks; r++) {
            EMIT(r, CS_OP_MPI_Pcontrol, tr[r], tr[r] + 300, 0, -1, 0, 0);
            tr[r] += 300;
        }
        for (int k = 0; k < 6; k++) {
            int64_t last = 0;
            for (int r = 0; r < nranks; r++) {
                int64_t comp = 100000 + gen_rand(20000);
                if (r == late && st % 10 == 3 && k == 0)
                    comp += 2000000;
                entry[r] = tr[r] + comp;
                if (entry[r] > last)
                    last = entry[r];
            }
            int64_t xfer = 20000 + gen_rand(5000);
            seq++;
            for (int r = 0; r < nranks; r++) {
                EMIT(r, CS_OP_MPI_Allreduce, entry[r], last + xfer, 1, seq, 4 << 20, collf);
                tr[r] = last + xfer;
            }
        }
        for (int r = 0; r < nranks; r++) {
            int64_t c = tr[r] + 30000;
            s.peer = (r ^ 1) < nranks ? (r ^ 1) : r;
            s.tag = 7;
            EMIT(r, CS_OP_MPI_Send, c, c + 15000, 1, -1, 65536, CS_F_HAS_PEER | CS_F_HAS_COMM);
            EMIT(r, CS_OP_MPI_Recv, c + 15000, c + 40000, 1, -1, 65536, CS_F_HAS_PEER | CS_F_HAS_COMM);
            s.peer = s.tag = -1;
            tr[r] = c + 40000;
        }
        int64_t last = 0;
        for (int r = 0; r < nranks; r++) {
            entry[r] = tr[r] + 20000 + gen_rand(5000);
            if (entry[r] > last)
                last = entry[r];
        }
        seq++;
        for (int r = 0; r < nranks; r++) {
            EMIT(r, CS_OP_MPI_Barrier, entry[r], last + 5000, 1, seq, 0, collf);
            tr[r] = last + 5000;
        }
    }
    for (int r = 0; r < nranks; r++)
        if (cs_tui_bulk_proc(b, r, nranks, t0, tr[r], steps * GEN_SPANS_PER_STEP, NULL) != 0) {
            fprintf(stderr, "tui_gen: cannot write %s\n", out);
            return 1;
        }
    if (cs_tui_bulk_close(b, err, sizeof err) != 0) {
        fprintf(stderr, "tui_gen: %s\n", err);
        return 1;
    }
    printf("tui_gen: %lld spans, %d ranks, %lld steps -> %s\n", (long long)(id - 1), nranks, (long long)steps, out);
    free(tr);
    free(entry);
    return 0;
}
