/* gen_trace: write a synthetic job trace of any size through the store API,
 * for the analysis benchmark (bench/analysis_bench.sh) and the analysis
 * tests of known answers (tests/analysis/synthetic.sh). Every rank runs
 * steps of: a step marker (MPI_Pcontrol), compute, two allreduces, a ring
 * exchange (send right, receive from the left) and a barrier, with a small
 * random jitter; effects can be injected:
 *
 *   gen_trace OUT.db [--ranks N] [--spans M] [--steps S] [--jitter US] [--seed X]
 *                    [--persistent R:US] [--transient R:A-B:US]
 *                    [--slow-link SRC:DST:US] [--slow-coll A-B:US] [--cost ALPHA_NS:BETA_PS]
 *
 * --spans sets the steps (spans / (ranks x 6)) unless --steps is given.
 * --persistent: rank R computes US longer before the first allreduce of
 * every step; --transient: the same in steps A-B only; --slow-link: every
 * message SRC -> DST arrives US late; --slow-coll: the first allreduce of
 * steps A-B transfers US longer while every rank is on time. --cost: the
 * allreduces transfer in exactly ALPHA_NS + bytes x BETA_PS / 1000 ns (plus
 * the jitter, 0 with --jitter 0, and each rank's exit spread of 0-2 us),
 * and the first one of step k carries 1 KiB << (k % 11) bytes, so a cost
 * model fitted to the trace should give back alpha and beta
 * (tests/analysis/costmodel.sh). Exit status 0, 1 when the file cannot be
 * written, 2 on bad usage. */
#include "config.h"
#include "libtrace/ops.gen.h"
#include "libtrace/span.h"
#include "libtrace/store.h"
#include "libtrace/store_analysis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GEN_SPANS_PER_STEP 6

static uint64_t gen_rng = 88172645463325252ull;
static int64_t gen_rand(int64_t n)
{
    gen_rng ^= gen_rng << 13;
    gen_rng ^= gen_rng >> 7;
    gen_rng ^= gen_rng << 17;
    return n > 0 ? (int64_t)(gen_rng % (uint64_t)n) : 0;
}

static const char gen_usage[] =
    "usage: gen_trace OUT.db [--ranks N] [--spans M] [--steps S] [--jitter US] [--seed X]\n"
    "                 [--persistent R:US] [--transient R:A-B:US] [--slow-link SRC:DST:US] [--slow-coll A-B:US]\n"
    "                 [--cost ALPHA_NS:BETA_PS]\n";

int main(int argc, char **argv)
{
    const char *out = NULL;
    int64_t nspans = 1000000, steps = 0, jitter = 20000;
    int nranks = 64;
    int p_rank = -1, t_rank = -1, l_src = -1, l_dst = -1;
    long long p_us = 0, t_a = 0, t_b = -1, t_us = 0, l_us = 0, c_a = 0, c_b = -1, c_us = 0;
    long long cost_alpha = -1, cost_beta_ps = 0;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1;
        if (!strcmp(argv[i], "--spans") && v)
            nspans = strtoll(v, NULL, 10);
        else if (!strcmp(argv[i], "--steps") && v)
            steps = strtoll(v, NULL, 10);
        else if (!strcmp(argv[i], "--ranks") && v)
            nranks = atoi(v);
        else if (!strcmp(argv[i], "--jitter") && v)
            jitter = strtoll(v, NULL, 10) * 1000;
        else if (!strcmp(argv[i], "--seed") && v)
            gen_rng ^= (uint64_t)strtoull(v, NULL, 10) * 0x9e3779b97f4a7c15ull;
        else if (!strcmp(argv[i], "--persistent") && v)
            ok = sscanf(v, "%d:%lld", &p_rank, &p_us) == 2;
        else if (!strcmp(argv[i], "--transient") && v)
            ok = sscanf(v, "%d:%lld-%lld:%lld", &t_rank, &t_a, &t_b, &t_us) == 4;
        else if (!strcmp(argv[i], "--slow-link") && v)
            ok = sscanf(v, "%d:%d:%lld", &l_src, &l_dst, &l_us) == 3;
        else if (!strcmp(argv[i], "--slow-coll") && v)
            ok = sscanf(v, "%lld-%lld:%lld", &c_a, &c_b, &c_us) == 3;
        else if (!strcmp(argv[i], "--cost") && v)
            ok = sscanf(v, "%lld:%lld", &cost_alpha, &cost_beta_ps) == 2 && cost_alpha >= 0 && cost_beta_ps >= 0;
        else if (argv[i][0] != '-' && !out) {
            out = argv[i];
            continue;
        } else
            ok = 0;
        if (!ok) {
            fprintf(stderr, "gen_trace: bad option %s %s\n%s", argv[i], v ? v : "", gen_usage);
            return 2;
        }
        i++;
    }
    if (!out || nranks < 2 || nspans < 1 || jitter < 0) {
        fputs(gen_usage, stderr);
        return 2;
    }
    if (steps <= 0)
        steps = nspans / ((int64_t)nranks * GEN_SPANS_PER_STEP);
    if (steps < 1)
        steps = 1;
    char err[1024];
    cs_store *st;
    if (cs_store_create(out, &st, err, sizeof err) != 0) {
        fprintf(stderr, "gen_trace: %s\n", err);
        return 1;
    }
    cs_synth *w = cs_store_synth_begin(st, err, sizeof err);
    if (!w) {
        fprintf(stderr, "gen_trace: %s\n", err);
        cs_store_close(st);
        return 1;
    }
    int64_t *tr = calloc((size_t)nranks, sizeof *tr), *entry = calloc((size_t)nranks, sizeof *entry),
            *sb = calloc((size_t)nranks, sizeof *sb);
    if (!tr || !entry || !sb) {
        fprintf(stderr, "gen_trace: out of memory\n");
        return 1;
    }
    int64_t id = 1, seq = 0, t0 = 1000000000;
    for (int r = 0; r < nranks; r++) {
        tr[r] = t0;
        if (cs_synth_comm(w, 1, r, r, nranks) != 0)
            goto werr;
    }
    cs_span s;
    memset(&s, 0, sizeof s);
    s.peer = s.peer2 = s.tag = -1;
    s.callsite = 0;
