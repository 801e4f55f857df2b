# watchdog.inc.sh: the hang watchdog (COLLSCOPE_HANG_TIMEOUT, interpose/
# watchdog.c) on 4-rank jobs under one MPI ($CS_MPI). Sourced by
# watchdog_ompi.sh and watchdog_mpich.sh.
#  1. no hang (examples/mpi_trainer, 100 steps, timeout 2 s): the job's stdout (its timing line
#     aside) and exit status are those of a run without the watchdog,
#     collscope prints nothing of its own, no hang is recorded; a bad
#     timeout, action or signal gives one warning (rank 0's) and the job
#     runs on (the parsing is the preload's, the same under both MPIs:
#     all seven bad values under Open MPI, two under MPICH);
#  2. compute (hang --mode compute, abort): rank 1's hang record is "idle"
#     and its sampled stack names hang_spin_forever, in the store and in
#     `collscope status`;
#  3. missing rank (hang --mode skip, abort): the records name the call,
#     communicator, seq (ranks 0,2,3: MPI_Allreduce seq 20 of the world;
#     rank 1: MPI_Recv from 2, tag 9);
#  4. abort: that job ends within the timeout + 2 s of the hang's start
#     (hang.c prints it), exit status non-zero, records in the trace;
#  5. sigchain: the application's own handlers for the sampling signal,
#     installed before and after MPI_Init, get every signal it raised
#     (and none of the watchdog's samples, taken meanwhile), also in a
#     child forked while the watchdog runs.
need_mpi "$CS_MPI"
MPIRUN=$(mpirun_for "$CS_MPI")
case $CS_MPI in
  openmpi) SUF=ompi EXTRA=--oversubscribe ;;
  *) SUF=mpich EXTRA= ;;
esac
HANG="$B/tests/progs/hang_$SUF" TRAINER="$B/examples/mpi_trainer_$SUF" CHAIN="$B/tests/progs/sigchain_$SUF"
for p in "$HANG" "$TRAINER" "$CHAIN"; do [ -x "$p" ] || skip "$p not built"; done
# A copy under a name of its own, so that its processes are told from
# other tests' at a glance (tests end their own hung jobs by pid:
# kill_ranks in tests/lib.sh).
cp "$HANG" "$T/wdhang_$SUF" && HANG="$T/wdhang_$SUF" || fail "cannot copy $HANG"

# The preload's own lines on stderr, but collscope run's summary.
own_lines() { grep '^collscope: ' "$1" | grep -v '^collscope: [0-9]* process' || true; }

# 1. no hang
"$COLLSCOPE" run -o "$T/plain" -- "$MPIRUN" -np 4 $EXTRA "$TRAINER" --steps 100 >"$T/plain.out" 2>"$T/plain.err" ||
  fail "the trainer without the watchdog failed: $(tail -3 "$T/plain.err")"
rc=0
"$COLLSCOPE" run -o "$T/wd" --hang-timeout 2 -- "$MPIRUN" -np 4 $EXTRA "$TRAINER" --steps 100 >"$T/wd.out" 2>"$T/wd.err" || rc=$?
expect_eq "no hang: exit status with the watchdog" "$rc" 0
# The ranks' lines, cut apart where MPICH's forwarding joined them, in order.
lines() {
  sed 's/\(config: \|calls: rank \|final loss: \|weights checksum: \|step time ms: \)/\n\1/g' "$1" |
    grep -v '^step time' | grep -v '^$' | sort
}
lines "$T/plain.out" >"$T/plain.sorted"
lines "$T/wd.out" >"$T/wd.sorted"
[ -s "$T/plain.sorted" ] && cmp -s "$T/plain.sorted" "$T/wd.sorted" ||
  fail "no hang: stdout differs with the watchdog: $(diff "$T/plain.sorted" "$T/wd.sorted" | head -5)"
echo "ok: no hang: stdout as without the watchdog ($(wc -l <"$T/wd.sorted") lines)"
expect_eq "no hang: collscope's own lines on stderr" "$(own_lines "$T/wd.err")" ""
expect_eq "no hang: hangs recorded" "$(q "$T/wd/trace.db" "SELECT COUNT(*) FROM hangs")" 0
# Bad settings: one warning naming the variable (rank 0's), no watchdog, the job runs on.
BAD="COLLSCOPE_HANG_TIMEOUT=soon COLLSCOPE_HANG_TIMEOUT=nan COLLSCOPE_HANG_TIMEOUT=-1 COLLSCOPE_HANG_TIMEOUT=0
  COLLSCOPE_HANG_ACTION=kill COLLSCOPE_HANG_SIGNAL=KILL COLLSCOPE_HANG_SIGNAL=RTMIN+99"
[ "$CS_MPI" = openmpi ] || BAD="COLLSCOPE_HANG_TIMEOUT=soon COLLSCOPE_HANG_ACTION=kill"
for kv in $BAD; do
  rc=0
  env COLLSCOPE_HANG_TIMEOUT=2 "$kv" "$COLLSCOPE" run -o "$T/bad" -- "$MPIRUN" -np 2 $EXTRA "$TRAINER" --steps 5 \
    >"$T/bad.out" 2>"$T/bad.err" || rc=$?
  expect_eq "$kv: exit status" "$rc" 0
  expect_eq "$kv: collscope's lines" "$(own_lines "$T/bad.err" | grep -c "^collscope: $kv is not .*; using no watchdog$")/$(own_lines "$T/bad.err" | wc -l)" 1/1
done

