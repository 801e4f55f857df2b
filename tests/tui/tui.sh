#!/bin/sh
# tui.sh: collscope-tui in tmux on a recorded 4-rank trace whose rank 2 is
# late: lanes, axis, zoom, the straggler's details, worst instances,
# straggler steps, filters, stats and ranks screens, help, resizing, and
# drawing without colours or UTF-8.
. "$srcdir/tests/lib.sh"
. "$srcdir/tests/tui/tuilib.sh"

# A recorded trace: the example trainer, rank 2 delayed; else a generated one.
# 20 ms a step: on 2 loaded cores the other ranks impose 100-250 ms of
# waiting over the run by scheduling alone; rank 2 imposes some 1.2 s.
TRAINER="$B/examples/mpi_trainer_ompi"
L=$(mpirun_for openmpi)
if [ -x "$TRAINER" ] && [ -n "$L" ] && [ "$L" != no ] && [ -x "$L" ]; then
  "$COLLSCOPE" run -o "$T/run" -- "$L" -np 4 --oversubscribe "$TRAINER" --steps 20 --delay-us 20000 \
    --delay-ranks 2 --compute-us 2000 >"$T/run.log" 2>&1 || { cat "$T/run.log"; fail "collscope run"; }
  echo "ok: recorded the trainer with a straggler (rank 2)"
else
  mkdir -p "$T/run"
  "$B/bench/tui_gen" "$T/run/trace.db" --spans 2000 --ranks 4 --straggler 2 || fail "tui_gen"
  echo "ok: generated a 4-rank trace (no Open MPI trainer here)"
fi
# check_units FILE HEADER-REGEX NAME...: on the screen saved in FILE, the
# table whose header line matches HEADER-REGEX has one unit per column
# (issue 36): each column NAME states its unit in the header ("p50 (ms)"),
# and the column's cells (the fields of each row, counted from the right
# for the stats table, from the left for the ranks table) are bare
# numbers, none a unit of its own, and under 1000 of any unit below s
# (the unit was chosen by the largest value); the units in $units.
check_units() {
  _f=$1 _h=$2; shift 2
  _hdr=$(grep -E -- "$_h" "$_f" | head -n 1)
  [ -n "$_hdr" ] || fail "no table header /$_h/ on the screen: $(cat "$_f")"
  units=""
  for _c in "$@"; do
    _u=$(echo "$_hdr" | grep -oE -- "$_c\*? \((B|KiB|MiB|GiB|us|ms|s)\)" | sed -E 's/.*\((.*)\)/\1/')
    [ -n "$_u" ] || fail "column '$_c' names no unit in its header: '$_hdr'"
    units="$units $_u"
  done
  echo "ok: units in the header:$units: $_hdr"
}
# check_cells FILE HEADER-REGEX FIRST LAST: fields FIRST..LAST (negative:
# from the right, -1 the last) of each row under the header are bare
# numbers (or "-"), in the units $units in order
check_cells() {
  sed -n "/$2/,\$p" "$1" | sed 1d | grep -v 'q: quit' | grep -v '^ *$' > "$T/cells"
  [ -s "$T/cells" ] || fail "no rows under /$2/"
  awk -v a="$3" -v b="$4" -v units="$units" '
    BEGIN { nu = split(units, u, " ") }
    { i0 = a < 0 ? NF + 1 + a : a; i1 = b < 0 ? NF + 1 + b : b
      for (i = i0; i <= i1; i++) {
        k = i - i0 + 1; v = $i
        if (v == "-") continue
        if (v !~ /^<?[0-9]+(\.[0-9]+)?$/) { printf "row %d: cell \"%s\" (column %d, header unit %s) is no bare number: %s\n", NR, v, k, u[k], $0; bad = 1; continue }
        sub(/^</, "", v)
        if (u[k] != "s" && u[k] != "GiB" && v + 0 >= 1000 + (u[k] ~ /iB$/ ? 24 : 0)) { printf "row %d: %s %s should be in a larger unit\n", NR, v, u[k]; bad = 1 }
      } }
    END { exit bad }' "$T/cells" || fail "a cell of the table under /$2/ is not in its column's unit"
  echo "ok: $(wc -l < "$T/cells") rows, each cell a bare number in its column's unit, e.g. $(head -n 1 "$T/cells")"
}
mkdir -p "$T/raw"
cp "$T/run/trace.db" "$T/raw/trace.db"

# -- not analysed: lanes, axis, and a clear note for the analysis keys
tui_start 120 40 "env LANG=C.UTF-8 TERM=xterm-256color '$TUI' '$T/raw'"
wait_for 'rank 3'
for r in 0 1 2; do screen | grep -q "rank $r" || fail "lane of rank $r missing"; done
echo "ok: one lane per rank"
line 2 | grep -Eq '[0-9.]+(ns|us|ms|s)' || fail "no time axis with units: $(line 2)"
echo "ok: time axis with units: $(line 2 | tr -s ' ' | cut -c1-60)"
screen | grep -q 'collective' || fail "no legend"
keys w
wait_for 'not analysed yet'
# A analyses in the TUI's own process, stores the results, and reloads
cp "$T/raw/trace.db" "$T/raw.db.before"
keys A
wait_for 'analysis: yes'
keys w
wait_for 'worst #1 of'
keys q
wait_for '\[rc=0\]'
n=$(sqlite3 "$T/raw/trace.db" "SELECT COUNT(*) FROM instances" 2>/dev/null || echo 0)
[ "${n:-0}" -gt 0 ] || fail "A stored no instances in the trace"
echo "ok: A analysed the trace in-process ($n instances stored) and the screen shows it"
cp "$T/raw.db.before" "$T/raw/trace.db"
rm -f "$T/raw/trace.db-wal" "$T/raw/trace.db-shm"

