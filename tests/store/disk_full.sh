#!/bin/sh
# A full disk is told as such, once: `collscope run` on a 20 MB file system
# that the logs of a 2-rank job nearly fill says the disk holding DIR is
# full (SQLITE_FULL), that trace.db was not written, what was kept (the
# logs, the rank stores made) and that `collscope ingest DIR` builds the
# trace once there is space; never that a file is malformed (a rollback
# journal left by the failed write used to be played into the next file of
# that name), nor that no log could be converted. Once the file system
# grows, the ingest keeps every span of the job. Needs root (mount).
. "$srcdir/tests/lib.sh"
prog=$B/examples/mpi_trainer_ompi
[ -x "$prog" ] || skip "mpi_trainer_ompi not built"
need_mpi openmpi
mpirun=$(mpirun_for openmpi)
mkdir "$T/fs"
mount -t tmpfs -o size=20m tmpfs "$T/fs" 2> "$T/mount.err" || skip "cannot mount a tmpfs: $(cat "$T/mount.err")"
at_exit "umount '$T/fs'"
d=$T/fs/d
"$COLLSCOPE" run --mpi openmpi -o "$d" -- "$mpirun" -n 2 "$prog" --steps 3000 > "$T/job.out" 2> "$T/run.err"
expect_eq "run: the job's exit status" $? 0
grep '^collscope:' "$T/run.err" > "$T/msgs"
cat "$T/msgs"
expect_eq "one message" "$(wc -l < "$T/msgs")" 1
grep -qF "collscope: the disk holding $d is full (no space left on device, SQLITE_FULL): $d/trace.db not written; kept: the 2 process logs in $d/logs" "$T/msgs" ||
  fail "the message does not name the full disk and what was kept"
grep -qF "once there is space, \`collscope ingest $d\` builds the trace from them" "$T/msgs" ||
  fail "the message does not say how to build the trace"
grep -qi "malformed\|no log could be converted" "$T/run.err" && fail "a false message: $(cat "$T/run.err")"
[ -e "$d/trace.db" ] && fail "a trace.db was written"
expect_eq "no half-built trace left" "$(ls -a "$d" | grep -c 'trace\.db')" 0
expect_eq "the logs are kept" "$(ls "$d/logs" | grep -c '\.cslog$')" 2

# with space, the ingest builds the whole trace: every call the job counted
mount -o remount,size=120m "$T/fs" || fail "cannot grow the tmpfs"
"$COLLSCOPE" ingest "$d" > "$T/ingest.out" 2> "$T/ingest.err" || fail "ingest once there is space: $(cat "$T/ingest.err")"
want=$(sed -n 's/^calls: rank [0-9]* //p' "$T/job.out" | tr ' ' '\n' | sed -n 's/^[A-Za-z_]*=//p' | awk '{ s += $1 } END { print s }')
[ -n "$want" ] && [ "$want" -gt 0 ] || fail "the job did not count its calls: $(cat "$T/job.out")"
expect_eq "spans in the trace (the calls the job counted)" "$(q "$d/trace.db" "SELECT COUNT(*) FROM span")" "$want"
pass
