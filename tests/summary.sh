#!/bin/sh
# tests/summary.sh: the summary of a `make check` run, printed after
# automake's own (tests/local.mk): for each failed test the last lines of
# its log, for each skipped one its reason, and last the line that CI
# reads: "N passed, N failed, N skipped".
#   summary.sh BASE...   (a test's path without its extension: tests/mpi/crash)
# Reads each test's BASE.trs and BASE.log; a test without a result counts
# as failed. The ten slowest tests are named with their wall and CPU
# times (the "exit status N after Ns, C s of CPU" line of
# tests/run-one.sh), then the sums of all the tests' times. Exit status 1 when a test failed.
pass=0 fail=0 skip=0 failed=
for b; do
  res=$(sed -n 's/^:test-result: *//p' "$b.trs" 2> /dev/null | head -n 1)
  case $res in
    PASS | XFAIL)
      pass=$((pass + 1))
      ;;
    SKIP)
      skip=$((skip + 1))
      echo "SKIP: $b: $(sed -n 's/^SKIP: //p' "$b.log" 2> /dev/null | tail -n 1)"
      ;;
    *)
      fail=$((fail + 1)) failed="$failed $b"
      echo "FAIL: $b (${res:-no result}); last lines of $b.log:"
      if [ -f "$b.log" ]; then tail -n 25 "$b.log" | sed 's/^/    | /'; else echo "    | (no log)"; fi
      ;;
  esac
done
# the ten slowest tests: wall seconds, CPU seconds (all its processes)
# and name, slowest first; then the sums (the CPU sum is what the suite
# asks of the cores, whatever ran beside what)
sl=$(mktemp "${TMPDIR:-/tmp}/cs-slowest.XXXXXX") || sl=
if [ -n "$sl" ]; then
  for b; do
    sed -n 's/^run-one: .*: exit status [0-9]* after \([0-9]*\)s\(, \([0-9]*\) s of CPU\)\{0,1\}$/\1 \3/p' "$b.log" 2> /dev/null |
      awk -v b="$b" '{ s += $1; c += $2; if ($2 == "") nc = 1 } END { if (NR) print s, (nc ? "?" : c), b }'
  done | sort -rn > "$sl"
  if [ -s "$sl" ]; then
    echo "slowest tests (wall, CPU of all its processes):"
    head -n 10 "$sl" | awk '{ printf "  %5d s  %5s s  %s\n", $1, $2, $3 }'
    awk '{ s += $1; c += $2 } END { printf "  %5d s  %5d s  all %d timed tests together\n", s, c, NR }' "$sl"
  fi
  rm -f "$sl"
fi
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