# -- analysed
"$COLLSCOPE" analyze "$T/run" >"$T/analyze.log" 2>&1 || { cat "$T/analyze.log"; fail "collscope analyze"; }
tui_start 120 40 "env LANG=C.UTF-8 TERM=xterm-256color '$TUI' '$T/run'"
wait_for 'analysis: yes'
wait_for 'rank 3'
axis0=$(line 2)
view0=$(screen | grep -o 'view [0-9.]* [a-z]*s' | tail -n 1)
keys + + +
wait_gone "$view0"
axis1=$(line 2)
[ "$axis0" != "$axis1" ] || fail "zoom did not change the axis"
echo "ok: zoom changed the axis ($view0 -> $(screen | grep -o 'view [0-9.]* [a-z]*s' | tail -n 1))"
keys -
wait_for 'view'

# worst instance: the straggler's details
keys w
wait_for 'worst #1 of'
wait_for 'who was last: rank [0-9]'
keys w
wait_for 'worst #2 of'
keys W
wait_for 'worst #1 of'
# the worst instances where the straggler (rank 2) came last
i=1
while ! screen | grep -q 'last rank 2 '; do
  [ $i -lt 30 ] || fail "no worst instance with rank 2 last among the first 30"
  i=$((i + 1)); keys w; wait_for "worst #$i of"
done
wait_for 'who was last: rank 2'
wait_for 'Selected: MPI_'
wait_for 'call site: '
screen | grep -Eq 'comm [A-Za-z].* \([0-9]+ ranks?\) +seq [0-9]+' || fail "no communicator and sequence number in the details"
screen | grep -Eq 'bytes [0-9.]+ (B|KiB|MiB)' || fail "no bytes in the details"
echo "ok: details of the worst instance (op, bytes, comm, seq, wait, last rank, call site)"
keys Escape
wait_gone 'Selected: MPI_'

# straggler steps
keys s
wait_for 'straggler step [0-9]+ \(1 of'
wait_for 'rank [0-9] set the step time'
keys s
wait_for 'straggler step [0-9]+ \(2 of'
keys S
wait_for 'straggler step [0-9]+ \(1 of'

# select at the cursor
keys Enter
wait_for 'Selected: |no span at the cursor'

# filters
keys f / r a n k Space 2 Enter
wait_for 'filter: rank=2'
# (a lane starts its line with its name; the details of the span selected
# above may name rank 0 as the last one)
wait_gone '^[ >]rank 0( |$)'
echo "ok: rank filter shows only rank 2"
keys x
wait_for 'rank 0'
keys / o p Space a l l r e d u c e Enter
wait_for 'op=MPI_Allreduce'
keys / c o m m Space z z Enter
wait_for "not a communicator id"
keys x
wait_gone 'op=MPI_Allreduce'

# go to a time
keys g 5 0 % Enter
wait_for 'at \+'

# stats screen, sortable
keys T
wait_for 'Per op \(sorted by total\)'
wait_for 'MPI_Allreduce'
# one unit per column, in the header; no unit in the cells
screen > "$T/stats.txt"
check_units "$T/stats.txt" ' key\*? ' bytes total p50 p90 p99 max
check_cells "$T/stats.txt" ' key\*\? ' -6 -1
keys '>'
wait_for 'sorted by p50'
keys r
wait_for 'sorted by p50, reversed'
keys Tab
wait_for 'Per communicator \(sorted'
keys Tab
wait_for 'Per call site \(sorted'
screen | grep -q 'Stragglers' && echo "ok: stragglers listed on the stats screen"

# ranks screen: rank 2 first (latest)
keys R
wait_for 'Ranks, latest first'
first=$(screen | grep -A1 'times last' | tail -n 1 | awk '{print $1}')
expect_eq "latest rank on the ranks screen" "$first" 2
screen > "$T/ranks.txt"
check_units "$T/ranks.txt" 'times last' lateness 'imposed wait' 'in calls' wall
check_cells "$T/ranks.txt" 'times last' 3 6
keys Enter
wait_for '>rank 2'

# help
keys '?'
wait_for 'zoom in around the cursor'
keys Space
wait_for 'rank 3'

# resizing
resize 80 24
wait_for '^>?.rank 3|^ rank 3|rank 3'
[ "$(screen | wc -l)" -le 24 ] || fail "screen larger than 24 lines after resize"
screen | head -n 1 | grep -q 'collscope-tui' || fail "no header at 80x24"
echo "ok: drawn at 80x24"
resize 300 100
wait_for 'rank 3'
line 2 | grep -Eq '[0-9.]+(ns|us|ms|s)' || fail "no axis at 300x100"
echo "ok: drawn at 300x100"
resize 20 5
wait_for 'too small'
resize 120 40
wait_for 'rank 3'
wait_gone 'too small'
keys q
wait_for '\[rc=0\]'
wait_for '\[tty icanon\]'

# no colours, no UTF-8, vt100
tui_start 100 30 "env LANG=C LC_ALL=C TERM=vt100 NO_COLOR=1 '$TUI' '$T/run'"
wait_for 'rank 3'
wait_for '# collective'
screen | grep '^ rank\|^>rank' | grep -q '[#:]' || fail "no ASCII spans on the lanes"
echo "ok: ASCII glyphs without colours"
keys q
wait_for '\[rc=0\]'

# through collscope
tui_start 100 30 "env LANG=C.UTF-8 TERM=xterm '$COLLSCOPE' tui '$T/run'"
wait_for 'rank 3'
keys q
wait_for '\[rc=0\]'
pass
