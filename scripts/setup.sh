#!/bin/sh
# scripts/setup.sh: the two commands of the README's quick start.
#
#   scripts/setup.sh demo   install what is missing (Debian packages, and the
#                           Python venv .venv: scripts/venv.sh), build, run the demo: a
#                           traced 4-rank MPI training job and its report
#   scripts/setup.sh test   install what is missing, build, run the test suite,
#                           then the sanitizer build's subset and the fuzz
#                           targets (see below); last line: the counts of all
#
# For a fresh Debian 12 machine, as root (or with sudo available). Builds in
# ./build. CS_JOBS sets the build parallelism (default: number of cores),
# CS_TEST_JOBS the tests' (default: twice that: most tests wait on a
# job, a terminal or a file, and those that judge a job's timing run
# alone whatever it is: CS_SERIAL_TESTS in tests/local.mk).
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
what=${1:-}
case "$what" in
  demo|test) ;;
  *) echo "usage: scripts/setup.sh demo|test" >&2; exit 2 ;;
esac

# Debian packages: the build, both MPI implementations, the store, call
# sites, counters, the TUI, the real applications the tests run, and
# Prometheus (its promtool and server check `collscope top`'s metrics).
pkgs="build-essential autoconf automake libtool libtool-bin pkg-config python3 binutils
  sqlite3 libsqlite3-dev openmpi-bin libopenmpi-dev mpich libmpich-dev gfortran
  libunwind-dev libpapi-dev papi-tools libncurses-dev tmux lammps hpcc python3-mpi4py python3-numpy
  procps time clang-format clang libclang-rt-14-dev
  libotf2-trace-dev otf2-tools libyajl-dev zlib1g-dev
  libprotobuf-c-dev protobuf-c-compiler protobuf-compiler python3-protobuf
  python3-venv prometheus curl"
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

