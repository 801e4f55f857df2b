#!/bin/sh
# run-tests.sh: collscope's test runner, called by `make check`.
# Each test runs in its own process group with a timeout. Exit 0 passes,
# 77 skips (the test prints its reason), anything else fails. The run ends
# with the line "N passed, N failed, N skipped" and exits non-zero when a
# test failed. Usage: run-tests.sh TEST...   (CS_TEST_FILTER=glob limits the set)
: "${CS_TEST_TIMEOUT:=600}"
logdir=${CS_TEST_LOGDIR:-tests/logs}
mkdir -p "$logdir"
pass=0; fail=0; skip=0; failed=
for t in "$@"; do
  name=$(basename "$t"); name=${name%.sh}
  case "$name" in ${CS_TEST_FILTER:-*}) ;; *) continue ;; esac
  if [ -f "$srcdir/$t" ]; then path="$srcdir/$t"; else path="./$t"; fi
  log="$logdir/$name.log"
  start=$(date +%s)
  case "$path" in
    *.sh) timeout -k 10 "$CS_TEST_TIMEOUT" sh "$path" >"$log" 2>&1 </dev/null ;;
    *)    timeout -k 10 "$CS_TEST_TIMEOUT" "$path" >"$log" 2>&1 </dev/null ;;
  esac
  rc=$?
  secs=$(( $(date +%s) - start ))
  if [ $rc -eq 0 ]; then
    pass=$((pass + 1)); echo "PASS: $name (${secs}s)"
  elif [ $rc -eq 77 ]; then
    skip=$((skip + 1)); echo "SKIP: $name: $(grep -i 'skip' "$log" | tail -n 1)"
  else
    fail=$((fail + 1)); failed="$failed $name"
    [ $rc -eq 124 ] && why="timed out after ${CS_TEST_TIMEOUT}s" || why="exit $rc"
    echo "FAIL: $name ($why, ${secs}s); last lines of $log:"
    tail -n 25 "$log" | sed 's/^/    | /'
  fi
done
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
