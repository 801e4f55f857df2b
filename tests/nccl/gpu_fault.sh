#!/bin/sh
# A failing CUDA call in the tool's own event handling (the stand-in's
# cudaEventRecord fails after 10 calls) turns GPU timing off with one
# warning per process; the job, its results and the call counts are intact.
. "$srcdir/tests/lib.sh"
. "$S/tests/nccl/nccl_lib.sh"
need_standins
args="--steps 6 --buckets 2"
"$(mpirun_for openmpi)" -np 4 "$TRAINER" $args > "$T/bare.out" 2>&1 || fail "untraced run failed"
# The CUDA-event path alone (collscope run also offers the preload as NCCL's
# profiler plugin, whose GPU times would fill the gap: checked at the end).
CS_STANDIN_EVENT_RECORD_FAIL_AFTER=10 OMPI_MCA_mca_base_env_list="LD_LIBRARY_PATH;CS_STANDIN_EVENT_RECORD_FAIL_AFTER" \
  RUN_OPTS=--no-nccl-profiler run_trainer "$T/r" "$T/run.out" $args
db=$T/r/trace.db
expect_eq "results as untraced" "$(grep -E '^(final loss|weights checksum)' "$T/run.out")" \
  "$(grep -E '^(final loss|weights checksum)' "$T/bare.out")"
expect_eq "one warning per process" "$(grep -c 'GPU times of collectives are off' "$T/run.out.err")" 4
check_all_counts "$T/run.out" "$db"
with=$(q "$db" "SELECT count(*) FROM spans WHERE op LIKE 'nccl%' AND gpu_begin_ns IS NOT NULL")
without=$(q "$db" "SELECT count(*) FROM spans WHERE kind='coll' AND op LIKE 'nccl%' AND gpu_begin_ns IS NULL")
[ "$with" -gt 0 ] && [ "$without" -gt 0 ] || fail "expected GPU times before the fault and none after ($with with, $without without)"
echo "ok: $with calls timed before the fault, $without after it untimed"

# With the profiler plugin (collscope run's default), the collectives the
# CUDA events no longer time still get the plugin's GPU times.
CS_STANDIN_EVENT_RECORD_FAIL_AFTER=10 OMPI_MCA_mca_base_env_list="LD_LIBRARY_PATH;CS_STANDIN_EVENT_RECORD_FAIL_AFTER" \
  run_trainer "$T/p" "$T/p.out" $args
expect_eq "with the plugin: one warning per process" "$(grep -c 'GPU times of collectives are off' "$T/p.out.err")" 4
expect_eq "with the plugin: collectives without GPU times" \
  "$(q "$T/p/trace.db" "SELECT count(*) FROM spans WHERE kind='coll' AND op LIKE 'nccl%' AND gpu_begin_ns IS NULL")" 0
expect_eq "with the plugin: nccl_coll rows for them" \
  "$(q "$T/p/trace.db" "SELECT count(*) FROM nccl_coll")" \
  "$(q "$T/p/trace.db" "SELECT count(*) FROM spans WHERE kind IN ('coll','rooted') AND op LIKE 'nccl%'")"
pass
