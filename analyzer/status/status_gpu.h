/* status_gpu.h: NCCL collectives whose GPU work is in flight, read from
 * the live (or dead) per-process logs of a job for `collscope status`
 * (status_gpu.c; docs/hangs.md). */
#ifndef CS_STATUS_GPU_H
#define CS_STATUS_GPU_H

#include <stdint.h>

/* What the logs say. */
typedef struct cs_status_gpu {
    /* per rank with GPU work in flight: "rank 2: GPU work of ncclAllReduce
     * seq 5 of comm:... not started, enqueued 3.1 s ago at f.cu:374" */
    char (*line)[512];
    int nline;
    /* one a stuck collective (kind nccl_stall): the culprits, the
     * collective (op, communicator, seq), how long since enqueue, and the
     * members waiting */
    char (*diag)[1024];
    int ndiag;
    /* per rank: the oldest collective whose GPU work is in flight, for a
     * caller's own model (rank, op name, communicator, seq, since, begun) */
    struct cs_status_gpu_rank {
        int rank;
        const char *op;
        uint64_t comm;
        uint32_t seq;
        double since_s; /* since it was enqueued */
        int begun;      /* its GPU work started */
        int stuck;      /* in flight for the limit, or its process is gone */
    } * rank;
    int nrank;
} cs_status_gpu;

/* Read DIR/logs/ *.cslog (regular files only). after_s: GPU work in flight
 * that long since its enqueue is stuck; now_real: the time of the
 * reading (CLOCK_REALTIME ns). Fills g (free with cs_status_gpu_free);
 * returns the number of diagnoses, or -1 when out of memory. */
int cs_status_gpu_read(const char *dir, double after_s, int64_t now_real, cs_status_gpu *g);
void cs_status_gpu_free(cs_status_gpu *g);

#endif
