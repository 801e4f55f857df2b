# tests/lib.sh: helpers for collscope's shell tests. Source it first:
#   . "$srcdir/tests/lib.sh"
# Provides: $B (abs build dir), $S (abs source dir), $COLLSCOPE (the command),
# $T (a fresh temporary directory, removed when the test passes or skips,
# kept for a look when it fails), and the functions pass, skip, fail, check,
# expect_eq, at_exit, q (sqlite query), mpirun_for, need_mpi.
# A test ends with `pass` (exit 0) or `skip REASON` (exit 77); a script that
# reaches its end, or exits 0, without calling either fails: a test whose
# last lines were cut, or that returned early, must not pass unnoticed.
set -u
S=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${abs_top_builddir:-$S}
COLLSCOPE="$B/analyzer/collscope"
export COLLSCOPE_LIBDIR="${COLLSCOPE_LIBDIR:-$B/interpose/.libs}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
# Keep Open MPI away from network interfaces it cannot use in a sandbox.
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_plm_rsh_agent=
export HYDRA_LAUNCHER=fork
# MPICH's waiting ranks spin (ch4:ucx never yields): every process of a
# test preloads tests/progs/idle_sleep.c, which makes a rank that has
# polled without progress for 100 us sleep 20 us per idle poll (only
# MPICH's ranks call what it wraps). Not with a sanitizer's runtime
# (ASAN_OPTIONS set: its preload must come first) nor with
# CS_NO_IDLE_SLEEP=1.
_cs_idle=$B/tests/progs/.libs/idle_sleep.so
if [ -z "${CS_NO_IDLE_SLEEP:-}" ] && [ -z "${ASAN_OPTIONS:-}" ] && [ -r "$_cs_idle" ]; then
  export LD_PRELOAD="$_cs_idle${LD_PRELOAD:+:$LD_PRELOAD}"
