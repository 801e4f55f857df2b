#!/bin/sh
# tests/run-one.sh: runs one test for automake's harness (LOG_COMPILER and
# SH_LOG_COMPILER in tests/local.mk):
#   run-one.sh [INTERPRETER...] TEST
# with no terminal input and a timeout of CS_TEST_TIMEOUT seconds (default
# 600) over the test's whole process group. A test named in
# CS_SERIAL_TESTS (paths relative to the source tree) runs while no other
# test does: it holds CS_TEST_LOCK exclusively, every other test holds it
# shared while it runs. Those tests judge a multi-rank job's timing:
# running alone spares them the suite's own load, but they hold on a
# loaded machine too (scripts/check-under-load.sh). A test runs once: a
# failure is a failure, never retried.
# Ends with "run-one: TEST: exit status N after Ks, C s of CPU" (the CPU
# time, user and system, of every process the test waited for, rounded
# up; tests/summary.sh reads both). Exit status: the test's (0 pass, 77 skip); 124 when it ran
# out of time.
: "${CS_TEST_TIMEOUT:=600}"
for t; do :; done # the test is the last argument
if [ -n "${CS_TEST_LOCK:-}" ] && command -v flock > /dev/null 2>&1 &&
  mkdir -p "$(dirname "$CS_TEST_LOCK")" && touch "$CS_TEST_LOCK" 2> /dev/null; then
  mode=-s
  for s in ${CS_SERIAL_TESTS:-}; do
    case $t in "$s" | */"$s") mode=-x ;; esac
  done
  exec 9>> "$CS_TEST_LOCK"
  if [ $mode = -x ]; then
    echo "run-one: $t runs alone (CS_SERIAL_TESTS): waiting for the other tests to end"
  fi
  flock $mode 9 || echo "run-one: cannot lock $CS_TEST_LOCK: running anyway"
fi
start=$(date +%s)
# The test must not hold the lock (fd 9) in processes that outlive it.
timeout -k 10 "$CS_TEST_TIMEOUT" "$@" < /dev/null 9>&-
rc=$?
[ $rc -eq 124 ] && echo "FAIL: $t timed out after ${CS_TEST_TIMEOUT}s"
wall=$(($(date +%s) - start))
# times: this shell's, then its children's user and system time (m s);
# read from a file, since a subshell (a pipe, $(...)) has its own
cpu=
if tf=$(mktemp "${TMPDIR:-/tmp}/cs-run-one.XXXXXX" 2> /dev/null); then
  times > "$tf"
  cpu=$(awk 'NR == 2 {
  n = split($0, f, /[ ms]+/); c = 0
  for (i = 1; i < n; i += 2) c += f[i] * 60 + f[i + 1]
  printf "%d", c + 0.999 }' "$tf")
  rm -f "$tf"
fi
echo "run-one: $t: exit status $rc after ${wall}s, ${cpu:-?} s of CPU"
exit $rc
