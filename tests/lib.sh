# tests/lib.sh: helpers for collscope's shell tests. Source it first:
#   . "$srcdir/tests/lib.sh"
# Provides: $B (abs build dir), $S (abs source dir), $COLLSCOPE (the command),
# $T (a fresh temporary directory, removed on success), and the functions
# skip, fail, check, q (sqlite query), mpirun_for, need_mpi.
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
_cs_name=$(basename "$0" .sh)
T=$(mktemp -d "${TMPDIR:-/tmp}/cs-$_cs_name.XXXXXX")
_cs_ok=0
trap '[ $_cs_ok = 1 ] && rm -rf "$T"' EXIT

skip() { echo "SKIP: $*"; _cs_ok=1; exit 77; }
fail() { echo "FAIL: $*" >&2; echo "(work files kept in $T)" >&2; exit 1; }
pass() { _cs_ok=1; exit 0; }
# check DESCRIPTION COMMAND...: run a command, fail with the description if it fails.
check() { _d=$1; shift; "$@" || fail "$_d"; echo "ok: $_d"; }
# expect_eq DESCRIPTION GOT WANT
expect_eq() { [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"; echo "ok: $1 ($2)"; }
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
[ -x "$COLLSCOPE" ] || fail "collscope not built at $COLLSCOPE"