fi
# The work folder is named after the script, or after CS_TEST_NAME when
# the script sets it before sourcing this file (two scripts of one name
# in different folders: tests/mpi/fuse_guard.sh, tests/nccl/fuse_guard.sh).
_cs_name=${CS_TEST_NAME:-$(basename "$0" .sh)}
unset CS_TEST_NAME
T=$(mktemp -d "${TMPDIR:-/tmp}/cs-$_cs_name.XXXXXX")
_cs_ok=0
_cs_at_exit=
# at_exit COMMAND: run COMMAND (shell code) when the test ends, however it ends.
at_exit() { _cs_at_exit="$_cs_at_exit
$*"; }
_cs_exit() {
  _cs_rc=$1
  trap - EXIT
  eval "$_cs_at_exit"
  if [ "$_cs_rc" = 0 ] && [ $_cs_ok != 1 ]; then
    echo "FAIL: the test ended without calling pass or skip" >&2
    _cs_rc=1
  fi
  if [ $_cs_ok = 1 ]; then
    chmod -R u+rwX "$T" 2> /dev/null # folders a test made read-only
    rm -rf "$T"
  else
    echo "(work files kept in $T)" >&2
  fi
  exit "$_cs_rc"
}
trap '_cs_exit $?' EXIT
trap '_cs_exit 129' HUP
trap '_cs_exit 130' INT
trap '_cs_exit 143' TERM

skip() { echo "SKIP: $*"; _cs_ok=1; exit 77; }
fail() { echo "FAIL: $*" >&2; _cs_ok=0; exit 1; }
# kill_ranks DIR: SIGKILL the ranks of the job traced into DIR, by the
# pids `collscope status` reads from its logs: never another test's
# processes of the same program (tests run side by side: pkill -x by name
# once ended other tests' jobs).
kill_ranks() {
  _kr=$("$COLLSCOPE" status "$1" --format json 2> /dev/null | /usr/bin/python3 -c '
import json, sys
try:
    print(" ".join(str(r["pid"]) for r in json.load(sys.stdin)["ranks"] if r.get("pid")))
except Exception:
    pass' 2> /dev/null)
  [ -z "$_kr" ] || kill -KILL $_kr 2> /dev/null
  return 0
}
pass() { _cs_ok=1; exit 0; }
# check DESCRIPTION COMMAND...: run a command, fail with the description if it fails.
check() { _d=$1; shift; "$@" || fail "$_d"; echo "ok: $_d"; }
# expect_eq DESCRIPTION GOT WANT
expect_eq() { [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"; echo "ok: $1 ($2)"; }
# beyond_noise "VERDICTS": of straggler verdict lines ("kind rank src dst
# first last cost_ns comm", one a line), those a clean run of 4 ranks on 2
# shared cores cannot owe to the scheduler: any slow link, any straggler
# costing 30 ms or more. A rank that loses its core is late by a slice or
# more: clean runs beside 8 busy loops got transient or persistent
# verdicts of 8-25 ms (tests/analysis/verdicts.inc.sh); the verdict tests
# detect 100 ms effects. The others are printed, excused.
beyond_noise() {
  echo "$1" | awk 'NF && ($1 == "slow_link" || $7 >= 30000000) { print; next }
                   NF { print "excused (scheduler noise, under 30 ms): " $0 > "/dev/stderr" }'
}
# q DB SQL: one query through the sqlite3 shell (tests may read the store directly).
q() { sqlite3 -batch -noheader "$1" "$2"; }
# mpirun_for openmpi|mpich: the launcher of that implementation, or empty.
mpirun_for() {
  case $1 in
    openmpi) echo "${MPIRUN_OMPI:-$(command -v mpirun.openmpi)}" ;;
    mpich)   echo "${MPIRUN_MPICH:-$(command -v mpirun.mpich)}" ;;
  esac
}
# need_mpi openmpi|mpich: skip unless that implementation and its build are here.
need_mpi() {
  _l=$(mpirun_for "$1")
  [ -n "$_l" ] && [ "$_l" != no ] && [ -x "$_l" ] || skip "$1 launcher not installed"
}
# need_venv [MODULE...]: sets VPY to the python of the project's virtual
# environment ($CS_VENV, default the source tree's .venv, which
# scripts/setup.sh makes: scripts/venv.sh) and checks that it has the
# modules (default: torch, hta, google.protobuf). Where it does not, the
# test fails under CI=true (CI makes the venv: these tests must run there)
# and skips otherwise.
need_venv() {
  _venv=${CS_VENV:-$S/.venv}
  VPY=$_venv/bin/python
  [ $# -gt 0 ] || set -- torch hta google.protobuf
  if [ ! -x "$VPY" ]; then
    _why="no Python venv at $_venv (scripts/venv.sh makes it; CS_VENV names another)"
  elif ! _why=$("$VPY" -c 'import sys, importlib.util as u
miss = [m for m in sys.argv[1:] if u.find_spec(m) is None]
print("the venv " + sys.prefix + " lacks " + ", ".join(miss) + " (scripts/venv.sh installs them)" if miss else "")
sys.exit(1 if miss else 0)' "$@" 2>&1); then
    _why=${_why:-"$VPY does not run"}
  else
    return 0
  fi
  [ "${CI:-}" = true ] && fail "$_why"
  skip "$_why"
}
[ -x "$COLLSCOPE" ] || fail "collscope not built at $COLLSCOPE"

# check_counts OUTPUT DB: every "calls: rank R OP=N ..." line the program
# printed must match the trace exactly: each op's count per rank, and no op
# in the trace that the program did not count.
check_counts() {
  _out=$1; _db=$2; _n=0
  # grep -o: a launcher may join two ranks' lines (Hydra moves newlines).
  grep -o 'calls: rank [0-9]*\( MPI_[A-Za-z_]*=[0-9]*\)*' "$_out" > "$T/calls.txt" ||
    fail "the program printed no 'calls:' line"
  while read -r _c _r _rank _rest; do
    _ops=0
    for _kv in $_rest; do
      _op=${_kv%%=*}; _want=${_kv#*=}
      _got=$(q "$_db" "SELECT count(*) FROM spans WHERE rank=$_rank AND op='$_op'")
      [ "$_got" = "$_want" ] || fail "rank $_rank $_op: trace has $_got, program made $_want"
      _ops=$((_ops + 1)); _n=$((_n + _want))
    done
    _tops=$(q "$_db" "SELECT count(DISTINCT op) FROM spans WHERE rank=$_rank")
    [ "$_tops" = "$_ops" ] || fail "rank $_rank: trace has $_tops distinct ops, program counted $_ops"
  done < "$T/calls.txt"
  echo "ok: per-rank per-op counts match ($_n calls on $(wc -l < "$T/calls.txt") ranks)"
}

# check_seqs DB: every collective instance (comm, seq) has exactly one span
# per member of its communicator, all of the same op.
check_seqs() {
  _bad=$(q "$1" "SELECT s.comm, s.seq, count(*), count(DISTINCT s.op), c.n FROM spans s
                 JOIN (SELECT id, count(*) n FROM comms GROUP BY id) c ON c.id = s.comm
                 WHERE s.seq IS NOT NULL GROUP BY s.comm, s.seq
                 HAVING count(*) != c.n OR count(DISTINCT s.op) != 1 LIMIT 5")
  [ -z "$_bad" ] || fail "collective instances that do not match across ranks (comm|seq|spans|ops|members): $_bad"
  _bad=$(q "$1" "SELECT id FROM comms GROUP BY id HAVING count(*) != max(size) LIMIT 5")
  [ -z "$_bad" ] || fail "communicators whose members disagree on their size: $_bad"
  echo "ok: $(q "$1" "SELECT count(*) FROM (SELECT DISTINCT comm, seq FROM spans WHERE seq IS NOT NULL)") collective instances match across $(q "$1" "SELECT count(DISTINCT id) FROM comms") communicators"
}

# readonly_setup: makes "$T/ro_run CMD...", which runs CMD (with TMPDIR
# "$T/scratch") where every folder "$T/ro_*" is read-only even to root:
# as another user, root is not stopped by file modes, so it runs in a
# private mount namespace with those folders bind-mounted read-only, or
# else as user nobody. Skips the test when neither can be had.
readonly_setup() {
  chmod 755 "$T"
  mkdir -p "$T/scratch" "$T/probe" && chmod 777 "$T/scratch"
  if [ "$(id -u)" != 0 ]; then
    printf '#!/bin/sh\nexec env TMPDIR="%s/scratch" "$@"\n' "$T" > "$T/ro_run"
    echo "ok: read-only by file modes"
  elif unshare -m sh -c 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && ! touch "$0/x"' "$T/probe" 2> /dev/null; then
    cat > "$T/ro_run" << EOF2
#!/bin/sh
exec unshare -m sh -c 'for d in "\$0"/ro_*; do
  [ -d "\$d" ] || continue
  mount --bind "\$d" "\$d" && mount -o remount,bind,ro "\$d" || exit 99
done
exec env TMPDIR="\$0/scratch" "\$@"' "$T" "\$@"
EOF2
    echo "ok: read-only as root, through read-only mounts"
  else
    command -v runuser > /dev/null || skip "no mount namespace and no runuser: cannot drop root, which writes anything"
    runuser -u nobody -- "$COLLSCOPE" --help > /dev/null 2>&1 ||
      skip "no mount namespace, and user nobody cannot run $COLLSCOPE (its folders are closed to others)"
    printf '#!/bin/sh\nexec runuser -u nobody -- env TMPDIR="%s/scratch" "$@"\n' "$T" > "$T/ro_run"
    echo "ok: read-only as user nobody"
  fi
  chmod 755 "$T/ro_run"
}
