#!/bin/sh
# `collscope status` of a job whose processes are all gone reports it as
# ended at its last record: a rank's wait ends there, so two looks some
# seconds apart give the same wait (it used to keep growing with the wall
# clock), and the output says the processes are gone.
. "$srcdir/tests/lib.sh"
need_mpi openmpi
MPIRUN=$(mpirun_for openmpi)
PROG=$B/tests/progs/hang_ompi
[ -x "$PROG" ] || skip "$PROG not built"
d=$T/d
# rank 1 skips the allreduce at step 3 and waits in MPI_Recv; the others
# wait in the allreduce
"$COLLSCOPE" run -o "$d" -- timeout -s KILL 60 "$MPIRUN" -np 4 --oversubscribe "$PROG" --mode skip \
  > "$T/run.out" 2>&1 &
run=$!
at_exit "kill $run 2> /dev/null"
n=0 rc=0
while [ $n -lt 80 ]; do
  sleep 0.25
  n=$((n + 1))
  [ -d "$d/logs" ] || continue
  rc=0
  "$COLLSCOPE" status "$d" --after 2 --format json > "$T/live.json" 2> /dev/null || rc=$?
  [ $rc -eq 3 ] && grep -q missing_rank "$T/live.json" && break
done
[ $rc -eq 3 ] || fail "status never found the hang (exit $rc)"
# end the job as a scheduler does: every rank, by its pid
pids=$(/usr/bin/python3 -c 'import json,sys; print(" ".join(str(r["pid"]) for r in json.load(open(sys.argv[1]))["ranks"]))' "$T/live.json") ||
  fail "no pids in the status"
expect_eq "ranks in the status" "$(echo $pids | wc -w)" 4
kill -KILL $pids
wait $run

# wait of ranks 0,2,3 on rank 1, as the text says it
waited() { sed -n 's/^missing_rank: .*ranks 0,2,3 waiting \([0-9.]*\) s;.*/\1/p' "$1"; }
rc=0
"$COLLSCOPE" status "$d" --after 2 > "$T/post1" 2>&1 || rc=$?
expect_eq "post mortem status: exit status" $rc 3
sleep 3
rc=0
"$COLLSCOPE" status "$d" --after 2 > "$T/post2" 2>&1 || rc=$?
expect_eq "post mortem status again: exit status" $rc 3
w1=$(waited "$T/post1") w2=$(waited "$T/post2")
[ -n "$w1" ] || fail "no wait in the status: $(cat "$T/post1")"
expect_eq "the wait 3 s later (it ended with the job)" "$w2" "$w1"
grep -q "^  its processes are gone: the job ended at its last record, [0-9-]* [0-9:]* UTC" "$T/post2" ||
  fail "status does not say the processes are gone: $(cat "$T/post2")"
"$COLLSCOPE" status "$d" --after 2 --format json > "$T/post.json" 2> /dev/null
grep -q '"processes_gone": true, "ended_s_ago": [0-9.]*,' "$T/post.json" ||
  fail "JSON: processes_gone: $(head -c 300 "$T/post.json")"
grep -q '"processes_gone": false' "$T/live.json" || fail "a live job is said to be gone: $(cat "$T/live.json")"
pass