#define EMIT(RANK, OP, B, E, COMM, SEQ, BYTES, FLAGS) \
    do {                                              \
        s.id = id++;                                  \
        s.rank = (RANK);                              \
        s.op = (OP);                                  \
        s.begin_ns = (B);                             \
        s.end_ns = (E);                               \
        s.comm = (COMM);                              \
        s.seq = (SEQ);                                \
        s.bytes = (BYTES);                            \
        s.flags = (FLAGS);                            \
        if (cs_synth_span(w, &s) != 0)                \
            goto werr;                                \
    } while (0)
    const uint32_t collf = CS_F_HAS_SEQ | CS_F_HAS_COMM, p2pf = CS_F_HAS_PEER | CS_F_HAS_COMM;
    for (int64_t k = 0; k < steps; k++) {
        for (int r = 0; r < nranks; r++) {
            EMIT(r, CS_OP_MPI_Pcontrol, tr[r], tr[r] + 300, 0, -1, 0, 0);
            tr[r] += 300;
        }
        for (int b = 0; b < 2; b++) {
            int64_t last = 0;
            for (int r = 0; r < nranks; r++) {
                int64_t comp = (b == 0 ? 1000000 : 50000) + gen_rand(jitter + 1);
                if (b == 0 && r == p_rank)
                    comp += p_us * 1000;
                if (b == 0 && r == t_rank && k >= t_a && k <= t_b)
                    comp += t_us * 1000;
                entry[r] = tr[r] + comp;
                if (entry[r] > last)
                    last = entry[r];
            }
            int64_t bytes = b == 0 ? 4 << 20 : 4096;
            if (cost_alpha >= 0 && b == 0)
                bytes = (int64_t)1024 << (k % 11);
            int64_t xfer = cost_alpha >= 0 ? cost_alpha + bytes * cost_beta_ps / 1000 + gen_rand(jitter / 4 + 1)
                                           : 30000 + gen_rand(jitter / 4 + 1);
            if (b == 0 && k >= c_a && k <= c_b)
                xfer += c_us * 1000;
            seq++;
            for (int r = 0; r < nranks; r++) {
                int64_t e = last + xfer + gen_rand(2000);
                EMIT(r, CS_OP_MPI_Allreduce, entry[r], e, 1, seq, bytes, collf);
                tr[r] = e;
            }
        }
        /* ring: send right, then receive from the left */
        for (int r = 0; r < nranks; r++)
            sb[r] = tr[r] + 5000 + gen_rand(jitter / 4 + 1);
        for (int r = 0; r < nranks; r++) {
            int right = (r + 1) % nranks, left = (r + nranks - 1) % nranks;
            s.tag = 7;
            s.peer = right;
            EMIT(r, CS_OP_MPI_Send, sb[r], sb[r] + 8000, 1, -1, 65536, p2pf);
            int64_t rb = sb[r] + 8000, re = (sb[left] + 10000 > rb ? sb[left] + 10000 : rb) + 12000;
            if (left == l_src && r == l_dst)
                re += l_us * 1000;
            s.peer = left;
            EMIT(r, CS_OP_MPI_Recv, rb, re, 1, -1, 65536, p2pf);
            s.peer = s.tag = -1;
            tr[r] = re;
        }
        int64_t last = 0;
        for (int r = 0; r < nranks; r++) {
            entry[r] = tr[r] + 20000 + gen_rand(jitter / 4 + 1);
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
        if (cs_synth_process(w, r, nranks, t0, tr[r], steps * GEN_SPANS_PER_STEP) != 0)
            goto werr;
    if (cs_store_synth_end(w, err, sizeof err) != 0 || cs_store_finish(st, "gen_trace", err, sizeof err) != 0) {
        fprintf(stderr, "gen_trace: %s\n", err);
        cs_store_close(st);
        return 1;
    }
    cs_store_close(st);
    printf("gen_trace: %lld spans, %d ranks, %lld steps -> %s\n", (long long)(id - 1), nranks, (long long)steps, out);
    free(tr);
    free(entry);
    free(sb);
    return 0;
werr:
    fprintf(stderr, "gen_trace: cannot write %s\n", out);
    cs_store_close(st);
    return 1;
}