# hang_job NAME MODE: a hung job of tests/progs/hang that the watchdog ends
# (abort, timeout 2 s); sets ELAPSED (s from the hang's start to the job's
# end) and RC, and ingests the trace.
hang_job() {
  _d="$T/$1"
  _rc=0
  "$COLLSCOPE" run -o "$_d" --no-ingest --hang-timeout 2 --hang-action abort -- \
    timeout -s KILL 60 "$MPIRUN" -np 4 $EXTRA "$HANG" --mode "$2" --after 20 >"$_d.out" 2>"$_d.err" || _rc=$?
  _end=$(date +%s.%N)
  RC=$_rc
  _t=$(sed -n 's/^HANG rank=1 .* t=\([0-9.]*\)$/\1/p' "$_d.err" | head -n 1)
  [ -n "$_t" ] || fail "$1: the job never hung: $(tail -5 "$_d.err")"
  ELAPSED=$(awk -v a="$_t" -v b="$_end" 'BEGIN { printf "%.2f", b - a }')
  "$COLLSCOPE" ingest "$_d" >"$_d.ingest" 2>&1 || fail "$1: cannot ingest: $(tail -3 "$_d.ingest")"
}

# 2. compute
hang_job compute compute
[ "$RC" -ne 0 ] || fail "compute: the aborted job exited 0"
DB="$T/compute/trace.db"
expect_eq "compute: rank 1's hang" "$(q "$DB" "SELECT reason || ' ' || op FROM hangs WHERE rank = 1")" "idle MPI_Sendrecv"
expect_eq "compute: rank 1's sampled stack names the loop" \
  "$(q "$DB" "SELECT COUNT(*) FROM hangs h JOIN frames f ON f.rank = h.rank AND f.callsite = h.stack
              WHERE h.rank = 1 AND f.func = 'hang_spin_forever'")" 1
grep -q 'hang on rank 1 (pid [0-9]*): no traced call for [0-9.]* s' "$T/compute.err" ||
  fail "compute: no stderr line for rank 1: $(own_lines "$T/compute.err")"
_st=0
"$COLLSCOPE" status "$T/compute" --after 1 >"$T/compute.status" 2>&1 || _st=$?
expect_eq "compute: status exit" "$_st" 3
grep -q 'rank 1 never entered: .*the watchdog sampled it in hang_spin_forever (hang\.c:[0-9]*)' "$T/compute.status" ||
  fail "compute: status does not name hang_spin_forever: $(cat "$T/compute.status")"
echo "ok: compute: status: $(grep -o 'the watchdog sampled it in [^;]*' "$T/compute.status" | head -n 1)"
"$COLLSCOPE" report "$T/compute" > "$T/compute.report" 2>&1
grep -q 'rank 1 never entered: .*the watchdog sampled it in hang_spin_forever (hang\.c:[0-9]*)' "$T/compute.report" ||
  fail "compute: the report's Failures do not name hang_spin_forever: $(grep -A4 Failures "$T/compute.report")"
echo "ok: compute: report: $(grep -o 'the watchdog sampled it in [^;]*' "$T/compute.report" | head -n 1)"

# 3 and 4. missing rank, abort
hang_job skip skip
[ "$RC" -ne 0 ] || fail "skip: the aborted job exited 0"
echo "ok: abort: exit status $RC"
awk -v e="$ELAPSED" 'BEGIN { exit !(e <= 4.0) }' || fail "abort: the job ended $ELAPSED s after the hang began (want <= 4)"
echo "ok: abort: the job ended $ELAPSED s after the hang began (timeout 2 s)"
DB="$T/skip/trace.db"
WORLD=$(q "$DB" "SELECT id FROM comms WHERE how = 'world' LIMIT 1")
expect_eq "skip: ranks waiting in the allreduce" \
  "$(q "$DB" "SELECT group_concat(rank) FROM (SELECT rank FROM hangs WHERE reason = 'inflight' AND op = 'MPI_Allreduce'
              AND seq = 20 AND comm = $WORLD AND action = 'abort' ORDER BY rank)")" "0,2,3"
expect_eq "skip: the missing rank's call" \
  "$(q "$DB" "SELECT op || ' peer ' || peer || ' tag ' || tag || ' ' || (comm = $WORLD) FROM hangs WHERE rank = 1")" \
  "MPI_Recv peer 2 tag 9 1"
expect_eq "skip: hangs with a sampled stack and their call's call site" \
  "$(q "$DB" "SELECT COUNT(*) FROM hangs WHERE stack IS NOT NULL AND callsite IS NOT NULL AND detected_ns - since_ns >= 2000000000")" 4

# 5. the application's own handler
rc=0
"$COLLSCOPE" run -o "$T/chain" --hang-timeout 0.5 -- "$MPIRUN" -np 4 $EXTRA "$CHAIN" --stall-ms 1500 \
  >"$T/chain.out" 2>"$T/chain.err" || rc=$?
expect_eq "sigchain: exit status" "$rc" 0
expect_eq "sigchain: ranks whose handlers got all 5 + 5 signals, also in a forked child" \
  "$(grep -c '^SIGCHAIN rank=[0-3] first=5 second=5 query=1 fork=1$' "$T/chain.out")" 4
_n=$(q "$T/chain/trace.db" "SELECT COUNT(*) FROM hangs WHERE stack IS NOT NULL")
[ "$_n" -ge 3 ] || fail "sigchain: $_n stack samples taken meanwhile, want >= 3"
echo "ok: sigchain: $_n stack samples taken meanwhile"
pass
