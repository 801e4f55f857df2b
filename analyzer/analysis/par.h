/* par.h: the processes of a parallel analysis and what they exchange.
 *
 * A parallel analysis runs as K processes, numbered 0..K-1, all taking the
 * same steps (SPMD): MPI ranks under mpirun (par_mpi.c, a program of its
 * own per MPI found), or worker processes forked by `collscope analyze -j
 * K` where no MPI is installed (par_fork.c). Process 0 is the root: it
 * writes the results. Both transports give the same two collective calls;
 * every process makes them in the same order. */
#ifndef CS_PAR_H
#define CS_PAR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "libtrace/source.h"

typedef struct cs_par cs_par;
struct cs_par {
    int rank, size;
    /* Each process gives len bytes at buf. At the root, *all is a malloc'd
     * concatenation of every process's bytes in rank order (its own first)
     * and lens[0..size-1] their lengths; elsewhere *all is NULL and lens is
     * not touched. 0, or -1 where the exchange failed (a process stopped):
     * the caller gives up. */
    int (*gather)(cs_par *p, const void *buf, size_t len, void **all, size_t *lens);
    /* The root's *len bytes at *buf to every process: elsewhere *buf is
     * set to a malloc'd copy and *len to its length. 0 or -1 as gather. */
    int (*bcast)(cs_par *p, void **buf, size_t *len);
    /* Bytes this process has sent and received through gather and bcast
     * (the figures benches print). */
    uint64_t sent, received;
    void *impl;
};

/* The analysis of the job kept as rank stores in dir (DIR/index.db), by
 * every process of par: each reads its share of the rank stores, and the
 * root saves the results in DIR/results.db. A current stored analysis is
 * kept unless force. As cs_analysis_run: 0; 1 when rank stores were left
 * out (named in a note on log) and the others analysed; -1 with err set.
 * Every process returns the root's verdict. The transport is the
 * caller's: the library never starts processes (analyzer/par/). */
int cs_analysis_run_par(const cs_source *src, int force, cs_par *par, FILE *log, char *err, size_t errlen);

/* The transport of a parallel analysis of one process (size 1): what
 * cs_analysis_run runs a job kept as rank stores with. */
void cs_par_self(cs_par *p);

#endif
