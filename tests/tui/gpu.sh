#!/bin/sh
# gpu.sh: collscope-tui's ranks screen (3, R), its GPU view (g) on a
# generated Kineto trace of 8 ranks (tests/import/gpu_gen.py) whose rank 5
# computes 2x slower: the view lists every rank with the report's shares
# (compute, comm exposed and overlapped, memory, idle, to 0.1 point) and a
# bar; sorted by compute share rank 5 comes first, marked out of line; s
# sorts by comm exposed share (the rank with the largest first, rank 5
# last); without UTF-8 the bar is ASCII; on a CPU-only trace g says there
# is no GPU activity.
. "$srcdir/tests/lib.sh"
. "$srcdir/tests/tui/tuilib.sh"
PY=${PYTHON3:-python3}
$PY "$S/tests/import/gpu_gen.py" "$T/slow" --ranks 8 --steps 4 --slow-rank 5 > /dev/null || fail "gpu_gen.py failed"
"$COLLSCOPE" import -o "$T/slow.out" "$T/slow" > "$T/imp.log" 2>&1 || fail "import failed: $(cat "$T/imp.log")"
"$COLLSCOPE" report "$T/slow.out" --format json -o "$T/slow.json" || fail "report failed"

# the report's shares, as the view prints them: "RANK compute exposed overlap memory idle"
$PY - "$T/slow.json" > "$T/want" << 'PYEOF'
import json, sys
for g in json.load(open(sys.argv[1]))["gpu_time"]:
    print(g["rank"], " ".join("%.1f%%" % (100 * g[p + "_share"]) for p in
                              ("compute", "comm_exposed", "comm_overlapped", "memory", "idle")))
PYEOF
exposed_first=$($PY -c 'import json,sys; g=json.load(open(sys.argv[1]))["gpu_time"]; print(max(g, key=lambda x: (x["comm_exposed_share"], -x["rank"]))["rank"])' "$T/slow.json")

tui_start 150 24 "env LANG=C.UTF-8 TERM=xterm-256color '$TUI' '$T/slow.out'"
wait_for 'analysis: yes'
keys 3
wait_for 'Ranks, latest first'
wait_for 'g: GPU time'
keys g
wait_for 'GPU time per rank \(% of its GPU window\), by compute share, largest first'
# the windows in one unit, named in the header; each cell a bare number
screen | grep -qE ' window \((s|ms|us)\) ' || fail "the window column names no unit: $(screen | grep ' window')"
# every rank: the report's figures
while read -r r want; do
  got=$(screen | awk -v r="$r" '$1 == r && $2 ~ /^[0-9.]+$/ && $3 ~ /%$/ { printf "%s %s %s %s %s", $3, $4, $5, $6, $7 }' | tr -d '!')
  [ "$got" = "$want" ] || fail "rank $r: '$got', the report's '$want'"
done < "$T/want"
echo "ok: every rank's shares as the report's"
expect_eq "sorted by compute share: first row" "$(line 5 | awk '{print $1}')" 5
line 5 | grep -q '%! ' || fail "rank 5 not marked out of line: $(line 5)"
line 5 | grep -q '█' || fail "no bar on rank 5's row: $(line 5)"
# the bar: compute cells in proportion to the compute share (within a cell)
$PY - "$(line 5)" "$(line 6)" << 'PYEOF' || fail "the bars are not in proportion to the compute shares"
import re, sys
for row in sys.argv[1:]:
    bar = re.search("[\u2588\u2593\u2592\u00b7]+", row).group(0)
    share = float(row.split()[2].rstrip("%"))
    got = bar.count("\u2588") / len(bar) * 100
    if abs(got - share) > 100.0 / len(bar) + 0.01:
        print("bar %.1f %% compute, the row %.1f %%: %s" % (got, share, row))
        sys.exit(1)
print("ok: bars in proportion (%d cells)" % len(bar))
PYEOF
keys s
wait_for 'by comm exposed share, largest first'
expect_eq "sorted by comm exposed share: first row" "$(line 5 | awk '{print $1}')" "$exposed_first"
expect_eq "sorted by comm exposed share: last row" "$(line 12 | awk '{print $1}')" 5
keys g
wait_for 'Ranks, latest first'

# without UTF-8: an ASCII bar
tui_start 150 24 "env LANG=C LC_ALL=C TERM=xterm '$TUI' '$T/slow.out'"
wait_for 'analysis: yes'
keys 3
wait_for 'Ranks, latest first'
keys g
wait_for 'by compute share, largest first'
line 5 | grep -Eq '%! +#+=+~*\.+ *$' || fail "no ASCII bar on rank 5's row: $(line 5)"
screen | LC_ALL=C grep -q '[^ -~]' && fail "non-ASCII on the screen without UTF-8"
echo "ok: ASCII bar"

# a CPU-only trace
"$B/bench/gen_trace" "$T/cpu.db" --ranks 4 --steps 10 > /dev/null || fail "gen_trace failed"
"$COLLSCOPE" analyze "$T/cpu.db" > /dev/null 2>&1 || fail "analyze of the CPU trace failed"
tui_start 150 24 "env LANG=C.UTF-8 TERM=xterm-256color '$TUI' '$T/cpu.db'"
wait_for 'analysis: yes'
keys 3
wait_for 'Ranks, latest first'
keys g
wait_for 'no GPU activity in this trace'
pass
