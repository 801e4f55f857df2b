#!/bin/sh
# layout.sh: collscope-tui's layout screen (4, G) in tmux on a traced
# dp 2 x pp 4 job (examples/pipe_trainer, Open MPI) whose rank 5 is slow: the
# grid's title names the layout and the slowdown, every rank has its cell
# at its coordinates, rank 5's cell holds the largest share (>= 50 %), the
# arrows reach it and Enter shows its worst step on the timeline; a trace
# without a layout says so.
. "$srcdir/tests/lib.sh"
. "$srcdir/tests/tui/tuilib.sh"
need_mpi openmpi
MPIRUN=$(mpirun_for openmpi)
PROG="$B/examples/pipe_trainer_ompi"
[ -x "$PROG" ] || skip "$PROG not built"
export OMPI_MCA_mpi_yield_when_idle=1
"$COLLSCOPE" run -o "$T/run" -- "$MPIRUN" -np 8 --oversubscribe "$PROG" --dp 2 --pp 4 --steps 10 --micro 4 \
  --compute-us 8000 --slow-rank 5 --slow-us 12000 >"$T/run.out" 2>&1 || fail "traced run failed (see $T/run.out)"
"$COLLSCOPE" analyze "$T/run" >"$T/analyze.log" 2>&1 || fail "collscope analyze: $(cat "$T/analyze.log")"

tui_start 140 30 "env LANG=C.UTF-8 TERM=xterm-256color '$TUI' '$T/run'"
wait_for 'analysis: yes'
keys 4
wait_for 'Layout: dp 2 x pp 4, tp 1; slowdown S [0-9.]+: rank 5 explains'
# the cells: stage p, column dp holds the rank of the program's order
# (rank = stage * 2 + replica)
for p in 0 1 2 3; do
  row=$(screen | grep "^ pp $p ")
  for d in 0 1; do
    r=$((p * 2 + d))
    echo "$row" | grep -q "r$r " || fail "stage $p: no cell of rank $r in: $row"
  done
done
echo "ok: every rank at its coordinates"
share5=$(screen | grep '^ pp 2 ' | sed -n 's/.*r5 *[0-9.]* *\([0-9]*\)%.*/\1/p')
[ -n "$share5" ] && [ "$share5" -ge 50 ] || fail "rank 5's share '$share5', want >= 50: $(screen | grep '^ pp 2 ')"
for r in 0 1 2 3 4 6 7; do
  s=$(screen | sed -n "s/.* r$r *[0-9.]* *\([0-9-]*\)%.*/\1/p" | head -n 1)
  [ -z "$s" ] || [ "$s" -lt "$share5" ] || fail "rank $r's share $s not below rank 5's $share5"
done
echo "ok: rank 5 holds the largest share ($share5 %)"
# the cursor: down twice (stage 2), right once (replica 1): rank 5
keys j j l
wait_for '^ pp 2 .*>'
keys Enter
wait_for 'rank 5 in its worst step [0-9]+: [0-9.]+ [mu]?s replayed'
screen | grep -q 'rank 5' || fail "the timeline does not show rank 5's lane"
echo "ok: Enter showed rank 5's worst step on the timeline"
keys G
wait_for 'Layout: dp 2 x pp 4'
keys q
wait_for '\[rc=0\]'

# a trace without a layout (a ring of halo messages): the screen says so
TRAINER="$B/examples/mpi_trainer_ompi"
[ -x "$TRAINER" ] || fail "$TRAINER not built"
"$COLLSCOPE" run -o "$T/halo" -- "$MPIRUN" -np 4 --oversubscribe "$TRAINER" --steps 6 --halo >"$T/halo.out" 2>&1 ||
  fail "halo: traced run failed"
"$COLLSCOPE" analyze "$T/halo" >/dev/null 2>&1 || fail "halo: analyze failed"
tui_start 120 30 "env LANG=C.UTF-8 TERM=xterm-256color '$TUI' '$T/halo'"
wait_for 'analysis: yes'
keys 4
wait_for 'Layout: none found in this trace'
keys q
wait_for '\[rc=0\]'
pass
