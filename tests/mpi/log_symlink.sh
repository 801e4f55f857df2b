#!/bin/sh
# The preload creates its log as a new file and never follows a link:
# logs/HOST-PID.cslog planted as a symbolic link to a victim file (two ranks
# aliased to one victim) leaves the victim untouched, the job's exit status
# unchanged, and says once that the log could not be made.
. "$srcdir/tests/lib.sh"
prog=$B/examples/mpi_trainer_ompi
[ -x "$prog" ] || skip "mpi_trainer_ompi not built"
need_mpi openmpi
mpirun=$(mpirun_for openmpi)
"$mpirun" -n 2 "$prog" --steps 3 > /dev/null 2>&1
job_rc=$?
echo precious > "$T/victim"
host=$(hostname | cut -c1-63)
# Each rank plants the link under its own name, then becomes the program
# (exec keeps the process id the log is named by).
cat > "$T/plant.sh" << EOS
#!/bin/sh
ln -s "$T/victim" "$T/out/logs/$host-\$\$.cslog"
exec "$prog" --steps 3
EOS
chmod +x "$T/plant.sh"
"$COLLSCOPE" run -o "$T/out" -- "$mpirun" -n 2 "$T/plant.sh" > "$T/run.out" 2> "$T/run.err"
expect_eq "the job's exit status (stderr: $(cat "$T/run.err"))" $? $job_rc
expect_eq "the victim" "$(cat "$T/victim")" precious
grep -q 'cannot create trace log .*: a file of that name is already there; the job runs untraced' "$T/run.err" ||
  fail "no warning: $(cat "$T/run.err")"
n=$(grep -c 'cannot create trace log' "$T/run.err")
expect_eq "one warning per job" "$n" 1
pass
