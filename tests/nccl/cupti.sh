#!/bin/sh
# CUPTI activity under the CPU stand-ins (libcupti.so.13 stand-in): with
# COLLSCOPE_CUPTI=1 every kernel launch of the trainer has its kernel record,
# joined to the launch span by correlation id; the report's GPU overlap
# section appears and responds to kernels of other streams; a failing
# cuptiSubscribe (999) gives one warning and an intact run.
. "$srcdir/tests/lib.sh"
. "$S/tests/nccl/nccl_lib.sh"
need_standins
[ -e "$SI/libcupti.so.13" ] || skip "CUPTI stand-in not built (no cupti.h)"
args="--steps 3 --buckets 2"
COLLSCOPE_CUPTI=1 run_trainer "$T/r" "$T/run.out" $args
db=$T/r/trace.db
nk=$(q "$db" "SELECT count(*) FROM gpu_activity WHERE kind='kernel'")
nl=$(q "$db" "SELECT count(*) FROM spans WHERE kind='launch'")
[ "$nk" -gt 0 ] || fail "no kernel activity records"
expect_eq "a kernel record per launch" "$nk" "$nl"
expect_eq "launch spans joined to their kernel (corr, GPU times)" \
  "$(q "$db" "SELECT count(*) FROM spans s JOIN gpu_activity a ON a.rank=s.rank AND a.corr=s.corr AND a.kind='kernel'
              WHERE s.kind='launch' AND s.gpu_begin_ns IS NOT NULL AND s.gpu_end_ns >= s.gpu_begin_ns")" "$nl"
nm=$(q "$db" "SELECT count(*) FROM spans WHERE op IN ('cudaMemcpy','cudaMemcpyAsync')")
expect_eq "a memcpy record per copy" "$(q "$db" "SELECT count(*) FROM gpu_activity WHERE kind='memcpy'")" "$nm"
expect_eq "kernel inside its launch call (10 us slack)" \
  "$(q "$db" "SELECT count(*) FROM spans s JOIN gpu_activity a ON a.rank=s.rank AND a.corr=s.corr AND a.kind='kernel'
              WHERE s.kind='launch' AND (a.begin_ns < s.raw_begin_ns - 10000 OR a.end_ns > s.raw_end_ns + 10000)")" 0
expect_eq "kernel streams named by handle" \
  "$(q "$db" "SELECT count(*) FROM spans s JOIN gpu_activity a ON a.rank=s.rank AND a.corr=s.corr AND a.kind='kernel' WHERE s.kind='launch' AND a.stream != s.stream")" 0
"$COLLSCOPE" report "$T/r" > "$T/rep.txt" || fail "report failed"
grep -q '^GPU overlap' "$T/rep.txt" || fail "no GPU overlap section in the report"
expect_eq "overlap lines (one a rank)" "$(sed -n '/^GPU overlap/,/^$/p' "$T/rep.txt" | grep -cE '^ +[0-3] ')" 4
# The stand-in runs everything in order: nothing overlaps, all of it shows.
line=$(sed -n '/^GPU overlap/,/^$/p' "$T/rep.txt" | grep -E '^ +0 ')
echo "$line" | grep -q '100.0%' || fail "rank 0 overlap on the stand-in should be 100% exposed: $line"
# A kernel on another stream covering all of rank 0's NCCL GPU time hides it.
q "$db" "INSERT INTO gpu_activity(rank, kind, name, stream, corr, begin_ns, end_ns, bytes, device)
         SELECT 0, 'kernel', 1, 424242, 0, min(gpu_begin_ns), max(gpu_end_ns), 0, 0 FROM span WHERE rank=0 AND gpu_begin_ns IS NOT NULL"
"$COLLSCOPE" report "$T/r" > "$T/rep2.txt" || fail "report failed"
line=$(sed -n '/^GPU overlap/,/^$/p' "$T/rep2.txt" | grep -E '^ +0 ')
echo "$line" | grep -q ' 0.0%' || fail "rank 0 fully overlapped should show 0.0%: $line"
echo "ok: overlap figure follows kernels of other streams ($line)"
# cuptiSubscribe failing (999, as without a GPU): one warning, the run goes on.
CS_STANDIN_CUPTI_FAIL=1 COLLSCOPE_CUPTI=1 run_trainer "$T/f" "$T/f.out" $args
expect_eq "one CUPTI warning a rank" "$(grep -c 'CUPTI: cuptiSubscribe failed (999)' "$T/f.out.err")" 4
expect_eq "no activity when CUPTI fails" "$(q "$T/f/trace.db" "SELECT count(*) FROM gpu_activity")" 0
"$COLLSCOPE" report "$T/f" | grep -q '^GPU overlap' && fail "GPU overlap section without activity"
echo "ok: no overlap section without activity"
pass
