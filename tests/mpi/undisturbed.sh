#!/bin/sh
# The application is never disturbed: same output, return codes, errno and
# exit status, with an unwritable output folder, a full disk, an MPI library
# that lacks symbols, and a failing program. The tool says one line.
. "$srcdir/tests/lib.sh"
need_mpi openmpi
l=$(mpirun_for openmpi)
prog=$B/tests/mpi/errnorc_ompi
[ -x "$prog" ] || skip "errnorc_ompi not built"

"$l" -np 4 "$prog" > "$T/plain.out" 2> "$T/plain.err"
plain=$?
expect_eq "untraced exit status" $plain 3
sort "$T/plain.out" > "$T/plain.sorted"
grep -q 'bad send class=[1-9]' "$T/plain.sorted" || fail "the program did not see its MPI error: $(cat "$T/plain.sorted")"

# Traced normally: identical output (return codes, errno, statuses), same status.
"$COLLSCOPE" run -o "$T/ok" -- "$l" -np 4 "$prog" > "$T/ok.out" 2> "$T/ok.err"
expect_eq "traced exit status" $? 3
sort "$T/ok.out" | diff "$T/plain.sorted" - || fail "traced output differs"
expect_eq "failed calls recorded with their error flag" \
  "$(q "$T/ok/trace.db" "SELECT count(*) FROM spans WHERE op='MPI_Send' AND rc != 0 AND (flags & 64) != 0")" 4

# An output folder that cannot be created: the job runs untraced, one line.
"$COLLSCOPE" run -o /proc/collscope-no/out -- "$l" -np 4 "$prog" > "$T/nodir.out" 2> "$T/nodir.err"
expect_eq "unwritable folder: exit status" $? 3
sort "$T/nodir.out" | diff "$T/plain.sorted" - || fail "unwritable folder: output differs"
expect_eq "unwritable folder: collscope lines on stderr" "$(grep -c '^collscope:' "$T/nodir.err")" 1
grep -q '/proc/collscope-no/out' "$T/nodir.err" || fail "the message does not name the folder: $(cat "$T/nodir.err")"

# The preload alone with an unwritable COLLSCOPE_DIR: one line, not one per rank.
COLLSCOPE_DIR=/proc/collscope-no LD_PRELOAD=$COLLSCOPE_LIBDIR/collscope-openmpi.so \
  "$l" -np 4 "$prog" > "$T/pre.out" 2> "$T/pre.err"
expect_eq "preload, unwritable dir: exit status" $? 3
sort "$T/pre.out" | diff "$T/plain.sorted" - || fail "preload, unwritable dir: output differs"
expect_eq "preload, unwritable dir: collscope lines" "$(grep -c '^collscope:' "$T/pre.err")" 1

# A full disk, through the log's fault seam: every span is dropped and
# counted, the job does not notice.
COLLSCOPE_TEST_ENOSPC_AFTER=0 "$COLLSCOPE" run -o "$T/full" -- "$l" -np 4 "$prog" > "$T/full.out" 2> "$T/full.err"
expect_eq "full disk: exit status" $? 3
sort "$T/full.out" | diff "$T/plain.sorted" - || fail "full disk: output differs"
expect_eq "full disk: collscope warnings" "$(grep -c 'no space for the trace log' "$T/full.err")" 1
dropped=$(q "$T/full/trace.db" "SELECT sum(dropped) FROM processes")
[ "$dropped" -gt 0 ] || fail "full disk: no dropped spans counted"
echo "ok: full disk: $dropped spans dropped and counted"

# A real full file system, where this machine lets us mount a small tmpfs.
mkdir -p "$T/small"
if mount -t tmpfs -o size=128k tmpfs "$T/small" 2>/dev/null; then
  "$COLLSCOPE" run -o "$T/small/out" -- "$l" -np 4 "$prog" > "$T/small.out" 2> "$T/small.err"
  st=$?
  umount "$T/small"
  expect_eq "tmpfs full: exit status" $st 3
  sort "$T/small.out" | diff "$T/plain.sorted" - || fail "tmpfs full: output differs"
  echo "ok: a real 128 KiB tmpfs filled up without disturbing the job"
else
  echo "note: cannot mount a tmpfs here; the full-disk case ran through the fault seam only"
fi

# An MPI library lacking most symbols (a test-only stand-in named like
# MPICH): the program runs as without the preload.
if pkg-config --exists mpich && [ -f "$COLLSCOPE_LIBDIR/collscope-mpich.so" ]; then
  cf=$(pkg-config --cflags mpich)
  ${CC:-cc} -shared -fPIC $cf -o "$T/libmpich.so.12" -Wl,-soname,libmpich.so.12 "$S/tests/mpi/stubmpi.c" ||
    fail "cannot build the stub MPI"
  ${CC:-cc} $cf -o "$T/stubprog" "$S/tests/mpi/stubprog.c" "$T/libmpich.so.12" -Wl,-rpath,"$T" ||
    fail "cannot build the stub program"
  "$T/stubprog" > "$T/stub.plain" 2>&1 || fail "stub program failed untraced"
  "$COLLSCOPE" run --mpi mpich -o "$T/stub" -- "$T/stubprog" > "$T/stub.out" 2> "$T/stub.err"
  expect_eq "stub MPI: exit status" $? 0
  diff "$T/stub.plain" "$T/stub.out" || fail "stub MPI: output differs"
  expect_eq "stub MPI: allreduces traced" "$(q "$T/stub/trace.db" "SELECT count(*) FROM spans WHERE op='MPI_Allreduce'")" 11
  expect_eq "stub MPI: one warning about the missing functions" "$(grep -c 'lacks functions' "$T/stub.err")" 1
else
  echo "note: MPICH headers or preload missing; the missing-symbol case was not run"
fi
pass
