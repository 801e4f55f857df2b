# sparse_ranks.inc.sh: helpers of the sparse rank tests (sourced).
# renumber DB MAP: every table of DB with a rank column gets its ranks
# renamed by MAP ("1:7 2:1000000 ..."); peers (ranks in a communicator)
# stay.
renumber() {
  _case="CASE rank"
  for _p in $2; do _case="$_case WHEN ${_p%%:*} THEN ${_p#*:}"; done
  _case="$_case ELSE rank END"
  for _t in $(q "$1" "SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c
                      WHERE m.type = 'table' AND c.name = 'rank'"); do
    q "$1" "UPDATE $_t SET rank = $_case" || fail "sqlite3: renumber $_t of $1"
  done
}
# figures JSON [MAP]: what the analysis found in the report JSON, one line
# per figure, ranks renamed by MAP; the evidence texts are left out (they
# name ranks).
figures() {
  /usr/bin/python3 - "$1" "${2:-}" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
ren = {int(a): int(b) for a, b in (p.split(":") for p in sys.argv[2].split())}
R = lambda r: ren.get(r, r)
print("instances", d["instances"], d["incomplete_instances"], "p2p", d["p2p_messages"])
for s in d["stragglers"]:
    print("straggler", s["kind"], R(s["rank"]), R(s["src"]), R(s["dst"]), s["comm"], s["first_step"],
          s["last_step"], s["lateness_ns"], s["cost_ns"])
for r in sorted(d["rank_stats"], key=lambda r: R(r["rank"])):
    print("wait", R(r["rank"]), r["times_last"], r["imposed_wait_ns"], r["median_lateness_ns"])
for c in sorted(d["clocks"], key=lambda c: R(c["rank"])):
    print("clock", R(c["rank"]), c["offset_ns"], c["drift_ppm"], c["residual_ns"])
for r in sorted(d["ranks"], key=lambda r: R(r["rank"])):
    print("rank", R(r["rank"]), r["in_calls_ns"], r["spans"])
st = d["steps"]
print("steps", st["source"], st["count"], st["median_ns"], st["whatif_median_ns"])
for s in st["list"]:
    print("step", s["step"], s["time_ns"], R(s["slowest_rank"]), s["whatif_ns"])
for t in d["tails"]:
    print("tail", t["op"], t["comm"], t["bucket"], t["callsite"], t["count"], t["p50_ns"], t["max_ns"])
w = d["whatif"]
print("whatif", w["replay_step_ns"], w["model_step_ns"], w["ontime_step_ns"], w["comm_step_ns"])
print("notes", d["notes"])
PYEOF
}
