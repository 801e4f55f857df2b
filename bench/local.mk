# bench: rules for this component

# MPI tracing benchmarks (bench/README.md): they print figures against a
# baseline measured in the same run; bench/run-mpi-bench.sh runs them all.
# Not part of make check.
EXTRA_DIST += bench/README.md bench/lib.sh bench/run-mpi-bench.sh bench/callcost.sh bench/run_small.sh bench/lammps-bench.in bench/fuse_bench.sh bench/slowdown_bench.sh \
	bench/fuse_shapes.sh bench/fuse_costs.sh \
	bench/gpu_slowdown_bench.sh bench/gpusim_bench.sh

# What following a job's logs costs (collscope top): bench/live_bench.sh.
noinst_PROGRAMS += bench/live_bench
bench_live_bench_SOURCES = bench/live_bench.c
bench_live_bench_LDADD = $(CS_LIVE_LIBS) $(PTHREAD_LIBS)
EXTRA_DIST += bench/live_bench.sh
EXTRA_DIST += bench/report_bench.sh

noinst_PROGRAMS += bench/log_gen
bench_log_gen_SOURCES = bench/log_gen.c
bench_log_gen_LDADD = $(CS_LOG_LIBS) $(PTHREAD_LIBS)

# Synthetic traces, one generator in two layouts: gen_trace for the analysis
# benchmark and tests (bench/analysis_bench.sh, tests/analysis/), tui_gen
# (the TUI layout by default) for the TUI benchmark and tests (tests/tui/).
noinst_PROGRAMS += bench/gen_trace bench/tui_gen
bench_gen_trace_SOURCES = bench/gen_trace.c
bench_gen_trace_LDADD = $(CS_STORE_LIBS) $(PTHREAD_LIBS)
bench_tui_gen_SOURCES = bench/gen_trace.c
bench_tui_gen_CPPFLAGS = $(AM_CPPFLAGS) -DGEN_TUI=1
bench_tui_gen_LDADD = $(CS_STORE_LIBS) $(PTHREAD_LIBS)

if HAVE_OMPI
noinst_PROGRAMS += bench/mpi_loop_ompi
bench_mpi_loop_ompi_SOURCES = bench/mpi_loop.c
bench_mpi_loop_ompi_CFLAGS = $(AM_CFLAGS) $(OMPI_CFLAGS)
bench_mpi_loop_ompi_LDADD = $(OMPI_LIBS)
endif

if HAVE_MPICH
noinst_PROGRAMS += bench/mpi_loop_mpich
bench_mpi_loop_mpich_SOURCES = bench/mpi_loop.c
bench_mpi_loop_mpich_CFLAGS = $(AM_CFLAGS) $(MPICH_CFLAGS)
bench_mpi_loop_mpich_LDADD = $(MPICH_LIBS)
endif

# NCCL: the added cost of an intercepted ncclAllReduce (and of the profiler
# plugin's events), on the CPU stand-in libnccl (tests/standins/, built by
# make check), loaded at run time.
if HAVE_NCCL
if HAVE_OMPI
noinst_PROGRAMS += bench/nccl_overhead
bench_nccl_overhead_SOURCES = bench/nccl_overhead.c
bench_nccl_overhead_CFLAGS = $(AM_CFLAGS) $(CUDA_CFLAGS) $(OMPI_CFLAGS)
bench_nccl_overhead_LDADD = $(OMPI_LIBS) -ldl
else
EXTRA_DIST += bench/nccl_overhead.c
endif
else
EXTRA_DIST += bench/nccl_overhead.c
endif
# Accuracy of the what-if estimates and clock alignment on real runs (bench/README.md).
EXTRA_DIST += bench/whatif_bench.sh

# Generated PyTorch profiler traces for the import benchmark
# (bench/import_bench.sh).
noinst_PROGRAMS += bench/kineto_gen
bench_kineto_gen_SOURCES = bench/kineto_gen.c
bench_kineto_gen_LDADD = $(ZLIB_LIBS)
EXTRA_DIST += bench/import_bench.sh bench/import_scale.sh bench/hta_breakdown.py
# A job kept as rank stores against its merged trace (printed, not timed).
EXTRA_DIST += bench/scale_bench.sh
# What each phase of the analysis costs per span (docs/scale.md; printed).
EXTRA_DIST += bench/scale_phases.sh
