#!/bin/sh
# tests/fuzz/seeds.sh: regenerate the fuzz targets' seed corpus (committed
# under tests/fuzz/TARGET/corpus) from the project's own programs.
#   seeds.sh BUILD_DIR      (a built tree: collscope, bench/log_gen,
#                            bench/gen_trace, examples/mpi_trainer_ompi)
# Logs are cut after their last claimed chunk (the rest of a log file is
# unused space), and the copies named *-trim after their last record;
# stores are rewritten with 512-byte pages (VACUUM) to stay small.
set -eu
B=$(cd "$1" && pwd)
S=$(cd "$(dirname "$0")/../.." && pwd)
F=$S/tests/fuzz
W=$(mktemp -d "${TMPDIR:-/tmp}/cs-seeds.XXXXXX")
trap 'rm -rf "$W"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export COLLSCOPE_LIBDIR=$B/interpose/.libs
# cut LOG OUT [trim]: the header's claimed chunks only; trim: up to the
# last record that is not all zero.
cut() {
  python3 - "$1" "$2" "${3:-}" << 'PY'
import struct, sys
src, dst, trim = sys.argv[1], sys.argv[2], sys.argv[3]
b = open(src, 'rb').read()
rec, crecs = struct.unpack_from('<II', b, 12)
chunks, = struct.unpack_from('<Q', b, 56)
end = min(len(b), 4096 + chunks * crecs * rec)
if trim:
    while end > 4096 and not any(b[end - rec:end]):
        end -= rec
open(dst, 'wb').write(b[:end])
PY
}
small_db() {
  sqlite3 "$1" 'PRAGMA journal_mode=DELETE; PRAGMA page_size=512; VACUUM;' > /dev/null
  cp "$1" "$2"
}
mkdir -p "$F/log/corpus" "$F/store/corpus" "$F/report_opts/corpus"

# Logs: log_gen's synthetic ranks (every record kind) and a real 2-rank
# MPI trainer run through the preload.
"$B/bench/log_gen" -o "$W/lg" -r 2 -n 40 -u 3 > /dev/null
set -- "$W/lg/logs"/*.cslog
cut "$1" "$F/log/corpus/loggen-rank0.cslog"
cut "$1" "$F/log/corpus/loggen-rank0-trim.cslog" trim
cut "$2" "$F/log/corpus/loggen-rank1-trim.cslog" trim
head -c 4096 "$1" > "$F/log/corpus/header-only.cslog"
"$B/analyzer/collscope" ingest "$W/lg" > /dev/null
small_db "$W/lg/trace.db" "$F/store/corpus/loggen.db"
if [ -x "$B/examples/mpi_trainer_ompi" ] && command -v mpirun.openmpi > /dev/null; then
  "$B/analyzer/collscope" run -o "$W/mpi" -- mpirun.openmpi -np 2 "$B/examples/mpi_trainer_ompi" \
    --steps 3 --compute-us 100 > /dev/null 2>&1
  i=0
  for l in "$W/mpi/logs"/*.cslog; do
    cut "$l" "$F/log/corpus/trainer-$i-trim.cslog" trim
    i=$((i + 1))
  done
  small_db "$W/mpi/trace.db" "$F/store/corpus/trainer.db"
fi
# Communicator names (COMMNAME records, a name of two records) from a real
# 2-rank run.
if [ -x "$B/tests/progs/names_setget_ompi" ] && command -v mpirun.openmpi > /dev/null; then
  "$B/analyzer/collscope" run -o "$W/names" -- mpirun.openmpi -np 2 "$B/tests/progs/names_setget_ompi" > /dev/null 2>&1
  set -- "$W/names/logs"/*.cslog
  cut "$1" "$F/log/corpus/names-0-trim.cslog" trim
fi

# Stores: gen_trace's synthetic traces with each kind of straggler, and the
# TUI's layout.
gen() {
  _n=$1
  shift
  "$B/bench/gen_trace" "$W/$_n.db" --ranks 4 --steps 6 "$@" > /dev/null
  "$B/analyzer/collscope" analyze "$W/$_n.db" > /dev/null 2>&1 || true
  small_db "$W/$_n.db" "$F/store/corpus/gen-$_n.db"
}
gen clean
gen persistent --persistent 2:5000
gen transient --transient 1:2-3:5000
gen slowlink --slow-link 0:1:5000
gen slowcoll --slow-coll 2-4:5000
gen tui --layout tui --spans 200 --straggler 2

# The report's arguments, NUL-separated.
o() {
  _n=$1
  shift
  printf '%s\0' "$@" | head -c -1 > "$F/report_opts/corpus/$_n"
}
o plain trace.db
o json --format json trace.db
o all --format=markdown -o out.md --baseline base --fail-on straggler=5,p99=20,step=10,verdict trace
o gates --fail-on=straggler=5 --fail-on verdict trace
o junit -f junit --fail-on p99=20,step=10 --baseline=b t
o bad --format nope --fail-on straggler=x t
