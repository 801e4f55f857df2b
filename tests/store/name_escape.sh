#!/bin/sh
# A file name is data, never a line of collscope's output: a folder and a
# log whose names hold a newline and an escape character are named in
# every message (report, ingest, status, import, export, the preload's
# warnings) with those characters escaped (\n, \x1b), so the name cannot
# forge a line such as "collscope: all good" nor drive the terminal.
. "$srcdir/tests/lib.sh"
gen=$B/bench/gen_trace
[ -x "$gen" ] || skip "bench/gen_trace not built"
esc=$(printf '\033')
d="$T/$(printf 'x\ncollscope: all good %s[31mred' "$esc")"
shown="$T/x\\ncollscope: all good \\x1b[31mred"
mkdir "$d" || fail "mkdir"
"$gen" "$d/trace.db" --ranks 2 --steps 10 > /dev/null 2>&1 || fail "gen_trace failed"

# run CMD...: its stdout and stderr together in $T/out
run() { "$COLLSCOPE" "$@" > "$T/out" 2>&1; }
# clean WHAT: no forged line, no raw escape in $T/out, the name escaped
clean() {
  grep -q '^collscope: all good' "$T/out" && fail "$1: a forged line: $(cat "$T/out")"
  grep -q "$esc" "$T/out" && fail "$1: a raw escape character: $(cat -v "$T/out")"
  grep -qF "$shown" "$T/out" || fail "$1: the name is not shown escaped: $(cat "$T/out")"
  echo "ok: $1: $(head -n 1 "$T/out" | cut -c1-160)"
}
run report "$d" || fail "report failed: $(cat "$T/out")"
clean "report (its header)"
run report "$d/nope" && fail "report of a missing trace succeeded"
clean "report of a missing trace"
expect_eq "report of a missing trace: one line" "$(wc -l < "$T/out")" 1
mkdir "$d/logs" && echo junk > "$d/logs/$(printf 'r\n1').cslog"
run ingest "$d"
clean "ingest of a bad log"
grep -qF "$shown/logs/r\\n1.cslog: not a collscope log" "$T/out" || fail "ingest: the log's name: $(cat "$T/out")"
run status "$d"
clean "status of a bad log"
printf '{"traceEvents": [' > "$d/$(printf 'bad\n%s.json' "$esc")"
run import -o "$T/imp" "$d/$(printf 'bad\n%s.json' "$esc")"
clean "import of a bad file"
run export "$d" --format chrome -o "$d/$(printf 'o\n.json')"
grep -q '^collscope: all good' "$T/out" && fail "export: a forged line: $(cat "$T/out")"
grep -q "$esc" "$T/out" && fail "export: a raw escape: $(cat -v "$T/out")"
run export "$d" --format chrome -o "$d/nofolder/o.json" && fail "export into a missing folder succeeded"
clean "export into a missing folder"
# the preload's warnings (an application traced, here one process of the
# example trainer started alone): a setting's value is shown escaped
prog=$B/examples/mpi_trainer_ompi
if [ -x "$prog" ] && command -v ompi_info > /dev/null 2>&1; then
  LD_PRELOAD="$COLLSCOPE_LIBDIR/collscope-openmpi.so" COLLSCOPE_DIR="$T/pre" \
    COLLSCOPE_CLOCK="$(printf 'x\ncollscope: all good %s[31m' "$esc")" "$prog" --steps 1 > "$T/out" 2>&1
  grep -q '^collscope: all good' "$T/out" && fail "preload: a forged line: $(cat "$T/out")"
  grep -q "$esc" "$T/out" && fail "preload: a raw escape: $(cat -v "$T/out")"
  grep -qF 'collscope: COLLSCOPE_CLOCK=x\ncollscope: all good \x1b[31m is not tsc or monotonic' "$T/out" ||
    fail "preload: the value is not shown escaped: $(cat "$T/out")"
  echo "ok: the preload's warning: $(grep COLLSCOPE_CLOCK "$T/out" | cut -c1-120)"
else
  echo "(no Open MPI trainer: the preload's warning is not checked)"
fi
pass
