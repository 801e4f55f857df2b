#!/bin/sh
# collscope run writes and removes only inside its output folder, only its
# own files: DIR/ranks or DIR/logs planted as a symbolic link to another
# folder is refused (the job runs untraced, its exit status unchanged) and
# nothing in that folder is touched. An output folder of another user, or
# one every user may write to and not sticky, is refused unless --force.
. "$srcdir/tests/lib.sh"
prog=$B/examples/mpi_trainer_ompi
[ -x "$prog" ] || skip "mpi_trainer_ompi not built"
need_mpi openmpi
mpirun=$(mpirun_for openmpi)
"$mpirun" -n 2 "$prog" --steps 2 > /dev/null 2>&1
job_rc=$?

# victim: a folder of someone else's files with the names collscope cleans.
mkdir -p "$T/victim"
for f in a.db b.tmp c.cslog d.modules; do echo precious > "$T/victim/$f"; done
victim_ok() {
  for f in a.db b.tmp c.cslog d.modules; do
    [ "$(cat "$T/victim/$f" 2> /dev/null)" = precious ] || fail "$1: victim/$f was removed or changed"
  done
  [ "$(ls "$T/victim" | wc -l)" -eq 4 ] || fail "$1: files were written into the victim folder: $(ls "$T/victim")"
}
for sub in ranks logs; do
  mkdir -p "$T/out-$sub"
  ln -s "$T/victim" "$T/out-$sub/$sub"
  "$COLLSCOPE" run -o "$T/out-$sub" -- "$mpirun" -n 2 "$prog" --steps 2 > /dev/null 2> "$T/$sub.err"
  expect_eq "$sub/ planted as a link: the job's exit status" $? $job_rc
  victim_ok "$sub/ planted as a link"
  grep -q "$sub is not a folder (a symbolic link or a file)" "$T/$sub.err" ||
    fail "$sub/ planted as a link: no message: $(cat "$T/$sub.err")"
  echo "ok: $sub/ planted as a link: $(head -1 "$T/$sub.err")"
done
# ingest refuses the same.
mkdir -p "$T/ing/logs"
ln -s "$T/victim" "$T/ing/ranks"
"$COLLSCOPE" ingest "$T/ing" > /dev/null 2> "$T/ing.err"
expect_eq "ingest with ranks/ planted as a link: exit status" $? 1
victim_ok "ingest with ranks/ planted as a link"

# A folder every user may write to, not sticky: refused; sticky: accepted.
mkdir -p "$T/open"
chmod 0777 "$T/open"
"$COLLSCOPE" run -o "$T/open" -- "$mpirun" -n 2 "$prog" --steps 2 > /dev/null 2> "$T/open.err"
expect_eq "a folder writable by all: the job's exit status" $? $job_rc
grep -q 'writable by every user and not sticky' "$T/open.err" || fail "no refusal: $(cat "$T/open.err")"
[ ! -e "$T/open/trace.db" ] || fail "a folder writable by all was written to"
"$COLLSCOPE" run --force -o "$T/open" -- "$mpirun" -n 2 "$prog" --steps 2 > /dev/null 2> "$T/force.err" ||
  fail "run --force: $(cat "$T/force.err")"
[ -s "$T/open/trace.db" ] || fail "run --force made no trace: $(cat "$T/force.err")"
chmod 1777 "$T/open"
"$COLLSCOPE" run -o "$T/open" -- "$mpirun" -n 2 "$prog" --steps 2 > /dev/null 2> "$T/sticky.err" ||
  fail "a sticky folder: $(cat "$T/sticky.err")"
# Another user's folder (needs root to make one).
if [ "$(id -u)" = 0 ] && id nobody > /dev/null 2>&1; then
  mkdir -p "$T/theirs"
  chown nobody "$T/theirs"
  "$COLLSCOPE" run -o "$T/theirs" -- "$mpirun" -n 2 "$prog" --steps 2 > /dev/null 2> "$T/theirs.err"
  grep -q 'belongs to another user' "$T/theirs.err" || fail "another user's folder: $(cat "$T/theirs.err")"
  [ ! -e "$T/theirs/logs" ] || fail "another user's folder was written to"
  echo "ok: $(head -1 "$T/theirs.err")"
fi
# Nothing made is world-writable.
found=$(find "$T/open" -perm -o+w ! -path "$T/open" | head -3)
[ -z "$found" ] || fail "world-writable files made: $found"
pass
