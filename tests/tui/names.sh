#!/bin/sh
# names.sh: names from the trace are data on the TUI's screen too (issue 33
# defect 10): a trace in a folder whose name holds a newline and an escape
# sequence is drawn with those characters escaped (\n, \x1b, as every
# command prints them, common/msg.h): the name cannot break the screen's
# lines nor colour it.
. "$srcdir/tests/lib.sh"
. "$srcdir/tests/tui/tuilib.sh"
gen=$B/bench/gen_trace
[ -x "$gen" ] || skip "bench/gen_trace not built"
name=$(printf 'x\nFORGED \033[31mred')
mkdir "$T/$name" || fail "mkdir"
"$gen" "$T/$name/trace.db" --ranks 2 --steps 10 > /dev/null 2>&1 || fail "gen_trace failed"
cat > "$T/run.sh" <<EOS
#!/bin/sh
exec env LANG=C.UTF-8 TERM=xterm-256color "$TUI" "\$1\$(printf 'x\nFORGED \033[31mred')"
EOS
tui_start 200 40 "sh '$T/run.sh' '$T/'"
wait_for 'collscope-tui \| '
wait_for 'x\\nFORGED \\x1b\[31mred'
screen | grep -q '^FORGED' && fail "the name broke a line: $(screen)"
expect_eq "screen lines holding the name raw" "$(screen | grep -c 'FORGED.*red' | tr -d ' ')" \
  "$(screen | grep -c 'x\\nFORGED \\x1b\[31mred' | tr -d ' ')"
# the colour: tmux keeps the escape's effect, not its bytes; ask it for the
# attributes of the header line
$TM capture-pane -p -e -t t | sed -n 1p | grep -q "$(printf '\033')\[31m" &&
  fail "the name's escape sequence coloured the screen"
echo "ok: the folder's name drawn escaped"
keys q
wait_for '\[rc=0\]'
pass
