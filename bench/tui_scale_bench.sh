#!/bin/sh
# tui_scale_bench.sh: how long collscope-tui takes to show its first screen
# of a job of thousands of ranks, against 8 ranks in the same run. For each
# size: bench/tui_gen (the TUI layout, rank 77 late in one step of ten,
# STEPS steps), `collscope analyze`, then bench/tui_bench --first-screen
# (open as collscope-tui does, alike ranks grouped, first frame drawn, on
# a headless 160x50 screen): the first open (it builds the timeline
# summary, once) and the best of three later opens. With --rank-stores the
# jobs are written as rank stores with DIR/index.db (results in
# DIR/results.db): every open merges them into a private file first. Not
# part of make check. Usage (from the build folder):
#   sh SRC/bench/tui_scale_bench.sh [--rank-stores] [SIZES] [STEPS]
#   default SIZES "512 4096 8192", STEPS 20
set -u
B=${B:-$(pwd)}
GEN=$B/bench/tui_gen
CS=$B/analyzer/collscope
TB=$B/bench/tui_bench
[ -x "$GEN" ] && [ -x "$CS" ] && [ -x "$TB" ] || { echo "build first: $GEN, $CS, $TB"; exit 1; }
FORM=merged RS=
[ "${1:-}" = --rank-stores ] && { FORM=rank-stores RS=--rank-stores; shift; }
SIZES=${1:-"512 4096 8192"}
STEPS=${2:-20}
W=$(mktemp -d "${TMPDIR:-/tmp}/cs-tbench.XXXXXX")
trap 'rm -rf "$W"' EXIT

# first_ms OUT: the first screen's milliseconds from tui_bench's line
first_ms() { sed -n 's/^first screen: \([0-9.]*\) ms.*/\1/p' "$1"; }

printf "%-6s %-11s %9s %12s %12s %10s %7s\n" ranks form spans analyze_s first_open_ms later_ms "vs 8"
base=
for r in 8 $SIZES; do
  out=$W/j$r.db
  [ "$FORM" = rank-stores ] && out=$W/j$r
  strag=77
  [ "$r" -le 77 ] && strag=$((r / 2))
  "$GEN" "$out" --ranks "$r" --spans $((r * STEPS * 10)) --straggler "$strag" $RS > "$W/gen.out" 2>&1 || { cat "$W/gen.out"; echo "tui_gen $r failed"; exit 1; }
  a=$(date +%s.%N)
  "$CS" analyze "$out" > "$W/an.out" 2>&1 || { cat "$W/an.out"; echo "analyze $r failed"; exit 1; }
  an=$(echo "$(date +%s.%N) - $a" | bc)
  "$TB" "$out" --first-screen --cols 160 --rows 50 > "$W/first" 2>&1 || { cat "$W/first"; exit 1; }
  best=
  for i in 1 2 3; do
    "$TB" "$out" --first-screen --cols 160 --rows 50 > "$W/later" 2>&1 || { cat "$W/later"; exit 1; }
    ms=$(first_ms "$W/later")
    [ -z "$best" ] || [ "$(echo "$ms < $best" | bc)" = 1 ] && best=$ms
  done
  [ -z "$base" ] && base=$best
  printf "%-6s %-11s %9s %12.1f %12s %10s %6.1fx\n" "$r" "$FORM" $((r * STEPS * 10)) "$an" "$(first_ms "$W/first")" "$best" \
    "$(echo "$best / $base" | bc -l)"
  sed 's/^/       /' "$W/later"
  rm -rf "$out"
done
