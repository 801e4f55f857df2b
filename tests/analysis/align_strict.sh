#!/bin/sh
# Clock offsets injected per rank (COLLSCOPE_TEST_CLOCK_OFFSET, +-50 ms) are
# recovered within 5 us on a run of the trainer with the halo exchange:
# 4 ranks under Open MPI, 2 under MPICH (below). All ranks share one physical clock here, so the true
# offsets are the injected ones. The estimate rests on the narrowest bounds
# over all instances and messages (an_align.c): 300 steps give about 600
# allreduces and 2400 messages, enough for errors under 4 us even with
# the 4 ranks sharing 2 cores with two busy loops beside them (30 steps
# gave up to 6 us). The clock is CLOCK_MONOTONIC: with the TSC, each rank
# converts ticks to ns through its own calibration points, which on a
# loaded node differ between ranks by several us (up to 12 us measured), an
# error of the capture, not of the alignment.
# Under MPICH too, on 2 ranks (INJ's first two): its ranks busy-poll, so
# with 4 ranks on the 2 cores pairs of ranks are rarely on a core at once
# and some runs leave intervals of 100-800 us between them (errors of 1-78
# us measured, most under 1 us); with a core per rank the bounds are tight.
. "$srcdir/tests/lib.sh"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 not installed"
INJ="0:+50000000,1:-50000000,2:+20000000,3:-35000000"
ran=0
for flavor in openmpi mpich; do
  L=$(mpirun_for $flavor)
  case $flavor in
    openmpi) prog=$B/examples/mpi_trainer_ompi np=4 ;;
    *) prog=$B/examples/mpi_trainer_mpich np=2 ;;
  esac
  [ -n "$L" ] && [ -x "$L" ] && [ -x "$prog" ] || { echo "note: $flavor not available"; continue; }
  ran=$((ran + 1))
  COLLSCOPE_CLOCK=monotonic COLLSCOPE_TEST_CLOCK_OFFSET="$INJ" "$COLLSCOPE" run -o "$T/$flavor" -- "$L" -np $np \
    "$prog" --steps 300 --compute-us 500 --buckets 2 --halo > "$T/$flavor.out" 2>&1 ||
    fail "$flavor: traced run failed (see $T/$flavor.out)"
  "$COLLSCOPE" report "$T/$flavor" --format json -o "$T/$flavor.json" || fail "$flavor: report failed"
  /usr/bin/python3 -c 'import json,sys
inj={int(r): int(ns) for r, ns in (x.split(":") for x in sys.argv[2].split(","))}
bad=0
clocks=json.load(open(sys.argv[1]))["clocks"]
if len(clocks) != int(sys.argv[4]): sys.exit("%d clocks, want %s" % (len(clocks), sys.argv[4]))
for c in clocks:
    # aligned = raw + offset, raw = true + injected; rank 0 is the reference
    err=c["offset_ns"]+inj[c["rank"]]-inj[0]
    print(sys.argv[3], "rank", c["rank"], "offset", c["offset_ns"], "error", err)
    bad|=abs(err) > 5000
sys.exit(bad)' "$T/$flavor.json" "$INJ" $flavor $np || fail "$flavor: offsets not recovered within 5 us"
  echo "ok: $flavor: offsets recovered within 5 us"
done
[ $ran -gt 0 ] || skip "neither Open MPI nor MPICH is built here"
pass
