#!/bin/sh
# A log cut short anywhere after its header: ingest keeps every span up to
# the cut, and says which log, how many spans were recovered and how much is
# missing, with exit status 1; the process row notes the damage. A log cut
# only in space it never used loses nothing and is whole.
. "$srcdir/tests/lib.sh"
gen=$B/bench/log_gen
[ -x "$gen" ] || skip "log_gen not built"
"$gen" -o "$T/good" -r 2 -n 300 > /dev/null || fail "cannot write logs"
"$COLLSCOPE" ingest "$T/good" > /dev/null 2>&1 || fail "the good logs do not ingest"
spans=$(q "$T/good/trace.db" "SELECT count(*) FROM span")
for cut in $((4096 + 64 * 150 + 17)) $((4096 + 64 * 300)) 4096; do
  rm -rf "$T/t"
  cp -r "$T/good" "$T/t"
  log=$(ls "$T"/t/logs/*.cslog | head -1)
  truncate -s $cut "$log"
  "$COLLSCOPE" ingest --force "$T/t" > "$T/i.out" 2> "$T/i.err"
  st=$?
  expect_eq "log cut at $cut bytes: exit status (stderr: $(cat "$T/i.err"))" $st 1
  grep -q "$(basename "$log"): damaged log: [0-9]* spans recovered; cut short: [0-9]* KiB" "$T/i.err" ||
    fail "cut at $cut: no message naming the log and what was lost: $(cat "$T/i.err")"
  kept=$(q "$T/t/trace.db" "SELECT count(*) FROM span")
  [ "$kept" -lt "$spans" ] || fail "cut at $cut: $kept spans of $spans"
  q "$T/t/trace.db" "SELECT note FROM processes" | grep -q 'log damaged: cut short' ||
    fail "cut at $cut: the process row does not note the damage"
  echo "ok: cut at $cut: $kept of $spans spans; $(cat "$T/i.err")"
done
# Reserved space past every claimed chunk is no loss.
rm -rf "$T/t"
cp -r "$T/good" "$T/t"
log=$(ls "$T"/t/logs/*.cslog | head -1)
truncate -s $((4096 + 64 * 1024 * 4)) "$log"
"$COLLSCOPE" ingest --force "$T/t" > /dev/null 2> "$T/u.err" || fail "a log cut in unused space: $(cat "$T/u.err")"
expect_eq "a log cut in unused space: every span" "$(q "$T/t/trace.db" "SELECT count(*) FROM span")" "$spans"
pass
