# verdicts_nb.inc.sh: the straggler cases of verdicts.inc.sh again, on
# code in the style of real training loops: the example trainer with
# nonblocking bucket allreduces (MPI_Iallreduce per bucket, one
# MPI_Waitall), with step markers and without (--no-pcontrol), 4 ranks
# under one MPI ($CS_MPI), every run with clock offsets of up to +-50 ms. A fixed delay on
# one rank every step is a persistent straggler (cost within 10 % of the
# delay), a delay in a window of steps a transient one with that window
# (+-1 step), a slow point-to-point pair a slow link between them, a clean
# run has no verdict, and a slow communicator a slow link on it that blames
# no rank. The steps of nonblocking code without markers come from the
# period of its call sequence. Sourced by verdicts_nb_ompi.sh and
# verdicts_nb_mpich.sh.
need_mpi "$CS_MPI"
MPIRUN=$(mpirun_for "$CS_MPI")
case $CS_MPI in openmpi) TRAINER="$B/examples/mpi_trainer_ompi" ;; *) TRAINER="$B/examples/mpi_trainer_mpich" ;; esac
[ -x "$TRAINER" ] || skip "$TRAINER not built"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
# As in verdicts.inc.sh: 100 ms effects stay clear of the scheduler slices
# (4 ms) that 4 ranks on 2 cores lose.
DELAY=100000
STEPS=20; WIN_A=7; WIN_B=13
COMMON="--steps $STEPS --compute-us 500 --buckets 2 --nonblocking"
MARK=--no-pcontrol
OFFSETS="1:50000000,2:-50000000,3:25000000"

# trace NAME ARGS...: the trainer traced into $T/NAME, the report's JSON in $T/NAME.json
trace() {
  _n=$1; shift
  COLLSCOPE_TEST_CLOCK_OFFSET="$OFFSETS" "$COLLSCOPE" run -o "$T/$_n" -- "$MPIRUN" -np 4 "$TRAINER" $COMMON $MARK "$@" \
    >"$T/$_n.out" 2>&1 || fail "$_n: traced run failed (see $T/$_n.out)"
  "$COLLSCOPE" report "$T/$_n" --format json -o "$T/$_n.json" || fail "$_n: report failed"
}
# verdicts NAME: one line per verdict, "kind rank src dst first last cost_ns comm"
verdicts() {
  "$PY" -c 'import json,sys
d=json.load(open(sys.argv[1]))
for s in d["stragglers"]:
    print(s["kind"], s["rank"], s["src"], s["dst"], s["first_step"], s["last_step"], s["cost_ns"], s["comm"])' "$T/$1.json"
}
# steps NAME: the steps the report found
steps() {
  "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["steps"]["count"])' "$T/$1.json"
}

persistent() {
  trace $M-pers --delay-us $DELAY --delay-ranks 2
  v=$(verdicts $M-pers)
  echo "$v" | grep -q '^persistent 2 ' || fail "$M: persistent: no persistent straggler 2 ($(steps $M-pers) steps): [$v]"
  [ "$(echo "$v" | grep -c .)" = 1 ] || fail "$M: persistent: more than one verdict: [$v]"
  cost=$(echo "$v" | awk '$1 == "persistent" { print $7 }')
  [ "$cost" -ge $((DELAY * 900)) ] && [ "$cost" -le $((DELAY * 1100)) ] ||
    fail "$M: persistent: cost $cost ns not within 10 % of $DELAY us"
  echo "ok: $M: persistent straggler 2, cost $cost ns"
}
transient() {
  trace $M-trans --delay-us $DELAY --delay-ranks 1 --delay-steps $WIN_A-$WIN_B
  v=$(verdicts $M-trans)
  line=$(echo "$v" | grep '^transient 1 ') || fail "$M: transient: no transient straggler 1 ($(steps $M-trans) steps): [$v]"
  [ "$(echo "$v" | grep -c .)" = 1 ] || fail "$M: transient: more than one verdict: [$v]"
  set -- $line
  [ "$5" -ge $((WIN_A - 1)) ] && [ "$5" -le $((WIN_A + 1)) ] && [ "$6" -ge $((WIN_B - 1)) ] && [ "$6" -le $((WIN_B + 1)) ] ||
    fail "$M: transient: window $5-$6, want $WIN_A-$WIN_B"
  echo "ok: $M: transient straggler 1, steps $5-$6"
}
link() {
  COLLSCOPE_TEST_P2P_DELAY=1:2:$DELAY trace $M-link --halo
  v=$(verdicts $M-link)
  echo "$v" | grep -q '^slow_link 1 1 2 ' || fail "$M: link: no slow link 1 -> 2 ($(steps $M-link) steps): [$v]"
  echo "$v" | grep -qv '^slow_link' && fail "$M: link: a slow link gave other verdicts too: [$v]"
  echo "ok: $M: slow link 1 -> 2"
}
clean() {
  trace $M-clean $HALO
  v=$(verdicts $M-clean)
  [ -z "$(beyond_noise "$v")" ] || fail "$M: clean: a clean run got a verdict ($(steps $M-clean) steps): [$v]"
  echo "ok: $M: clean run, no verdict"
}
comm() {
  # the communicator of local index 5 (ranks 0 and 1) stalls DELAY in each
  # of its blocking collectives (verdicts.inc.sh)
  COLLSCOPE_TEST_COMM_DELAY=5:$DELAY trace $M-comm --split
  half=$(q "$T/$M-comm/trace.db" "SELECT DISTINCT id FROM comms WHERE local = 5")
  [ -n "$half" ] && [ "$(echo "$half" | grep -c .)" = 1 ] || fail "$M: comm: no single communicator with local index 5: [$half]"
  v=$(verdicts $M-comm)
  line=$(echo "$v" | grep "^slow_link -1 -1 -1 .* $half\$") || fail "$M: comm: no slow link on communicator $half ($(steps $M-comm) steps): [$v]"
  [ "$(echo "$v" | grep -c '^slow_link')" = 1 ] || fail "$M: comm: more than one slow link for one slow communicator: [$v]"
  echo "$v" | grep -Eq '^(persistent|transient|recurring) ' && fail "$M: comm: a slow communicator blamed a rank: [$v]"
  set -- $line
  [ "$7" -ge $((DELAY * 900)) ] && [ "$7" -le $((DELAY * 2200)) ] ||
    fail "$M: comm: slow link cost $7 ns per step, want between 0.9 and 2.2 x $DELAY us"
  echo "ok: $M: slow link on communicator $half, cost $7 ns per step"
}

# First with step markers (MPI_Pcontrol), then without: the steps come from
# the period of the call sequence, and the clocks (offsets of +-50 ms) are
# aligned on the nonblocking collectives' starts and completions, so that a
# slow link's one-way delay is not read as an offset. VNB_MODES picks the
# passes (verdicts_nb_mpich.sh: without markers only, the harder case;
# the markers' path is the same analysis under both MPIs).
for M in ${VNB_MODES:-markers nomark}; do
  if [ $M = markers ]; then MARK=--pcontrol; else MARK=--no-pcontrol; fi
  HALO=--halo
  # with markers, the cases whose steps come from them; the slow link and
  # the slow communicator are the same analysis either way and run in
  # the pass without markers (and with markers in verdicts_*.sh)
  cases=${VNB_CASES:-persistent transient link clean comm}
  [ $M = markers ] && [ -z "${VNB_CASES:-}" ] && cases="persistent transient clean"
  for c in $cases; do
    $c
  done
done
pass
