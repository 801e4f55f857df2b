#!/bin/sh
# Clock alignment (analyzer/analysis/an_align.c) on inputs of known answers: synthetic
# traces (bench/gen_trace, no MPI, deterministic; 8 ranks, 100 steps, with
# the generator's jitter), every rank on one true clock, then the raw times
# of five ranks shifted by known offsets (+50, -50, +20, -35 and +0.5 ms)
# as their own clocks would have it. The generator's collectives let every
# rank leave within 2 us of the others and its messages arrive at least
# 22 us after they were sent, so the offsets must come back within 2 us,
# relative to rank 0, on a clean trace and on one with a persistent
# straggler; and the verdicts must be those of the unshifted trace.
# How close the offsets come on real runs, where the ranks' clocks and
# their scheduling add their own errors, is measured by
# bench/whatif_bench.sh (printed, not asserted; bench/README.md).
. "$srcdir/tests/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
GEN=$B/bench/gen_trace
[ -x "$GEN" ] || fail "bench/gen_trace not built"
INJ="1:50000000,2:-50000000,3:20000000,5:-35000000,7:500000"
case_sql=$(echo "$INJ" | tr ',' '\n' | sed 's/\(.*\):\(.*\)/WHEN \1 THEN \2/' | tr '\n' ' ')
shift_of="CASE rank $case_sql ELSE 0 END"

for name in clean pers; do
  extra=
  [ $name = pers ] && extra="--persistent 3:5000"
  "$GEN" "$T/$name.db" --ranks 8 --steps 100 $extra > /dev/null || fail "gen_trace $name failed"
  cp "$T/$name.db" "$T/$name-shifted.db"
  q "$T/$name-shifted.db" "UPDATE span SET begin_ns = begin_ns + $shift_of, end_ns = end_ns + $shift_of;
                            UPDATE processes SET start_ns = start_ns + $shift_of, end_ns = end_ns + $shift_of" ||
    fail "$name: cannot shift the clocks"
  expect_eq "$name: spans shifted" "$(q "$T/$name-shifted.db" "SELECT count(*) FROM span WHERE rank = 7 AND begin_ns >= 1000500000")" \
    "$(q "$T/$name.db" "SELECT count(*) FROM span WHERE rank = 7")"
  for v in "$name" "$name-shifted"; do
    "$COLLSCOPE" report "$T/$v.db" --format json -o "$T/$v.json" || fail "$v: report failed"
  done
  "$PY" - "$T/$name-shifted.json" "$T/$name.json" "$INJ" <<'PYEOF' || fail "$name: offsets not recovered within 2 us"
import json, sys
d, base = (json.load(open(f)) for f in sys.argv[1:3])
inj = {int(r): int(ns) for r, ns in (x.split(":") for x in sys.argv[3].split(","))}
clocks = d["clocks"]
assert len(clocks) == 8, clocks
bad = 0
for c in clocks:
    # aligned = raw + offset, raw = true + injected; rank 0 is the reference
    err = c["offset_ns"] + inj.get(c["rank"], 0) - inj.get(0, 0)
    print("rank", c["rank"], "offset", c["offset_ns"], "error", err)
    bad |= abs(err) > 2000
assert not bad
v = sorted((s["kind"], s["rank"], s["src"], s["dst"]) for s in d["stragglers"])
w = sorted((s["kind"], s["rank"], s["src"], s["dst"]) for s in base["stragglers"])
print("verdicts:", v)
assert v == w, (v, w)
PYEOF
  echo "ok: $name: offsets recovered within 2 us, the same verdicts as unshifted"
done
expect_eq "the straggler found through the shifted clocks" \
  "$("$PY" -c 'import json,sys; print([(s["kind"], s["rank"]) for s in json.load(open(sys.argv[1]))["stragglers"]])' "$T/pers-shifted.json")" \
  "[('persistent', 3)]"
pass
