#!/bin/sh
# JSON output stays valid when stored figures are NaN or infinite (a
# damaged or degenerate trace): each such number is written as null, and
# a "null_note" member says how many there were. Report and diff.
. "$srcdir/tests/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
GEN=$B/bench/gen_trace
[ -x "$GEN" ] || fail "bench/gen_trace not built"
"$GEN" "$T/t.db" --ranks 4 --steps 30 >/dev/null || fail "gen_trace failed"
"$COLLSCOPE" analyze "$T/t.db" || fail "analyze failed"
q "$T/t.db" "UPDATE meta SET value = 'nan' WHERE key = 'whatif_replay_error';
  UPDATE meta SET value = 'inf' WHERE key IN ('whatif_model_error', 'whatif_memcpy_gbps');
  UPDATE meta SET value = '-inf' WHERE key = 'whatif_allreduce_calls_per_step';
  UPDATE models SET alpha_ns = 1e999, beta_ns_per_byte = -1e999, r2 = 1e999;" || fail "sqlite3 failed"
"$COLLSCOPE" report "$T/t.db" --format json -o "$T/r.json" || fail "report failed"
"$PY" -c 'import json,sys
d = json.load(open(sys.argv[1]))
w = d["whatif"]
assert w["replay_error"] is None and w["model_error"] is None and w["memcpy_gbps"] is None, w
assert all(m["alpha_ns"] is None for m in d["cost_models"]), d["cost_models"]
assert "not finite" in d["null_note"], d.get("null_note")
print("ok: report JSON parses;", d["null_note"])' "$T/r.json" || { cat "$T/r.json"; fail "report JSON"; }
"$COLLSCOPE" diff "$T/t.db" "$T/t.db" --format json -o "$T/d.json" || fail "diff failed"
"$PY" -c 'import json,sys; json.load(open(sys.argv[1])); print("ok: diff JSON parses")' "$T/d.json" || { cat "$T/d.json"; fail "diff JSON"; }
# a clean trace has no note
"$GEN" "$T/c.db" --ranks 4 --steps 30 >/dev/null || fail "gen_trace failed"
"$COLLSCOPE" report "$T/c.db" --format json -o "$T/c.json" || fail "report failed"
"$PY" -c 'import json,sys; assert "null_note" not in json.load(open(sys.argv[1]))' "$T/c.json" || fail "a clean trace got a null_note"
pass
