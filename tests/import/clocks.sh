#!/bin/sh
# Clock alignment that cannot invent stragglers (analyzer/analysis/an_align.c),
# on generated Kineto traces of 8 ranks (tests/import/kineto_gen.py; rank 3
# late by 20 ms in every step), NCCL and gloo style:
# - ranks on one clock: no rank moved, and the report says the clocks were
#   kept (before, the late rank's 20 ms were taken for its clock's offset);
# - rank 2's clock 5 ms ahead: found within 10 us, no other rank moved;
# - rank 5's clock off by up to +-20 ms at random, an offset that explains
#   less than it leaves: refused, named, the rank left as recorded.
. "${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
PY=${PYTHON3:-python3}
GEN="$S/tests/import/kineto_gen.py"

# run NAME STYLE ARGS...: generate, import, report as JSON into $T/NAME.json
run() {
  _n=$1 _st=$2
  shift 2
  $PY "$GEN" "$T/$_n" --style "$_st" --ranks 8 --steps 12 "$@" > /dev/null || fail "$_n: cannot generate"
  "$COLLSCOPE" import -o "$T/$_n.out" "$T/$_n" > "$T/$_n.imp" 2>&1 || { cat "$T/$_n.imp"; fail "$_n: import failed"; }
  "$COLLSCOPE" report "$T/$_n.out" --format json > "$T/$_n.json" 2> "$T/$_n.err" ||
    { cat "$T/$_n.err"; fail "$_n: report failed"; }
}
# offsets NAME: "rank:offset_ns ..." of the report's clock table
offsets() {
  $PY -c "import json,sys; print(' '.join('%d:%d' % (c['rank'], c['offset_ns']) for c in json.load(open(sys.argv[1]))['clocks']))" "$T/$1.json"
}
# note NAME TEXT: the report's notes hold TEXT
note() {
  $PY -c "import json,sys; n=json.load(open(sys.argv[1]))['notes']; sys.exit(0 if any(sys.argv[2] in x for x in n) else 1)" \
    "$T/$1.json" "$2" || fail "$1: no note '$2' in $($PY -c "import json,sys; print(json.load(open(sys.argv[1]))['notes'])" "$T/$1.json")"
  echo "ok: $1: the note '$2'"
}
zero="0:0 1:0 2:0 3:0 4:0 5:0 6:0 7:0"

for st in nccl gloo; do
  run "$st-one" $st --skew-us 0
  expect_eq "$st, one clock: no rank moved" "$(offsets "$st-one")" "$zero"
  note "$st-one" "clocks kept as recorded"

  run "$st-shift" $st --skew-us 0 --shift 2:5000
  got=$(offsets "$st-shift")
  $PY - "$got" <<'PYEOF' || fail "$st: rank 2's 5 ms not found alone: $got"
import sys
off = dict(map(int, x.split(":")) for x in sys.argv[1].split())
assert abs(off[2] + 5000000) <= 10000, off
assert all(v == 0 for r, v in off.items() if r != 2), off
PYEOF
  echo "ok: $st: rank 2's clock 5 ms ahead found alone ($got)"
  note "$st-shift" "clocks of 1 rank(s) moved"
done

run noisy nccl --skew-us 0 --clock-noise 5:20000
expect_eq "a clock no offset explains: left as recorded" "$(offsets noisy)" "$zero"
note noisy "clock offsets refused, larger unexplained than explained: rank 5"
pass
