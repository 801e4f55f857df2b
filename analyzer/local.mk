# analyzer: the house of the analysis, in rooms (docs/design.md), each with
# its own local.mk, included by Makefile.am from the bottom up:
#   analysis/  libcsanalysis: the trace source's analysis, the context, the
#              passes, verdicts, tails, the model and replays, the slowdown
#   status/    libcsstatus: job status (hangs, GPU views) and the failures
#   report/    libcsreport: the report model, its writers, gates, diff,
#              estimate
#   formats/   libcsformats: Kineto import, the exports, their shared I/O
#   par/       the parallel analysis's drivers: forked workers and MPI
#   cmd/       the collscope command: main.c and one cmd_*.c per command
# This file holds the tests of the analyzer as a whole.
# align_strict.sh (offsets within 5 us, Open MPI) passed 5 of 5 with two
# busy loops beside it. verdicts_ompi.sh and verdicts_mpich.sh (the four
# straggler cases, 4 ranks, 100 ms delays, 20 steps; about 20 s together)
# each passed 5 of 5 in a row with a busy loop beside them.
TESTS += tests/analysis/synthetic.sh tests/analysis/faults.sh tests/analysis/align_strict.sh \
	tests/analysis/verdicts_ompi.sh tests/analysis/verdicts_mpich.sh
# The cost model on a synthetic trace of known alpha and beta (1 s), the
# what-if replay, proposals and check-estimate on the trainer (about 15 s).
TESTS += tests/analysis/numargs.sh tests/analysis/json_nonfinite.sh tests/analysis/sparse_ranks.sh tests/analysis/bad_traces.sh
TESTS += tests/analysis/sparse_ranks_nb.sh
EXTRA_DIST += tests/analysis/numargs.sh tests/analysis/json_nonfinite.sh tests/analysis/sparse_ranks.sh tests/analysis/bad_traces.sh tests/analysis/badtrace.inc.sh
EXTRA_DIST += tests/analysis/sparse_ranks_nb.sh tests/analysis/sparse_ranks.inc.sh
TESTS += tests/analysis/costmodel.sh tests/analysis/whatif.sh tests/analysis/apply_estimate.sh
# Steps without markers and nonblocking collectives timed to their
# completion, on nbloop under each MPI (six 4-rank runs each, about 20 s).
TESTS += tests/analysis/nb_steps_ompi.sh tests/analysis/nb_steps_mpich.sh
EXTRA_DIST += tests/analysis/nb_steps_ompi.sh tests/analysis/nb_steps_mpich.sh tests/analysis/nb_steps.inc.sh
EXTRA_DIST += tests/analysis/costmodel.sh tests/analysis/whatif.sh tests/analysis/apply_estimate.sh
# Fusion gated on the programs' own step times, nbloop without markers, both
# MPIs (3 pairs of runs of 3 bucket patterns each; 2-4 min together).
TESTS += tests/analysis/nb_fusion_ompi.sh tests/analysis/nb_fusion_mpich.sh
EXTRA_DIST += tests/analysis/nb_fusion_ompi.sh tests/analysis/nb_fusion_mpich.sh tests/analysis/nb_fusion.inc.sh
# An apply-mode trace has its unfused twin's steps (2 pairs of 2-rank runs, about 10 s).
TESTS += tests/analysis/fuse_steps.sh
EXTRA_DIST += tests/analysis/fuse_steps.sh
EXTRA_DIST += tests/analysis/verdicts_ompi.sh tests/analysis/verdicts_mpich.sh tests/analysis/verdicts.inc.sh \
	tests/analysis/synthetic.sh tests/analysis/faults.sh
dist_doc_DATA += docs/report-json.md docs/interop.md
EXTRA_DIST += bench/analysis_bench.sh tests/analysis/align_strict.sh bench/export_bench.sh
# The recurring straggler verdict on nbloop (every 2nd, 3rd, 10th and
# random steps, with and without markers, blocking and nonblocking, and a
# clean run), under each MPI.
TESTS += tests/analysis/recurring_ompi.sh tests/analysis/recurring_mpich.sh
EXTRA_DIST += tests/analysis/recurring_ompi.sh tests/analysis/recurring_mpich.sh tests/analysis/recurring.inc.sh
# Each wait state against its definition, row by row (gen_trace, no MPI).
TESTS += tests/analysis/waits_exact.sh
EXTRA_DIST += tests/analysis/waits_exact.sh
# Steps without markers through a rank held 40 ms in one step (a blocking
# job repeating one call: the marks must not stop there).
TESTS += tests/analysis/steps_idle.sh
EXTRA_DIST += tests/analysis/steps_idle.sh
# The same verdict on synthetic traces of known answers (bench/gen_trace
# --recurring; 1 s, no MPI).
TESTS += tests/analysis/recurring_synth.sh
EXTRA_DIST += tests/analysis/recurring_synth.sh
# One story: a steady late rank with a start-up burst, and the recorded
# demo on shared and on loaded cores, are both the persistent straggler
# and the slow worker (gen_trace, two 50 KB traces; 2 s, no MPI).
TESTS += tests/analysis/one_story.sh
EXTRA_DIST += tests/analysis/one_story.sh tests/analysis/data/demo_shared_cores.db.gz \
	tests/analysis/data/demo_loaded.db.gz
