#!/bin/sh
# Steps are the program's steps in an apply-mode trace too: nbloop (2 ranks,
# Open MPI, no markers: per step B nonblocking allreduces of S bytes and one
# completion) traced without and with apply mode (COLLSCOPE_FUSE=1, buckets
# of 8 KiB, its guard off so that every call is fused: a guarded run mixes
# fused and unfused windows), for one MPI_Waitall a step and for
# MPI_Testall polling. For
# each pair:
#  - the fused trace holds the program's calls (FUSE_MEMBER spans, B a step
#    on every rank) and the engine's own fused calls (FUSED spans), and the
#    program's checksum of its results is the same fused and unfused;
#  - both traces find the number of steps the program says it ran (its
#    NBLOOP line), with the same period: the program's B allreduces and its
#    completion (a polling run counts once), never the fused calls;
#  - check-estimate compares the two (exit 0, 1 or 2: never "steps not
#    comparable") and its JSON has both step counts equal to the program's.
# Without the engine's own calls left out of the step search, the fused
# trace repeats with B/4 more calls a step and check-estimate refuses.
. "$srcdir/tests/lib.sh"
need_mpi openmpi
MPIRUN=$(mpirun_for openmpi)
PROG="$B/tests/progs/nbloop_ompi"
[ -x "$PROG" ] || skip "$PROG not built"
PY=${PYTHON3:-/usr/bin/python3}
[ -x "$PY" ] || PY=/usr/bin/python3
[ -x "$PY" ] || skip "python3 not installed"
STEPS=120 NB=32 BY=2048

for wait in all test; do
  for mode in plain fused; do
    d=$T/$wait-$mode
    set -- env
    [ $mode = fused ] && set -- env COLLSCOPE_FUSE=1 COLLSCOPE_FUSE_GUARD=0 COLLSCOPE_FUSE_THRESHOLD=65536 COLLSCOPE_FUSE_BUFFER=8192
    "$@" "$COLLSCOPE" run -o "$d" -- "$MPIRUN" -np 2 "$PROG" --steps $STEPS --buckets $NB --bytes $BY \
      --compute-us 500 --wait $wait > "$d.out" 2>&1 || fail "$wait/$mode: traced run failed (see $d.out)"
    # the program's own count of its steps, every rank
    n=$(grep -c "^NBLOOP rank=[0-9]* steps=$STEPS " "$d.out")
    expect_eq "$wait/$mode: ranks that ran $STEPS steps (program's output)" "$n" 2
  done
  sp=$(grep -o 'checksum=[0-9a-f]*' "$T/$wait-plain.out" | sort -u)
  sf=$(grep -o 'checksum=[0-9a-f]*' "$T/$wait-fused.out" | sort -u)
  [ -n "$sp" ] || fail "$wait: the program printed no checksum"
  expect_eq "$wait: the program's checksum of its results, fused" "$sf" "$sp"
  f=$T/$wait-fused/trace.db
  members=$(q "$f" "SELECT count(*) FROM spans WHERE op = 'MPI_Iallreduce' AND flags & 256")
  fused=$(q "$f" "SELECT count(*) FROM spans WHERE op = 'MPI_Iallreduce' AND flags & 4")
  expect_eq "$wait: the program's fused calls in the trace (B x steps x ranks)" "$members" $((NB * STEPS * 2))
  [ "$fused" -ge $((STEPS * 2)) ] || fail "$wait: only $fused fused calls in the apply-mode trace"
  echo "ok: $wait: $fused calls issued by apply mode"

  "$COLLSCOPE" check-estimate "$T/$wait-plain" "$T/$wait-fused" > "$T/$wait-check.txt" 2>&1
  rc=$?
  cat "$T/$wait-check.txt"
  [ $rc -le 2 ] || fail "$wait: check-estimate exit $rc (the steps of the fused run are not its twin's)"
  "$COLLSCOPE" check-estimate "$T/$wait-plain" "$T/$wait-fused" --json > "$T/$wait-check.json" 2>/dev/null
  "$PY" - "$T/$wait-check.json" $STEPS $((NB + 1)) <<'PYEOF' || fail "$wait: check-estimate's steps"
import json, sys
d = json.load(open(sys.argv[1]))
steps, period = int(sys.argv[2]), int(sys.argv[3])
assert d["comparable"], d["not_comparable_reason"]
# the marks begin at the first whole repetition: the program's steps, or one less
for side in ("before", "after"):
    assert d[side + "_step_source"] == "period", d
    assert steps - 1 <= d[side + "_steps"] <= steps, (side, d[side + "_steps"], steps)
    assert d[side + "_step_period"] == period, (side, d[side + "_step_period"], period)
assert d["after_apply_mode"] and d["after_fused_calls"] > 0, d
print("ok: both traces: %d and %d steps (program: %d), %d calls a step" %
      (d["before_steps"], d["after_steps"], steps, d["before_step_period"]))
PYEOF
done
pass
