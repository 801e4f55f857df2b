#!/bin/sh
# An interrupted import leaves nothing behind: SIGTERM during `collscope
# import -j 2` kills its workers and removes its temporary folder
# (DIR/.import-PID) before the signal ends it; an import killed outright
# (SIGKILL) takes its workers with it, and the next import into DIR
# removes the folder it left (and names it), even one whose pid a live
# process has taken since (DIR's lock says no import holds it), but never
# through a link.
. "$srcdir/tests/lib.sh"
GEN="$S/tests/import/kineto_gen.py"
/usr/bin/python3 "$GEN" "$T/in" --ranks 2 --steps 1500 > /dev/null || fail "kineto_gen failed"
# eight files to read (ranks 0 and 1 four times: the copies are read, then
# left out as ranks seen again), so that the readers take a while
for k in a b c; do cp "$T/in/rank0.json" "$T/in/rank0$k.json" && cp "$T/in/rank1.json" "$T/in/rank1$k.json"; done

# start_import SIG DIR: an import caught and frozen while its temporary
# folder exists, then ended by SIG (a wait for the folder, not a timing;
# tried again when the import was done before it was caught)
start_import() {
  for try in 1 2 3 4 5; do
    rm -rf "$2"
    "$COLLSCOPE" import -j 2 -o "$2" "$T/in" > "$T/imp.out" 2>&1 &
    pid=$!
    at_exit "kill -CONT $pid 2> /dev/null; kill -KILL $pid 2> /dev/null"
    while kill -0 $pid 2> /dev/null && [ ! -d "$2/.import-$pid" ]; do sleep 0.005; done
    kill -STOP $pid 2> /dev/null && [ -d "$2/.import-$pid" ] && break
    wait $pid
  done
  [ -d "$2/.import-$pid" ] || fail "the import was never caught with its temporary folder"
  kids=$(ps -o pid= --ppid $pid)
  kill -"$1" $pid
  kill -CONT $pid
  wait $pid
  st=$?
}

start_import TERM "$T/d"
expect_eq "import ended by SIGTERM: exit status" $st 143
expect_eq "no temporary folder left" "$(ls -a "$T/d" | grep -c '^\.import-')" 0
for k in $kids; do
  kill -0 $k 2> /dev/null && fail "worker $k still runs after the import ended"
done
echo "ok: its $(echo $kids | wc -w) worker(s) ended with it"

start_import KILL "$T/d"
expect_eq "import killed: exit status" $st 137
expect_eq "import killed: its temporary folder is left" "$(ls -a "$T/d" | grep -c '^\.import-')" 1
left=.import-$pid
mkdir "$T/d/.import-$$" && echo x > "$T/d/.import-$$/file-000000.db"
mkdir "$T/victim" && echo precious > "$T/victim/file-000000.db"
ln -s "$T/victim" "$T/d/.import-999999999"
"$COLLSCOPE" import --wait -j 2 -o "$T/d" "$T/in/rank0.json" "$T/in/rank1.json" > /dev/null 2> "$T/next.err" ||
  fail "the next import failed: $(cat "$T/next.err")"
grep -qF "import: $T/d/$left: removed: the temporary folder of an import that was killed" "$T/next.err" ||
  fail "the next import does not name what it removed: $(cat "$T/next.err")"
[ -e "$T/d/$left" ] && fail "the killed import's folder is still there"
[ -e "$T/d/.import-$$" ] && fail "a folder whose pid runs (not an import) is still there"
expect_eq "the link is kept, its target untouched" "$(cat "$T/victim/file-000000.db")" precious
[ -L "$T/d/.import-999999999" ] || fail "the link was removed"
[ -f "$T/d/trace.db" ] || fail "no trace after the next import"
pass
