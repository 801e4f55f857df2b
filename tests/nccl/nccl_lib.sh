# tests/nccl/nccl_lib.sh: shared by the NCCL tests; source after tests/lib.sh.
# Sets SI (the stand-ins' folder), TRAINER, and the environment that makes
# Open MPI ranks load the stand-ins; provides run_trainer and check_all_counts.
SI=$B/tests/standins/.libs
TRAINER=$B/examples/nccl_trainer
# need_standins [PROG [VAR...]]: skip unless Open MPI, the stand-ins and
# PROG (default the trainer) are built; then make the ranks load the
# stand-ins (LD_LIBRARY_PATH, and each VAR, passed on to every rank).
need_standins() {
  need_mpi openmpi
  [ -e "$SI/libcudart.so.13" ] && [ -e "$SI/libnccl.so.2" ] || skip "CPU stand-ins not built (no NCCL headers or no Open MPI)"
  if [ $# -eq 0 ]; then
    [ -x "$TRAINER" ] || skip "examples/nccl_trainer not built (no nvcc)"
  else
    [ -x "$1" ] || skip "${1#"$B"/} not built (no NCCL headers or no Open MPI)"
    shift
  fi
  export LD_LIBRARY_PATH="$SI${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  _env=LD_LIBRARY_PATH
  for _v; do _env="$_env;$_v"; done
  export OMPI_MCA_mca_base_env_list="$_env"
}
# run_trainer DIR OUT ARGS...: the trainer on 4 ranks, traced into DIR
# (with the options in RUN_OPTS, if set).
run_trainer() {
  _d=$1; _o=$2; shift 2
  "$COLLSCOPE" run ${RUN_OPTS:-} -o "$_d" -- "$(mpirun_for openmpi)" -np 4 "$TRAINER" "$@" > "$_o" 2> "$_o.err" ||
    { tail -n 20 "$_o.err"; fail "traced nccl_trainer $* failed"; }
}
# check_all_counts OUTPUT DB: like check_counts, for every API (NCCL, CUDA, MPI).
check_all_counts() {
  grep -o 'calls: rank [0-9]*\( [A-Za-z_]*=[0-9]*\)*' "$1" > "$T/calls.txt" || fail "the program printed no 'calls:' line"
  _n=0
  while read -r _c _r _rank _rest; do
    _ops=0
    for _kv in $_rest; do
      _op=${_kv%%=*}; _want=${_kv#*=}
      _got=$(q "$2" "SELECT count(*) FROM spans WHERE rank=$_rank AND op='$_op'")
      [ "$_got" = "$_want" ] || fail "rank $_rank $_op: trace has $_got, program made $_want"
      _ops=$((_ops + 1)); _n=$((_n + _want))
    done
    _tops=$(q "$2" "SELECT count(DISTINCT op) FROM spans WHERE rank=$_rank")
    [ "$_tops" = "$_ops" ] || fail "rank $_rank: trace has $_tops distinct ops ($(q "$2" "SELECT group_concat(DISTINCT op) FROM spans WHERE rank=$_rank")), program counted $_ops"
  done < "$T/calls.txt"
  expect_eq "ranks that printed counts" "$(wc -l < "$T/calls.txt")" 4
  echo "ok: per-rank per-op counts match ($_n calls)"
}
