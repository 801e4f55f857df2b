#!/bin/sh
# An interrupted export leaves nothing behind: SIGTERM during `collscope
# export --format otf2` removes the new archive folder being written
# (PATH.tmp-PID-HOST-XXXXXX) and ends the command by the signal, the
# earlier archive kept; an export killed outright (SIGKILL) leaves its
# folder or file, and the next export to the same path removes it, but
# never one whose process still runs, nor a link, nor another user's
# names.
. "$srcdir/tests/lib.sh"
gen=$B/bench/gen_trace
[ -x "$gen" ] || skip "bench/gen_trace not built"
mkdir "$T/t"
"$gen" "$T/t/trace.db" --ranks 8 --steps 2000 > /dev/null 2>&1 || fail "gen_trace failed"
"$COLLSCOPE" export "$T/t" --format otf2 -o "$T/a" > /dev/null 2>&1 || fail "the first export failed"
[ -f "$T/a/traces.otf2" ] || fail "no archive"
sum_a=$(cat "$T/a/traces.def" | cksum)

# tmps NAME: the temporary names of NAME in $T
tmps() { ls -a "$T" | grep -c "^$1\.tmp-"; }
# start_export SIG FORMAT PATH: an export frozen while it writes, then
# ended by SIG (a wait for its new file or folder, not a timing)
start_export() {
  "$COLLSCOPE" export "$T/t" --format "$2" -o "$T/$3" > "$T/exp.out" 2>&1 &
  pid=$!
  at_exit "kill -CONT $pid 2> /dev/null; kill -KILL $pid 2> /dev/null"
  i=0
  while [ "$(tmps "$3")" = 0 ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i + 1)); done
  [ $i -lt 3000 ] || fail "the export never started its output"
  kill -STOP $pid
  kill -"$1" $pid
  kill -CONT $pid
  wait $pid
  st=$?
}

start_export TERM otf2 a
expect_eq "otf2 export ended by SIGTERM: exit status" $st 143
expect_eq "otf2: no new folder left" "$(tmps a)" 0
expect_eq "otf2: the earlier archive is kept" "$(cat "$T/a/traces.def" | cksum)" "$sum_a"

start_export KILL otf2 a
expect_eq "otf2 export killed: exit status" $st 137
expect_eq "otf2 killed: its new folder is left" "$(tmps a)" 1
left=$(ls -a "$T" | grep "^a\.tmp-")
# a name of a process that still runs (this shell), and a link named as a
# killed export's, are not the next export's to remove
mkdir "$T/a.tmp-$$-$(hostname | tr -c 'A-Za-z0-9._\n' _)-live00" && echo keep > "$T/a.tmp-$$-$(hostname | tr -c 'A-Za-z0-9._\n' _)-live00/traces.otf2"
mkdir "$T/victim" && echo precious > "$T/victim/traces.otf2"
ln -s "$T/victim" "$T/a.tmp-999999999-$(hostname | tr -c 'A-Za-z0-9._\n' _)-link00"
"$COLLSCOPE" export "$T/t" --format otf2 -o "$T/a" > /dev/null 2> "$T/next.err" || fail "the next export failed: $(cat "$T/next.err")"
grep -qF "export: $T/$left: removed: the unfinished output of a command that was killed" "$T/next.err" ||
  fail "the next export does not name what it removed: $(cat "$T/next.err")"
[ -e "$T/$left" ] && fail "the killed export's folder is still there"
expect_eq "the live export's folder is kept" "$(cat "$T/a.tmp-$$-"*-live00/traces.otf2)" keep
expect_eq "the link is kept, its target untouched" "$(cat "$T/victim/traces.otf2")" precious
[ -L "$T/a.tmp-999999999-"*-link00 ] || fail "the link was removed"
[ -f "$T/a/traces.otf2" ] || fail "no archive after the next export"

# the same for an -o file (chrome)
start_export KILL chrome c.json
expect_eq "chrome export killed: exit status" $st 137
expect_eq "chrome killed: its new file is left" "$(tmps c.json)" 1
left=$(ls -a "$T" | grep "^c\.json\.tmp-")
"$COLLSCOPE" export "$T/t" --format chrome -o "$T/c.json" > /dev/null 2> "$T/next.err" || fail "the next chrome export failed"
grep -qF "export: $T/$left: removed: the unfinished output of a command that was killed" "$T/next.err" ||
  fail "the next chrome export does not name what it removed: $(cat "$T/next.err")"
expect_eq "chrome: no new file left" "$(tmps c.json)" 0
pass
