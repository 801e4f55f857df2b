#!/bin/sh
# The preload as NCCL's profiler plugin (NCCL_PROFILER_PLUGIN pointing at
# it), under the stand-in libnccl, which loads it as NCCL does: every NCCL
# collective of the trainer gets one nccl_coll row with the algorithm,
# protocol and channel count the stand-in reported (AllReduce Tree/LL/4,
# the others Ring/Simple/2), its GPU begin and end within the call (the
# stand-in runs the work during the call, grouped calls included, whose
# events it sends at ncclGroupEnd, largest first); results, per-op counts
# and sequence numbers as without it; the same through ncclProfiler_v4.
# Without the variable: no rows, and the same trace.
. "$srcdir/tests/lib.sh"
. "$S/tests/nccl/nccl_lib.sh"
need_standins
plugin=$COLLSCOPE_LIBDIR/collscope-openmpi.so
[ -e "$plugin" ] || skip "collscope-openmpi.so not built"
args="--steps 4 --buckets 3 --split --all-ops"

# collscope run sets NCCL_PROFILER_PLUGIN to its preload by default.
run_trainer "$T/p" "$T/p.out" $args
db=$T/p/trace.db
if grep -q 'stand-in' "$T/p.out.err"; then fail "the stand-in could not use the plugin: $(grep stand-in "$T/p.out.err")"; fi
check_all_counts "$T/p.out" "$db"
check_seqs "$db"
colls="kind IN ('coll','rooted') AND op LIKE 'nccl%'"
nc=$(q "$db" "SELECT count(*) FROM spans WHERE $colls")
[ "$nc" -gt 0 ] || fail "no NCCL collectives in the trace"
expect_eq "NCCL collectives with an nccl_coll row" \
  "$(q "$db" "SELECT count(DISTINCT s.id) FROM spans s JOIN nccl_coll n ON n.span = s.id WHERE $colls")" "$nc"
expect_eq "nccl_coll rows (one per collective, none for other calls)" "$(q "$db" "SELECT count(*) FROM nccl_coll")" "$nc"
expect_eq "AllReduce: algorithm/protocol/channels" \
  "$(q "$db" "SELECT DISTINCT n.algo || '/' || n.proto || '/' || n.nchannels FROM nccl_coll n JOIN span s ON s.id = n.span
             JOIN ops o ON o.id = s.op WHERE o.name = 'ncclAllReduce'")" "Tree/LL/4"
expect_eq "other collectives: algorithm/protocol/channels" \
  "$(q "$db" "SELECT DISTINCT n.algo || '/' || n.proto || '/' || n.nchannels FROM nccl_coll n JOIN span s ON s.id = n.span
             JOIN ops o ON o.id = s.op WHERE o.name != 'ncclAllReduce'")" "Ring/Simple/2"
expect_eq "grouped collectives matched too" \
  "$(q "$db" "SELECT count(*) FROM nccl_coll n JOIN span s ON s.id = n.span WHERE s.grp IS NOT NULL")" \
  "$(q "$db" "SELECT count(*) FROM spans WHERE $colls AND grp IS NOT NULL")"
expect_eq "rows with GPU begin and end" \
  "$(q "$db" "SELECT count(*) FROM nccl_coll WHERE gpu_begin_ns > 0 AND gpu_end_ns >= gpu_begin_ns")" "$nc"
# The stand-in's GPU times are its work's, inside the call (50 us slack for the clock conversion).
expect_eq "GPU times inside their call" \
  "$(q "$db" "SELECT count(*) FROM nccl_coll n JOIN span s ON s.id = n.span
             WHERE n.gpu_begin_ns < s.begin_ns - 50000 OR n.gpu_end_ns > s.end_ns + 50000")" 0

# A library that knows only version 4 of the plugin ABI.
NCCL_STANDIN_PROFILER_V4=1 NCCL_PROFILER_PLUGIN=$plugin run_trainer "$T/v4" "$T/v4.out" $args
expect_eq "ncclProfiler_v4: rows with algorithm and GPU times" \
  "$(q "$T/v4/trace.db" "SELECT count(*) FROM nccl_coll WHERE algo IS NOT NULL AND nchannels > 0 AND gpu_end_ns >= gpu_begin_ns")" "$nc"

"$(mpirun_for openmpi)" -np 4 "$TRAINER" $args > "$T/bare.out" 2>&1 || { cat "$T/bare.out"; fail "untraced run failed"; }
# (collscope run offers the preload as the plugin unless told not to.)
"$COLLSCOPE" run --no-nccl-profiler -o "$T/n" -- "$(mpirun_for openmpi)" -np 4 "$TRAINER" $args > "$T/n.out" 2> "$T/n.out.err" ||
  { tail -n 20 "$T/n.out.err"; fail "traced nccl_trainer without the plugin failed"; }
expect_eq "results: plugin, bare, traced without it" \
  "$(grep -E '^(final loss|weights checksum)' "$T/p.out") / $(grep -E '^(final loss|weights checksum)' "$T/n.out")" \
  "$(grep -E '^(final loss|weights checksum)' "$T/bare.out") / $(grep -E '^(final loss|weights checksum)' "$T/bare.out")"
expect_eq "without NCCL_PROFILER_PLUGIN: no nccl_coll rows" "$(q "$T/n/trace.db" "SELECT count(*) FROM nccl_coll")" 0
expect_eq "without it: the same spans per op" \
  "$(q "$T/n/trace.db" "SELECT group_concat(op || '=' || n) FROM (SELECT op, count(*) n FROM spans GROUP BY op ORDER BY op)")" \
  "$(q "$db" "SELECT group_concat(op || '=' || n) FROM (SELECT op, count(*) n FROM spans GROUP BY op ORDER BY op)")"
expect_eq "without it: GPU times from CUDA events as before" \
  "$(q "$T/n/trace.db" "SELECT count(*) FROM spans WHERE $colls AND gpu_begin_ns > 0")" "$nc"
pass
