#!/bin/sh
# The fuzz targets' committed inputs replayed (tests/fuzz/TARGET/corpus and
# crashes), each file once through replay_TARGET (built with the normal
# compiler; `make fuzz` does the same under libFuzzer and the
# sanitizers): every file must be handled without a crash, a hang (30 s)
# or an exit other than 0. Crash files of faults not fixed yet are listed
# in tests/fuzz/known-crashes and skipped with their reason.
. "$srcdir/tests/lib.sh"
known=$S/tests/fuzz/known-crashes
n=0 nknown=0
for t in log store report_opts kineto live; do
  prog=$B/tests/fuzz/replay_$t
  [ -x "$prog" ] || fail "tests/fuzz/replay_$t not built"
  for f in "$S/tests/fuzz/$t/corpus"/* "$S/tests/fuzz/$t/crashes"/*; do
    [ -f "$f" ] || continue
    rel=$t/${f#"$S/tests/fuzz/$t/"}
    why=$(grep -v '^#' "$known" | while IFS='|' read -r _f _sig _why; do
      [ "$(echo "$_f" | tr -d ' ')" = "$rel" ] && echo "$_why" | sed 's/^ *//'
    done)
    if [ -n "$why" ]; then
      echo "known: $rel: $why"
      nknown=$((nknown + 1))
      continue
    fi
    TMPDIR=$T timeout -k 5 30 "$prog" "$f" > "$T/out" 2>&1
    rc=$?
    n=$((n + 1))
    [ $rc -eq 0 ] && continue
    # A sanitizer build: a report of a known fault (its signature, a
    # frame's source line) is that fault, not a new one.
    why=$(grep -v '^#' "$known" | while IFS='|' read -r _f _sig _why; do
      _sig=$(echo "$_sig" | sed 's/^ *//; s/ *$//')
      case $(echo "$_f" | tr -d ' ') in "$t"/*) ;; *) continue ;; esac
      [ -n "$_sig" ] && grep -qF -- "$_sig" "$T/out" && { echo "$_why" | sed 's/^ *//'; break; }
    done)
    if [ -n "$why" ] && grep -qE 'runtime error|ERROR: AddressSanitizer' "$T/out"; then
      echo "known: $rel hits: $why"
      nknown=$((nknown + 1))
      continue
    fi
    tail -n 20 "$T/out"
    fail "$rel: replay_$t exited $rc"
  done
done
[ $n -gt 0 ] || fail "no corpus file found under $S/tests/fuzz"
echo "ok: $n inputs replayed, $nknown known faults skipped"
pass