# ... and on a recorded MPICH trace where transient windows once hid it.
TESTS += tests/analysis/recurring_trace.sh
EXTRA_DIST += tests/analysis/recurring_trace.sh tests/analysis/data/mpich_recurring_random.db.gz
# The straggler cases of verdicts_*.sh on the trainer with nonblocking
# buckets, with and without step markers.
TESTS += tests/analysis/verdicts_nb_ompi.sh tests/analysis/verdicts_nb_mpich.sh
EXTRA_DIST += tests/analysis/verdicts_nb_ompi.sh tests/analysis/verdicts_nb_mpich.sh tests/analysis/verdicts_nb.inc.sh
# The Chrome trace-event export of a traced 4-rank run, checked with
# Python's json, and its bad input (about 5 s); the GPU stream tracks of the
# NCCL trainer under the CPU stand-ins (about 3 s).
TESTS += tests/analysis/export_chrome.sh tests/analysis/export_chrome_gpu.sh tests/analysis/export_signal.sh tests/analysis/export_interrupted.sh
EXTRA_DIST += tests/analysis/export_chrome.sh tests/analysis/export_chrome_gpu.sh tests/analysis/export_signal.sh tests/analysis/export_interrupted.sh
# The OTF2 export of two traced 4-rank runs, read back with otf2-print
# (skips, after checking the refusal, in a build without libotf2; about
# 5 s), and the GPU stream locations of the NCCL trainer under the CPU
# stand-ins (about 3 s).
TESTS += tests/analysis/export_otf2.sh tests/analysis/export_otf2_gpu.sh
EXTRA_DIST += tests/analysis/export_otf2.sh tests/analysis/export_otf2_gpu.sh
# The kineto export: its files against the store, HTA on an NCCL job, and
# the round trip through `collscope import`.
TESTS += tests/analysis/export_kineto.sh tests/analysis/export_kineto_hta.sh tests/analysis/roundtrip_kineto.sh
EXTRA_DIST += tests/analysis/export_kineto.sh tests/analysis/export_kineto_hta.sh tests/analysis/roundtrip_kineto.sh
# The Perfetto protobuf export of the same run and of the NCCL trainer under
# the stand-ins, decoded with Python's protobuf from our .proto (about 8 s).
TESTS += tests/analysis/export_perfetto.sh
EXTRA_DIST += tests/analysis/export_perfetto.sh
# The commands' -o files: never through a symlink, never half-written.
TESTS += tests/analysis/outfile.sh
EXTRA_DIST += tests/analysis/outfile.sh
# the parallel layout (an_layout.c) on examples/pipe_trainer and nbloop
TESTS += tests/analysis/layout.sh
EXTRA_DIST += tests/analysis/layout.sh
# collscope status (status.c) on jobs of tests/progs/hang that hang or fail
TESTS += tests/status/status_ompi.sh tests/status/status_mpich.sh tests/status/dead_job.sh
EXTRA_DIST += tests/status/status_ompi.sh tests/status/status_mpich.sh tests/status/status.inc.sh tests/status/dead_job.sh
# the hang watchdog (interpose/watchdog.c) on tests/progs/hang, sigchain and the example trainer
TESTS += tests/status/watchdog_ompi.sh tests/status/watchdog_mpich.sh
EXTRA_DIST += tests/status/watchdog_ompi.sh tests/status/watchdog_mpich.sh tests/status/watchdog.inc.sh
# the slowdown attribution (an_slowdown.c) on examples/pipe_trainer
TESTS += tests/analysis/slowdown_ompi.sh tests/analysis/slowdown_mpich.sh
EXTRA_DIST += tests/analysis/slowdown_ompi.sh tests/analysis/slowdown_mpich.sh tests/analysis/slowdown.inc.sh

