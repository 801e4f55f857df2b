#!/bin/sh
# tests/fuzz/run.sh: build the libFuzzer targets with clang under ASan and
# UBSan and run each (`make fuzz`, scripts/setup.sh test).
#   run.sh --src DIR --build DIR [--seconds S] [--seed N] [--build-only] [TARGET...]
# --build is the clang tree (configured here on first use). Per target:
# the fuzzing for S seconds (default 60; --seed 0: libFuzzer picks one),
# its new inputs in BUILD/corpus/TARGET, a crash's input in
# BUILD/artifacts/TARGET/ (fork mode: the run goes on after a crash);
# then the replay (-runs=0) of the committed corpus and crash files. A
# crash whose report contains the signature of a line of
# tests/fuzz/known-crashes is a known fault: skipped with its reason. Each run and each replay is one result; the last line is
# "fuzz: N passed, N failed, N skipped". Exit 1 when one failed.
# --build-only: configure and build the targets, nothing else (setup.sh
# builds them while the suite runs). CS_FUZZ_PAR: how many targets fuzz at
# once (default: the cores).
set -u
src= build= seconds=60 seed=0 targets= build_only=0
while [ $# -gt 0 ]; do
  case $1 in
    --src) src=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --build-only) build_only=1; shift ;;
    -*) echo "usage: run.sh --src DIR --build DIR [--seconds S] [--seed N] [--build-only] [TARGET...]" >&2; exit 2 ;;
    *) targets="$targets $1"; shift ;;
  esac
done
[ -n "$src" ] && [ -n "$build" ] || { echo "run.sh: --src and --build are needed" >&2; exit 2; }
[ -n "$targets" ] || targets="log store report_opts kineto live"
case $seconds in '' | *[!0-9]*) echo "run.sh: --seconds '$seconds' is not a number of seconds" >&2; exit 2 ;; esac
case $seed in '' | *[!0-9]*) echo "run.sh: --seed '$seed' is not a number" >&2; exit 2 ;; esac
pass=0 fail=0 skip=0
known=$src/tests/fuzz/known-crashes
finish() {
  echo "fuzz: $pass passed, $fail failed, $skip skipped"
  [ $fail -eq 0 ]
  exit $?
}

# A known fault: the crash report in LOG (the sanitizer's or libFuzzer's)
# contains the signature of an entry of TARGET (a source line of a frame,
# "store_import.c:506", or words of the summary line). Prints the
# entry's reason.
known_reason() {
  _t=$1 _log=$2
  [ -f "$known" ] || return 1
  grep -qE 'ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|SUMMARY: ' "$_log" || return 1
  _r=$(grep -v '^#' "$known" | while IFS='|' read -r _f _sig _why; do
    _f=$(echo "$_f" | tr -d ' ') _sig=$(echo "$_sig" | sed 's/^ *//; s/ *$//')
    case $_f in "$_t"/*) ;; *) continue ;; esac
    [ -n "$_sig" ] && grep -qF -- "$_sig" "$_log" && { echo "$_why" | sed 's/^ *//'; exit 0; }
  done)
  [ -n "$_r" ] && echo "$_r"
}
# Is FILE (TARGET/crashes/NAME) listed as known? Prints its reason.
known_file() {
  [ -f "$known" ] || return 1
  grep -v '^#' "$known" | while IFS='|' read -r _f _sig _why; do
    [ "$(echo "$_f" | tr -d ' ')" = "$1" ] && { echo "$_why" | sed 's/^ *//'; exit 0; }
  done | grep .
}

if ! command -v clang > /dev/null 2>&1; then
  echo "SKIP: fuzz: clang is not installed (Debian: clang, libclang-rt-14-dev)"
  skip=$((skip + 1))
  finish
fi
probe=$(mktemp -d "${TMPDIR:-/tmp}/cs-fuzzprobe.XXXXXX")
printf '#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }\n' > "$probe/p.c"
if ! clang -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" > "$probe/log" 2>&1; then
  rm -rf "$probe"
  echo "SKIP: fuzz: clang cannot link libFuzzer (Debian: libclang-rt-14-dev)"
  skip=$((skip + 1))
  finish
fi
rm -rf "$probe"

mkdir -p "$build" || exit 1
cd "$build" || exit 1
if [ ! -f Makefile ] || [ "$src/configure" -nt config.status ]; then
  echo "== fuzz: configuring $build (clang, ASan, UBSan, libFuzzer)"
  "$src/configure" --quiet CC=clang \
    CFLAGS="-g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all" \
    --without-mpi --without-cuda --without-nccl --without-cupti --without-papi --without-libunwind > configure.out 2>&1 ||
    { tail -n 20 configure.out; echo "FAIL: fuzz: configure failed in $build"; fail=$((fail + 1)); finish; }
fi
progs=
for t in $targets; do progs="$progs tests/fuzz/fuzz_$t"; done
echo "== fuzz: building$progs"
if ! make -j"${CS_JOBS:-2}" --no-print-directory libtrace/ops.gen.h libtrace/ops.gen.c > build.out 2>&1 ||
  ! make -j"${CS_JOBS:-2}" --no-print-directory $progs >> build.out 2>&1; then
  tail -n 30 build.out
  echo "FAIL: fuzz: the targets do not build (log: $build/build.out)"
  fail=$((fail + 1))
  finish
