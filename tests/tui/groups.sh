#!/bin/sh
# groups.sh: collscope-tui on a 512-rank job (bench/tui_gen, rank 77 late
# in every tenth step), analysed: more ranks than rows, so alike ranks are
# drawn as one lane labelled with their ranks and count: the lanes' counts
# add up to 512 and rank 77 has a lane of its own; Enter expands a group's
# lane into one lane per rank and e groups them again; c turns grouping
# off and on; the ranks screen lists rank 77 first, and Enter on another
# row shows that rank's lane out of its group (the next jump puts it back).
# Not analysed (256 ranks), alike by share of time in calls: rank 77 alone
# too.
. "$srcdir/tests/lib.sh"
. "$srcdir/tests/tui/tuilib.sh"
GEN="$B/bench/tui_gen"
[ -x "$GEN" ] || skip "$GEN not built"
"$GEN" "$T/j.db" --ranks 512 --spans 153600 --straggler 77 >/dev/null || fail "tui_gen"
"$COLLSCOPE" analyze "$T/j.db" >"$T/analyze.log" 2>&1 || fail "collscope analyze: $(cat "$T/analyze.log")"

# the lane labels of the screen, one a line ("rank N" or "ranks LIST (N)")
labels() { screen | sed -n '4,48p' | sed -n 's/^[ >]\(rank [0-9][0-9]*\|ranks [0-9,.-]* ([0-9][0-9]*)\) .*/\1/p'; }
# how many ranks the lanes on screen hold
lane_sum() { labels | sed 's/^rank [0-9]*$/1/; s/^ranks .*(\([0-9]*\))$/\1/' | awk '{ s += $1 } END { print s + 0 }'; }

tui_start 160 50 "env LANG=C.UTF-8 TERM=xterm-256color '$TUI' '$T/j.db'"
wait_for 'analysis: yes'
wait_for '^>ranks [0-9].* \([0-9]+\) '
labels >"$T/labels"
n=$(wc -l <"$T/labels")
[ "$n" -ge 2 ] && [ "$n" -le 45 ] || fail "$n lanes for 512 ranks on 45 rows: $(cat "$T/labels")"
expect_eq "ranks in the lanes" "$(lane_sum)" 512
grep -qx 'rank 77' "$T/labels" || fail "rank 77 (the straggler) has no lane of its own: $(cat "$T/labels")"
grep '^ranks' "$T/labels" | grep -Eq '(^|[^0-9])77([^0-9]|$)' && fail "rank 77 is also in a group: $(cat "$T/labels")"
echo "ok: $n lanes hold the 512 ranks; rank 77 alone"
# the cursor's group, on the status line after j k
keys j k
wait_for 'group of [0-9]+ alike ranks \(imposed wait, lateness\), drawn: rank [0-9]+, their median'

# Enter on the group's lane: one lane per member, the cursor on the first
first=$(sed -n 1p "$T/labels")
gn=$(echo "$first" | sed 's/.*(\([0-9]*\))$/\1/')
keys Enter
wait_for "group of $gn ranks expanded"
wait_for '^>rank 0 '
screen | grep -q '^ rank 1 ' || fail "no lane of rank 1 after expanding"
expect_eq "ranks in the lanes on screen (expanded)" "$(labels | grep -c '^rank ')" 45
echo "ok: Enter expanded the group of $gn ranks"
keys e
wait_for 'ranks grouped again'
wait_for '^>ranks [0-9].* \([0-9]+\) '
expect_eq "ranks in the lanes (grouped again)" "$(lane_sum)" 512

# c: one lane per rank, and back
keys c
wait_for 'one lane per rank'
wait_for '^>rank 0 '
wait_for '^ rank 44 '
keys c
wait_for 'alike ranks grouped \(by imposed wait and lateness\)'
expect_eq "ranks in the lanes (c twice)" "$(lane_sum)" 512

# the ranks screen: rank 77 first; Enter on the second row shows that
# rank's lane out of its group
keys R
wait_for 'Ranks, latest first'
top=$(screen | grep -A1 'times last' | tail -n 1 | awk '{print $1}')
expect_eq "latest rank on the ranks screen" "$top" 77
second=$(screen | grep -A2 'times last' | tail -n 1 | awk '{print $1}')
[ -n "$second" ] && [ "$second" != 77 ] || fail "no second row on the ranks screen"
labels | grep -qx "rank $second" && fail "rank $second had a lane of its own before"
keys j Enter
wait_for "^>rank $second "
wait_for "rank $second \(row 2 of the ranks by lateness\)"
expect_eq "ranks in the lanes (rank $second shown alone)" "$(lane_sum)" 512
echo "ok: the ranks screen's Enter showed rank $second out of its group"
# the next rank jumped to takes its place: rank $second goes back
keys R
wait_for 'Ranks, latest first'
third=$(screen | grep -A3 'times last' | tail -n 1 | awk '{print $1}')
keys j Enter
wait_for "^>rank $third "
labels | grep -qx "rank $second" && fail "rank $second still alone after jumping to rank $third"
expect_eq "ranks in the lanes (rank $third shown alone)" "$(lane_sum)" 512
# e on it puts it back
keys e
wait_for "rank $third back in its group's lane"
expect_eq "ranks in the lanes (rank $third back)" "$(lane_sum)" 512
labels | grep -qx "rank $third" && fail "rank $third still alone"
keys q
wait_for '\[rc=0\]'

# not analysed: alike by share of time in calls (from the summary); rank 77,
# late in every tenth step, spends less of its time in calls than the rest
"$GEN" "$T/u.db" --ranks 256 --spans 76800 --straggler 77 >/dev/null || fail "tui_gen (256 ranks)"
tui_start 160 50 "env LANG=C.UTF-8 TERM=xterm-256color '$TUI' '$T/u.db'"
wait_for 'analysis: no'
wait_for '^>ranks [0-9].* \([0-9]+\) '
expect_eq "ranks in the lanes (not analysed)" "$(lane_sum)" 256
labels | grep -qx 'rank 77' || fail "rank 77 has no lane of its own (not analysed): $(labels)"
keys j k
wait_for 'group of [0-9]+ alike ranks \(share of time in calls\)'
# the summary keeps each collective's first and last arrival (256 ranks:
# not one query of 256 spans per collective in view), and the lanes draw
# the waiting parts from it
ninst=$(q "$T/u.db" "SELECT count(*) FROM (SELECT DISTINCT comm, seq FROM span
  WHERE seq IS NOT NULL AND op IN (SELECT id FROM ops WHERE kind = 'coll'))")
expect_eq "collectives kept by the summary" "$(q "$T/u.db" "SELECT count(*) FROM tui_inst")" "$ninst"
expect_eq "last arrivals kept" "$(q "$T/u.db" "SELECT count(*) FROM tui_inst i WHERE last_ns = (SELECT MAX(begin_ns)
  FROM spans s WHERE s.comm = i.comm AND s.seq = i.seq) AND members = 256")" "$ninst"
screen | sed -n 4p | grep -q '░' || fail "no waiting part on the group's lane: $(screen | sed -n 4p)"
keys q
wait_for '\[rc=0\]'
pass
