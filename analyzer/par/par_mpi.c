/* par_mpi.c: the processes of a parallel analysis as the ranks of an MPI
 * job (par.h): the program collscope-analyze-MPI, one built per MPI found,
 * that `collscope analyze` starts under mpirun (or execs when mpirun
 * started it). Usage: collscope-analyze-MPI [--force] DIR|TRACE.db. */
#include "config.h"
#include "analyzer/analysis/csanalysis.h"
#include "analyzer/analysis/par.h"
#include "common/msg.h"

#include <limits.h>
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* The most bytes one MPI call moves (its counts are int). Test-only:
 * COLLSCOPE_PAR_TEST_CHUNK=BYTES makes it smaller so that the rounds of a
 * big message are exercised on small ones. */
static size_t par_mpi_chunk = (size_t)1 << 30;

static int par_mpi_gather(cs_par *p, const void *buf, size_t len, void **all, size_t *lens)
{
    /* every process learns every length, so that all agree on the rounds */
    uint64_t mine = len, *aLen = malloc((size_t)p->size * sizeof *aLen);
    int *aCount = malloc((size_t)p->size * sizeof *aCount), *aDispl = malloc((size_t)p->size * sizeof *aDispl);
    size_t *aOff = malloc((size_t)p->size * sizeof *aOff);
    char *out = NULL, *tmp = NULL;
    int rc = -1;
    if (!aLen || !aCount || !aDispl || !aOff)
        goto out;
    if (MPI_Allgather(&mine, 1, MPI_UINT64_T, aLen, 1, MPI_UINT64_T, MPI_COMM_WORLD) != MPI_SUCCESS)
        goto out;
    size_t total = 0, most = 0;
    for (int i = 0; i < p->size; i++) {
        aOff[i] = total;
        total += aLen[i];
        if (aLen[i] > most)
            most = aLen[i];
    }
    /* In each round every process sends up to q bytes, so a round's bytes
     * (and so every displacement) fit an int. */
    size_t q = par_mpi_chunk / (size_t)p->size;
    if (q == 0)
        q = 1;
    size_t rounds = most ? (most + q - 1) / q : 1;
    size_t round = q * (size_t)p->size < total ? q * (size_t)p->size : total;
    if (p->rank == 0) {
        out = malloc(total ? total : 1);
        /* one round lands in place; more go through a buffer of one round */
        tmp = rounds == 1 ? out : malloc(round ? round : 1);
        if (!out || !tmp) {
            /* the others are in the collective already */
            fprintf(stderr, "collscope: out of memory for the %zu bytes of a gather\n", total);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    for (size_t r = 0; r < rounds; r++) {
        size_t done = r * q, n = len > done ? len - done : 0, off = 0;
        if (n > q)
            n = q;
        for (int i = 0; i < p->size; i++) {
            size_t ni = aLen[i] > done ? aLen[i] - done : 0;
            aCount[i] = (int)(ni > q ? q : ni);
            aDispl[i] = (int)off;
            off += (size_t)aCount[i];
        }
        const char *from = n ? (const char *)buf + done : (const char *)&mine;
        if (MPI_Gatherv(from, (int)n, MPI_BYTE, tmp, aCount, aDispl, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
            goto out;
        if (p->rank == 0 && rounds > 1)
            for (int i = 0; i < p->size; i++)
                memcpy(out + aOff[i] + done, tmp + aDispl[i], (size_t)aCount[i]);
    }
    if (p->rank == 0) {
        for (int i = 0; i < p->size; i++) {
            lens[i] = (size_t)aLen[i];
            if (i)
                p->received += sizeof mine + aLen[i];
        }
        if (tmp == out)
            tmp = NULL;
        *all = out;
        out = NULL;
    } else {
        p->sent += sizeof mine + len;
    }
    rc = 0;
out:
    if (tmp != out)
        free(tmp);
    free(out);
    free(aLen);
    free(aCount);
    free(aDispl);
    free(aOff);
    return rc;
}

static int par_mpi_bcast(cs_par *p, void **buf, size_t *len)
{
    uint64_t n = *len;
    if (MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        return -1;
    char *b = p->rank == 0 ? *buf : malloc(n ? (size_t)n : 1);
    if (p->rank != 0 && !b) {
        /* the root is in the broadcast already */
        fprintf(stderr, "collscope: out of memory for the %llu bytes of a broadcast\n", (unsigned long long)n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t done = 0; done < n; done += par_mpi_chunk) {
        size_t c = n - done < par_mpi_chunk ? n - done : par_mpi_chunk;
        if (MPI_Bcast(b + done, (int)c, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS) {
            if (p->rank)
                free(b);
            return -1;
        }
    }
    if (p->rank == 0) {
        p->sent += (sizeof n + n) * (uint64_t)(p->size - 1);
        return 0;
    }
    p->received += sizeof n + n;
    *buf = b;
    *len = (size_t)n;
    return 0;
}

int main(int argc, char **argv)
{
    int force = 0, rank = 0, size = 1;
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--force") == 0)
            force = 1;
        else if (!dir && argv[i][0] != '-')
            dir = argv[i];
        else
            dir = NULL, i = argc;
    }
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "collscope: MPI_Init failed\n");
        return 1;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (!dir) {
        if (rank == 0)
            fprintf(stderr, "usage: %s [--force] DIR|TRACE.db (started by collscope analyze)\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    /* Test-only: COLLSCOPE_PAR_TEST_KILL=RANK kills that process here, as
     * a crash would (tests/store/par_transport_mpi.inc.sh). */
    const char *kill_rank = getenv("COLLSCOPE_PAR_TEST_KILL");
    if (kill_rank && atoi(kill_rank) == rank)
        raise(SIGKILL);
    /* the root starts nothing before every process is up */
    if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS) {
        MPI_Finalize();
        return 1;
    }
    const char *chunk = getenv("COLLSCOPE_PAR_TEST_CHUNK");
    if (chunk && atol(chunk) > 0 && (size_t)atol(chunk) < par_mpi_chunk)
        par_mpi_chunk = (size_t)atol(chunk);
    const char *verbose = getenv("COLLSCOPE_VERBOSE");
    if (rank == 0 && verbose && *verbose)
        cs_note("analysing %s with %d MPI processes (%s)", dir, size, argv[0]);
    cs_par par = { .rank = rank, .size = size, .gather = par_mpi_gather, .bcast = par_mpi_bcast };
    char err[1024] = "";
    int rc;
    cs_source src;
    if (cs_source_open(dir, &src, err, sizeof err) != 0) {
        rc = -1;
    } else if (src.kind == CS_SOURCE_JOB) {
        rc = cs_analysis_run_par(&src, force, &par, stderr, err, sizeof err);
    } else {
        /* a merged trace: one process analyses it, the others take its verdict */
        int32_t v = 0;
        if (rank == 0) {
            if (size > 1)
                fprintf(stderr, "collscope: a merged trace is analysed by one process\n");
            v = cs_analysis_run(&src, force, stderr, err, sizeof err);
        }
        rc = MPI_Bcast(&v, 1, MPI_INT32_T, 0, MPI_COMM_WORLD) == MPI_SUCCESS ? v : -1;
    }
    if (rc < 0 && rank == 0)
        cs_error("%s", err);
    if (rank == 0 && verbose && *verbose)
        fprintf(stderr, "collscope: process 0 sent %llu and received %llu bytes\n", (unsigned long long)par.sent,
                (unsigned long long)par.received);
    MPI_Finalize();
    return rc != 0;
}