fi
[ "$build_only" = 0 ] || finish

# libFuzzer's options common to every run: a stuck input fails after 25 s,
# memory is capped, the target's own output is silenced (the sanitizers'
# reports still come through).
opts="-timeout=25 -rss_limit_mb=2560 -malloc_limit_mb=2048 -close_fd_mask=3 -print_final_stats=1"
# The fuzzing runs first, CS_FUZZ_PAR of them at a time (default: the
# cores; each target's run is one process busy on one core), then each
# target's results and replay in turn.
par=${CS_FUZZ_PAR:-$(nproc 2> /dev/null || echo 1)}
case $par in '' | *[!0-9]* | 0) par=1 ;; esac
if [ "$seconds" -gt 0 ]; then
  n=0
  for t in $targets; do
    prog=$build/tests/fuzz/fuzz_$t
    work=$build/corpus/$t art=$build/artifacts/$t/
    mkdir -p "$work" "$art"
    # Fork mode, going on after a crash: a known fault does not end the
    # run; each input it saved is then replayed and sorted, known or new.
    rm -f "$art"crash-* "$art"oom-* "$art"timeout-* "$art"leak-*
    echo "== fuzz: $t for ${seconds} s (seed $seed)"
    "$prog" $opts -fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 -seed="$seed" \
      -max_total_time="$seconds" -artifact_prefix="$art" "$work" "$src/tests/fuzz/$t/corpus" \
      > "$build/fuzz-$t.log" 2>&1 &
    n=$((n + 1))
    [ $n -lt "$par" ] || { wait; n=0; }
  done
  wait
fi
for t in $targets; do
  prog=$build/tests/fuzz/fuzz_$t
  work=$build/corpus/$t art=$build/artifacts/$t/
  mkdir -p "$work" "$art"
  if [ "$seconds" -gt 0 ]; then
    log=$build/fuzz-$t.log
    runs=$(sed -n 's/^#\([0-9]*\): cov.*/\1/p' "$log" | tail -n 1)
    new= nknown=0 why1=
    for a in "$art"crash-* "$art"oom-* "$art"timeout-* "$art"leak-*; do
      [ -f "$a" ] || continue
      "$prog" $opts -runs=0 "$a" > "$a.log" 2>&1 && continue # did not crash again
      if why=$(known_reason "$t" "$a.log"); then
        nknown=$((nknown + 1)) why1=$why
      else
        new="$new $a"
      fi
    done
    # (In fork mode the exit status is that of the last crash ignored: a
    # run that fuzzed is one with executions.)
    if [ -z "$runs" ] || [ -n "$new" ]; then
      echo "FAIL: fuzz: $t: ${runs:-?} executions in ${seconds} s; new crashes (inputs, their logs *.log):$new"
      for a in $new; do grep -E '^(SUMMARY|==[0-9]+==ERROR)|runtime error' "$a.log" | head -n 3 | sed 's/^/    | /'; done
      [ -n "$runs" ] || tail -n 5 "$log" | sed 's/^/    | /'
      fail=$((fail + 1))
    elif [ $nknown -gt 0 ]; then
      echo "SKIP: fuzz: $t: ${runs:-?} executions in ${seconds} s; $nknown inputs hit known faults only: $why1"
      skip=$((skip + 1))
    else
      echo "PASS: fuzz: $t: ${runs:-?} executions in ${seconds} s, no crash"
      pass=$((pass + 1))
    fi
  fi
  # The replay: every committed corpus file and every crash file not listed
  # as known, each once.
  files=
  for f in "$src/tests/fuzz/$t/corpus"/* "$src/tests/fuzz/$t/crashes"/*; do
    [ -f "$f" ] || continue
    case $f in */crashes/*) known_file "$t/crashes/${f##*/}" > /dev/null && continue ;; esac
    files="$files $f"
  done
  if [ -z "$files" ]; then
    echo "SKIP: fuzz: $t: no corpus file to replay"
    skip=$((skip + 1))
    continue
  fi
  # Each file alone, so that one known fault hides no other file.
  nf=0 nknown=0 bad= why1=
  for f in $files; do
    log=$build/replay-$t.log
    nf=$((nf + 1))
    "$prog" $opts -runs=0 "$f" > "$log" 2>&1 && continue
    if why=$(known_reason "$t" "$log"); then
      nknown=$((nknown + 1)) why1=$why
      continue
    fi
    bad="$bad $f"
    echo "FAIL: fuzz: $t: the replay of $f crashed:"
    grep -E '^(SUMMARY|==[0-9]+==ERROR)|runtime error' "$log" | head -n 5 | sed 's/^/    | /'
    cp "$log" "$build/replay-$t-failed.log"
  done
  if [ -n "$bad" ]; then
    fail=$((fail + 1))
  elif [ $nknown -gt 0 ]; then
    echo "SKIP: fuzz: $t: the replay of $nf files: $nknown hit a known fault: $why1"
    skip=$((skip + 1))
  else
    echo "PASS: fuzz: $t: the replay of $nf corpus and crash files"
    pass=$((pass + 1))
  fi
done
finish
