#!/bin/sh
# badinput.sh: collscope-tui on bad input and faults: a missing or corrupt
# trace, an empty and a single-rank trace, a terminal too small, signals
# while running. Each gives one clear message, and the terminal is restored.
. "$srcdir/tests/lib.sh"
. "$srcdir/tests/tui/tuilib.sh"

GEN="$B/bench/tui_gen"
# run_tui DESC WANT_RC REGEX ARGS...: outside tmux (no terminal needed to fail early)
run_tui() {
  _d=$1 _rc=$2 _re=$3; shift 3
  "$TUI" "$@" </dev/null >"$T/out" 2>"$T/err"; _got=$?
  [ $_got -eq "$_rc" ] || { cat "$T/err"; fail "$_d: exit $_got, want $_rc"; }
  [ "$(wc -l <"$T/err")" -eq 1 ] || { cat "$T/err"; fail "$_d: want one line of message"; }
  grep -Eq -- "$_re" "$T/err" || { cat "$T/err"; fail "$_d: message does not match /$_re/"; }
  echo "ok: $_d: $(cat "$T/err")"
}
run_tui "missing trace" 1 "nothing.*no such file" "$T/nothing"
mkdir -p "$T/emptydir"
run_tui "directory without trace.db" 1 "emptydir/trace.db.*no trace" "$T/emptydir"
echo "this is not a database" >"$T/bad.db"
run_tui "not a database" 1 "bad.db.*not a collscope trace" "$T/bad.db"
"$GEN" "$T/good.db" --spans 4000 --ranks 4 >/dev/null || fail "tui_gen"
head -c 2048 "$T/good.db" >"$T/trunc.db"
run_tui "truncated database" 1 "trunc.db.*(corrupt|not a collscope trace|malformed)" "$T/trunc.db"
cp "$T/good.db" "$T/empty.db"
q "$T/empty.db" "DELETE FROM span; UPDATE processes SET spans = 0;"
run_tui "empty trace" 1 "empty.db.*no spans" "$T/empty.db"
run_tui "not a terminal" 1 "must be a terminal" "$T/good.db"
"$TUI" --bogus >/dev/null 2>&1; expect_eq "bad option exit status" $? 2
"$COLLSCOPE" tui "$T/nothing" </dev/null 2>"$T/err"; rc=$?
expect_eq "collscope tui on a missing trace" $rc 1
grep -q "no such file" "$T/err" || fail "collscope tui: $(cat "$T/err")"

# single rank: opens, and says what it cannot show
"$GEN" "$T/one.db" --spans 500 --ranks 1 >/dev/null || fail "tui_gen one rank"
tui_start 100 30 "env LANG=C.UTF-8 TERM=xterm '$TUI' '$T/one.db'"
wait_for 'single-rank trace'
wait_for 'rank 0'
keys q
wait_for '\[rc=0\]'

# a terminal too small to draw in, then large enough
tui_start 20 5 "env LANG=C.UTF-8 TERM=xterm '$TUI' '$T/good.db'"
wait_for 'too small'
wait_for '20x5'
resize 100 30
wait_for 'rank 3'
keys q
wait_for '\[rc=0\]'
wait_for '\[tty icanon\]'

# SIGTERM while running: message, exit 143, terminal restored
tui_start 100 30 "env LANG=C.UTF-8 TERM=xterm '$TUI' '$T/good.db'"
wait_for 'rank 3'
pid=$(tui_pid)
[ -n "$pid" ] || fail "no collscope-tui process"
kill -TERM "$pid"
wait_for 'stopped by signal 15'
wait_for '\[rc=143\]'
wait_for '\[tty icanon\]'
wait_gone 'collscope-tui \|'

# SIGINT (Ctrl-C) while running
tui_start 100 30 "env LANG=C.UTF-8 TERM=xterm '$TUI' '$T/good.db'"
wait_for 'rank 3'
keys C-c
wait_for 'stopped by signal 2'
wait_for '\[rc=130\]'
wait_for '\[tty icanon\]'

# SIGHUP (the ssh connection dropped)
tui_start 100 30 "env LANG=C.UTF-8 TERM=xterm '$TUI' '$T/good.db'"
wait_for 'rank 3'
kill -HUP "$(tui_pid)"
wait_for '\[rc=129\]'
wait_for '\[tty icanon\]'
pass
