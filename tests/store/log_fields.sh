#!/bin/sh
# Log records and header fields no writer makes: a COMMDEF whose local
# index is near 2^32, header strings with no NUL, slots of an unknown kind,
# times at the ends of their types.
# ingest survives each: one message naming the log and what was damaged,
# exit status 1, every other record and log kept.
. "$srcdir/tests/lib.sh"
gen=$B/bench/log_gen
[ -x "$gen" ] || skip "log_gen not built"
"$gen" -o "$T/good" -r 2 -n 300 > /dev/null || fail "cannot write logs"
"$COLLSCOPE" ingest "$T/good" > /dev/null 2>&1 || fail "the good logs do not ingest"
spans=$(q "$T/good/trace.db" "SELECT count(*) FROM span")

# broken HOW: a copy of the good logs with one (or each) log broken HOW.
broken() {
  rm -rf "$T/$1"
  cp -r "$T/good" "$T/$1"
  rm -f "$T/$1/trace.db" "$T/$1"/ranks/*
  for l in "$T/$1"/logs/*.cslog; do
    "$gen" --break "$1" "$l" > /dev/null || fail "log_gen --break $1 failed"
    [ "$2" = all ] || break
  done
}

broken comm-local one
"$COLLSCOPE" ingest "$T/comm-local" > "$T/c.out" 2> "$T/c.err"
st=$?
expect_eq "COMMDEF local near 2^32: exit status (stderr: $(cat "$T/c.err"))" $st 1
grep -q 'cslog: damaged log: .* damaged records' "$T/c.err" || fail "no message naming the log: $(cat "$T/c.err")"
expect_eq "COMMDEF local near 2^32: every span kept" "$(q "$T/comm-local/trace.db" "SELECT count(*) FROM span")" "$spans"

broken strings all
"$COLLSCOPE" ingest "$T/strings" > "$T/s.out" 2> "$T/s.err"
st=$?
expect_eq "header strings without NUL: exit status (stderr: $(cat "$T/s.err"))" $st 0
expect_eq "header strings without NUL: stored within their fields" \
  "$(q "$T/strings/trace.db" "SELECT DISTINCT length(host)||' '||length(exe)||' '||length(mpi)||' '||length(tool_version) FROM processes")" \
  "63 255 31 31"

broken slots one
"$COLLSCOPE" ingest "$T/slots" > "$T/k.out" 2> "$T/k.err"
st=$?
expect_eq "slots of an unknown kind: exit status (stderr: $(cat "$T/k.err"))" $st 1
grep -q 'cslog: damaged log: [0-9]* spans recovered; [0-9]* damaged slots' "$T/k.err" ||
  fail "no message naming the log: $(cat "$T/k.err")"
kept=$(q "$T/slots/trace.db" "SELECT count(*) FROM span")
[ "$kept" -gt $((spans / 2)) ] && [ "$kept" -lt "$spans" ] || fail "slots of an unknown kind: $kept of $spans spans kept"
echo "ok: $kept of $spans spans kept; $(cat "$T/k.err")"

# Clock points and span times at the ends of their types: times saturate
# (a sanitizer build of this test catches any overflow), every span kept.
broken times all
"$COLLSCOPE" ingest "$T/times" > "$T/m.out" 2> "$T/m.err"
st=$?
expect_eq "extreme times: exit status (stderr: $(cat "$T/m.err"))" $st 0
expect_eq "extreme times: every span kept" "$(q "$T/times/trace.db" "SELECT count(*) FROM span")" "$spans"
pass
