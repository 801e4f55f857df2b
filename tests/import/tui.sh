#!/bin/sh
# An imported NCCL-style job (tests/import/kineto_gen.py) in collscope-tui:
# its ranks' lanes, the compute spans drawn with the GPU/compute glyph (CPU
# ops on the main thread, kernels on thread 1000 + their stream), the NCCL
# collectives on their stream lane (docs/tui.md).
. "${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
srcdir=${srcdir:-$S}
. "$S/tests/tui/tuilib.sh"
PY=${PYTHON3:-python3}
check "generate nccl traces" $PY "$S/tests/import/kineto_gen.py" "$T/in" --style nccl --steps 4 --delay-us 2000
"$COLLSCOPE" import -o "$T/out" "$T/in" > "$T/imp.txt" 2>&1 || { cat "$T/imp.txt"; fail "import"; }
tui_start 140 40 "env LANG=C.UTF-8 TERM=xterm-256color '$TUI' '$T/out'"
wait_for 'r3 t0'
wait_for 'GPU/compute'
screen | grep -E '^.?r0 t0 ' | grep -q '▓' || { screen; fail "no CPU compute span drawn on rank 0's main thread"; }
echo "ok: CPU compute spans drawn on rank 0's main thread"
screen | grep -E '^.?r0 t100' | grep -q '▓' || { screen; fail "no GPU compute span drawn on rank 0's stream 7 lane"; }
echo "ok: GPU compute spans on the lane of stream 7 (thread 1007, its label cut to t100)"
screen | grep -E '^.?r0 s[0-9]' | grep -q '█' || { screen; fail "no NCCL collective at its GPU time"; }
echo "ok: the NCCL collectives on their stream lane at their GPU times"
keys q
wait_for '\[rc=0\]'
pass
