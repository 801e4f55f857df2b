#!/usr/bin/python3
"""mpi4py_allreduce: an mpi4py + numpy workload for collscope.

Each round sums a numpy vector across ranks with comm.Allreduce (the
buffer interface, which calls MPI_Allreduce; lower-case comm.allreduce
pickles and would not), then synchronises with comm.Barrier. Rank 0 prints
"checksum: X"; every rank prints the MPI calls it made, as
"calls: rank R MPI_Allreduce=N MPI_Barrier=N".

Usage: mpirun -np 4 /usr/bin/python3 mpi4py_allreduce.py [ROUNDS] [LENGTH]
"""
import sys

import numpy as np
from mpi4py import MPI


def say(line):
    """Print line with one write, so that mpirun does not mix it with others."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main(argv):
    rounds = int(argv[1]) if len(argv) > 1 else 10
    length = int(argv[2]) if len(argv) > 2 else 1000
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    counts = {"MPI_Allreduce": 0, "MPI_Barrier": 0}

    x = np.arange(length, dtype=np.float64) * (rank + 1) / length
    total = np.empty_like(x)
    for _ in range(rounds):
        comm.Allreduce(x, total, op=MPI.SUM)
        counts["MPI_Allreduce"] += 1
        x = total / size + 0.5
        comm.Barrier()
        counts["MPI_Barrier"] += 1

    if rank == 0:
        say("checksum: %.12e" % float(np.sum(x)))
    say("calls: rank %d %s" % (rank, " ".join("%s=%d" % kv for kv in counts.items())))


if __name__ == "__main__":
    main(sys.argv)
