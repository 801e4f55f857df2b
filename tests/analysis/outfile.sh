#!/bin/sh
# The commands' output files (-o): report, diff and export write a new file
# beside the path and rename it into place, so a symlink planted at the
# path is refused and its target left alone, a folder or a device is
# refused, a write that fails leaves no file, and "-" is standard output.
. "$srcdir/tests/lib.sh"
GEN=$B/bench/gen_trace
[ -x "$GEN" ] || fail "bench/gen_trace not built"
"$GEN" "$T/a.db" --ranks 4 --steps 20 > /dev/null || fail "gen_trace failed"
"$GEN" "$T/b.db" --ranks 4 --steps 20 --persistent 2:5000 > /dev/null || fail "gen_trace failed"
echo "precious" > "$T/victim"

# refused: a symlink at the path (its target unchanged), a folder, a device
for cmd in "report $T/a.db" "diff $T/a.db $T/b.db" "export $T/a.db"; do
  name=${cmd%% *}
  ln -s "$T/victim" "$T/link-$name"
  # shellcheck disable=SC2086
  "$COLLSCOPE" $cmd -o "$T/link-$name" > "$T/out" 2> "$T/err" && fail "$name -o through a symlink: exit 0"
  grep -q "symbolic link" "$T/err" || fail "$name: no message about the link: $(cat "$T/err")"
  [ "$(cat "$T/victim")" = precious ] || fail "$name wrote through the symlink"
  [ "$(grep -c . "$T/err")" = 1 ] || fail "$name: want one message, got: $(cat "$T/err")"
  mkdir "$T/dir-$name"
  # shellcheck disable=SC2086
  "$COLLSCOPE" $cmd -o "$T/dir-$name" > "$T/out" 2> "$T/err" && fail "$name -o onto a folder: exit 0"
  grep -q "is a folder" "$T/err" || fail "$name: no message about the folder: $(cat "$T/err")"
  if [ -w /dev/full ]; then
    # shellcheck disable=SC2086
    "$COLLSCOPE" $cmd -o /dev/full > "$T/out" 2> "$T/err" && fail "$name -o /dev/full: exit 0"
    grep -q "not a regular file" "$T/err" || fail "$name: /dev/full: $(cat "$T/err")"
  fi
  echo "ok: $name refuses a symlink, a folder and a device at -o"
done
ls "$T" | grep -q 'tmp' && fail "a temporary output file was left behind: $(ls "$T")"

# written: a new file, and over an older regular file; "-" is stdout
"$COLLSCOPE" report "$T/a.db" -o "$T/r.txt" > /dev/null || fail "report -o failed"
grep -q "Per op" "$T/r.txt" || fail "report -o: no report in the file"
echo old > "$T/r2.txt"
"$COLLSCOPE" report "$T/a.db" --format json -o "$T/r2.txt" > /dev/null || fail "report -o over a file failed"
"$PYTHON3" -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/r2.txt" || fail "report -o over a file: not JSON"
"$COLLSCOPE" report "$T/a.db" -o - > "$T/r3.txt" || fail "report -o - failed"
cmp -s "$T/r.txt" "$T/r3.txt" || fail "report -o - differs from the file"
[ -e ./- ] && fail "report -o - made a file named '-'"
"$COLLSCOPE" diff "$T/a.db" "$T/b.db" -o "$T/d.txt" > /dev/null || fail "diff -o failed"
[ -s "$T/d.txt" ] || fail "diff -o: empty file"
mode=$(stat -c %a "$T/r.txt")
[ "$mode" = 644 ] || [ "$mode" = 640 ] || [ "$mode" = 600 ] || fail "report -o: mode $mode, want the umask's"
echo "ok: report and diff write their files, over older ones, and to stdout with -o -"
pass
