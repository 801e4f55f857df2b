#!/bin/sh
# scripts/setup.sh: the two commands of the README's quick start.
#
#   scripts/setup.sh demo   install what is missing, build, run the demo: a
#                           traced 4-rank MPI training job and its report
#   scripts/setup.sh test   install what is missing, build, run the test suite
#
# For a fresh Debian 12 machine, as root (or with sudo available). Builds in
# ./build. CS_JOBS sets the build parallelism (default: number of cores).
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
what=${1:-}
case "$what" in
  demo|test) ;;
  *) echo "usage: scripts/setup.sh demo|test" >&2; exit 2 ;;
esac

# Debian packages: the build, both MPI implementations, the store, call
# sites, counters, the TUI, and the real applications the tests run.
pkgs="build-essential autoconf automake libtool libtool-bin pkg-config python3 binutils
  sqlite3 libsqlite3-dev openmpi-bin libopenmpi-dev mpich libmpich-dev gfortran
  libunwind-dev libpapi-dev libncurses-dev tmux lammps hpcc python3-mpi4py python3-numpy
  procps time clang-format"
missing=
for p in $pkgs; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "== installing:$missing"
  sudo=
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing
fi

echo "== building in $top/build"
if [ ! -x configure ] || [ configure.ac -nt configure ]; then
  autoreconf -fi
fi
mkdir -p build
cd build
if [ ! -f Makefile ] || [ ../configure -nt config.status ]; then
  ../configure --quiet
fi
jobs=${CS_JOBS:-$(nproc 2>/dev/null || echo 2)}
make -j"$jobs" >/dev/null

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
export COLLSCOPE_LIBDIR="$top/build/interpose/.libs"

case "$what" in
  demo)
    out="$top/demo.out"
    echo "== demo: a 4-rank MLP trainer (Open MPI), rank 2 made 3 ms late every step"
    echo "\$ collscope run -o demo.out -- mpirun -np 4 mpi_trainer_ompi --steps 40 --delay-us 3000 --delay-ranks 2"
    ./analyzer/collscope run -o "$out" -- mpirun.openmpi -np 4 ./examples/mpi_trainer_ompi \
      --steps 40 --compute-us 2000 --delay-us 3000 --delay-ranks 2
    echo "\$ collscope report demo.out"
    ./analyzer/collscope report "$out"
    echo "== the trace is $out/trace.db (SQLite; see docs/schema.md)"
    ;;
  test)
    echo "== make check"
    st=0
    make -j"$jobs" --no-print-directory check || st=$?
    # After a failure make's own error lines follow the summary: the line
    # "N passed, N failed, N skipped" again, last (CI reads it).
    [ $st -eq 0 ] || make --no-print-directory -s check-summary 2> /dev/null | tail -n 1
    exit $st
    ;;
esac