# The project's Python venv (.venv, or $CS_VENV): pinned PyTorch, Holistic
# Trace Analysis and protobuf, for the tests that run a real PyTorch job and
# read the exports with real clients (scripts/venv.sh; minutes the first time).
sh scripts/venv.sh
export CS_VENV="${CS_VENV:-$top/.venv}"

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
    tjobs=${CS_TEST_JOBS:-$((jobs * 2))}
    # The sanitizer tree (below) and the fuzz targets build while the
    # second part of the suite runs (the tests that may share the cores),
    # in the idle scheduling class (chrt -i 0: only on a core no test
    # wants; a test that wakes takes it at once). Not beside the tests
    # that run alone: their jobs' waiting ranks yield the core, and an
    # idle-class build beside them took those slices (nb_fusion 22 -> 30
    # s, two of those tests failed). Without chrt they build after the
    # suite, as before.
    idle=
    if command -v chrt > /dev/null 2>&1 && chrt -i 0 true 2> /dev/null; then idle="chrt -i 0"; fi
    asan_flags="-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=undefined,float-cast-overflow"
    mkdir -p "$top/build-asan"
    asan_build() {
      (
        cd "$top/build-asan" || exit 1
        if [ ! -f Makefile ] || [ ../configure -nt config.status ]; then
          $idle ../configure --quiet CFLAGS="$asan_flags" LDFLAGS="-fsanitize=address,undefined,float-cast-overflow" \
            --without-cuda --without-nccl --without-cupti > build.out 2>&1 || exit 1
        fi
        $idle make -j"$jobs" >> build.out 2>&1
      )
      echo $? > "$top/build-asan/build.rc"
    }
    fuzz_build() {
      $idle sh "$top/tests/fuzz/run.sh" --src "$top" --build "$top/build/build-fuzz" --build-only \
        > "$top/build/fuzz-build.out" 2>&1
    }
    rm -f "$top/build-asan/build.rc"
    order=$(make --no-print-directory -s print-check-order)
    serial=$(echo "$order" | sed -n 's/^serial: //p')
    other=$(echo "$order" | sed -n 's/^other: //p')
    t0=$(date +%s)
    echo "== make check (-j$tjobs): the tests that run alone, then the others"
    make -j"$tjobs" --no-print-directory check TESTS="$serial" || true
    bg=
    if [ -n "$idle" ]; then
      asan_build &
      bg="$bg $!"
      fuzz_build &
      bg="$bg $!"
      # whatever happens to this script, the builds do not outlive it
      trap 'for p in $bg; do kill "$p" 2> /dev/null; done' EXIT
    fi
    make -j"$tjobs" --no-print-directory check TESTS="$other" || true
    normal=$(make --no-print-directory -s check-summary 2> /dev/null | tail -n 1)
    t1=$(date +%s)
    for p in $bg; do wait "$p" || true; done
    trap - EXIT
    [ -n "$idle" ] || { asan_build; fuzz_build || true; }
    tb=$(date +%s)

    # The same sources built once more with ASan and UBSan (gcc; with
    # float-cast-overflow, which gcc leaves out of undefined), in
    # build-asan, and the tests of what reads untrusted input there: the
    # store, the analysis, the TUI and the fuzz corpus replay. The tests
    # that trace a job run with the ASan runtime preloaded in every process
    # of the launch (an ASan preload needs it first); Open MPI's launcher
    # and ranks run under it. Left out: the preload's own tests
    # (tests/mpi, tests/nccl, tests/apps: MPICH's launcher, the Fortran,
    # Python and GPU stand-in paths), the MPI timing tests (verdicts_*,
    # align_strict, whatif, costmodel, apply_estimate: their delays do not
    # hold under ASan's slowdown), tests/tui/tui.sh (its latest-rank check
    # is timing too) and tests/tui/badinput.sh with the runtime preloaded
    # (it hung at its SIGTERM step then, not investigated: it runs in the
    # first group).
    asan_plain="tests/unit/test_log tests/store/ingest.sh tests/store/readonly.sh tests/store/corrupt.sh tests/store/corrupt_stored.sh
      tests/nccl/schema_upgrade.sh tests/analysis/synthetic.sh tests/tui/badinput.sh tests/tui/tui_readonly.sh
      tests/store/log_fields.sh tests/store/log_special.sh tests/store/log_truncated.sh
      tests/analysis/numargs.sh tests/analysis/json_nonfinite.sh tests/analysis/sparse_ranks.sh
      tests/analysis/bad_traces.sh tests/tui/extreme.sh tests/fuzz/replay.sh"
    asan_traced="tests/store/schema.sh tests/store/bad_input.sh tests/analysis/faults.sh"
    asan_tests=$(echo $asan_plain $asan_traced)
    echo "== sanitizers: build-asan (-fsanitize=address,undefined), then: $asan_tests"
    cd "$top/build-asan"
    asan=
    if [ "$(cat build.rc 2> /dev/null)" = 0 ]; then
      export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:verify_asan_link_order=0
      export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
      make -j"$jobs" --no-print-directory check TESTS="$(echo $asan_plain)" || true
      LD_PRELOAD="$(gcc -print-file-name=libasan.so)" \
        make -j"$jobs" --no-print-directory check TESTS="$asan_traced" || true
      unset ASAN_OPTIONS UBSAN_OPTIONS
      asan=$(make --no-print-directory -s check-summary TESTS="$asan_tests" 2> /dev/null | tail -n 1)
    else
      tail -n 30 build.out
      echo "FAIL: the sanitizer build failed (log: $top/build-asan/build.out)"
    fi
    [ -n "$asan" ] || asan="0 passed, 1 failed, 0 skipped"
    t2=$(date +%s)

    # The fuzz targets: 4 s each with a fixed seed (the suite's time:
    # issue 33 wants setup.sh test under 12 minutes on 2 cores), then the
    # replay of the committed corpus and crashes (a longer search, for new
    # inputs: `make fuzz FUZZ_SECONDS=1200`; CS_FUZZ_SECONDS here).
    echo "== fuzz: each target for ${CS_FUZZ_SECONDS:-4} s, seed 1"
    cd "$top/build"
    sh "$top/tests/fuzz/run.sh" --src "$top" --build "$top/build/build-fuzz" \
      --seconds "${CS_FUZZ_SECONDS:-4}" --seed 1 2>&1 | tee "$top/build/fuzz.out"
    fuzz=$(tail -n 1 "$top/build/fuzz.out")
    t3=$(date +%s)
    echo "== times: make check $((t1 - t0)) s, then the sanitizer and fuzz builds $((tb - t1)) s more," \
      "sanitizers $((t2 - tb)) s, fuzz $((t3 - t2)) s"

    # One line for everything: the normal suite, the sanitizer subset and
    # the fuzz runs (CI reads the last line).
    p=0 f=0 k=0
    for line in "$normal" "$asan" "${fuzz#fuzz: }"; do
      set -- $(echo "$line" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
      [ $# -eq 3 ] || set -- 0 1 0 # a part that printed no counts failed
      p=$((p + $1)) f=$((f + $2)) k=$((k + $3))
    done
    echo "== suite: $normal; sanitizers: $asan; ${fuzz:-fuzz: no result}"
    echo "$p passed, $f failed, $k skipped"
    [ $f -eq 0 ]
    exit $?
    ;;
esac
