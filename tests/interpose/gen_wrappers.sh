#!/bin/sh
# The wrapper generator refuses a bad spec with the spec's file and line
# (and to wrap the ops of imported traces, import.spec):
# an unknown key, a missing apply-mode policy, an op moved, added in the
# middle or removed (op ids are stored in traces and must never change);
# and it accepts an op appended at the end of a spec and of ops.lst.
. "$srcdir/tests/lib.sh"
GEN="$S/interpose/gen-wrappers.py"
PY=${PYTHON3:-python3}
cp "$S/interpose/mpi.spec" "$S/interpose/nccl.spec" "$S/interpose/cuda.spec" "$S/interpose/import.spec" \
  "$S/interpose/ops.lst" "$T/"
ops() { "$PY" "$GEN" ops "$T/ops.h" "$T/ops.c" "$1" "$T/nccl.spec" "$T/cuda.spec" "$T/import.spec"; }
# refused DESCRIPTION SPEC PATTERN: ops on SPEC fails with a message matching PATTERN.
refused() {
  if ops "$2" > "$T/out" 2>&1; then fail "$1: the generator accepted it"; fi
  grep -q "$3" "$T/out" || { cat "$T/out"; fail "$1: no message matching '$3'"; }
  echo "ok: $1: $(cat "$T/out")"
}
# line_of NAME FILE: the line of NAME's fn entry.
line_of() { grep -n "^fn [a-z]* $1(" "$2" | cut -d: -f1; }

check "the real specs generate the op table" ops "$T/mpi.spec"
for s in mpi nccl cuda; do
  check "the $s wrappers generate" "$PY" "$GEN" wrap "$T/${s}_wrappers.gen.c" "$T/$s.spec"
done
# The ops of imported traces are in the op table, never wrapped.
grep -q '"compute_cpu", "TORCH", "compute"' "$T/ops.c" || fail "no compute_cpu op of kind compute in the op table"
echo "ok: import.spec's ops are in the op table"
if "$PY" "$GEN" wrap "$T/import_wrappers.gen.c" "$T/import.spec" > "$T/out" 2>&1; then
  fail "wrappers were generated for import.spec"
fi
grep -q "the TORCH ops are not wrapped" "$T/out" || { cat "$T/out"; fail "no message for wrapping import.spec"; }
echo "ok: import.spec refused for wrappers: $(cat "$T/out")"
n=$(( $(line_of MPI_Bcast "$T/mpi.spec") + 1 ))
grep -q "^#line $n \"$T/mpi.spec\"" "$T/mpi_wrappers.gen.c" || fail "no #line pointing at MPI_Bcast's keys ($n)"
echo "ok: #line $n points at the spec"

# An unknown key.
sed "${n}s/peer=root/pear=root/" "$T/mpi.spec" > "$T/key.spec"
refused "unknown key" "$T/key.spec" "key.spec:$n: unknown key pear= in MPI_Bcast"

# No apply-mode policy.
awk -v n="$n" 'NR == n + 1 && /apply=/ { next } { print }' "$T/mpi.spec" > "$T/apply.spec"
refused "missing apply=" "$T/apply.spec" "apply.spec:$((n - 1)): MPI_Bcast has no apply= key"

# Two ops swapped (MPI_Send and MPI_Ssend, with their key lines).
a=$(line_of MPI_Send "$T/mpi.spec"); b=$(line_of MPI_Ssend "$T/mpi.spec"); c=$(line_of MPI_Rsend "$T/mpi.spec")
{ sed -n "1,$((a - 1))p" "$T/mpi.spec"; sed -n "$b,$((c - 1))p" "$T/mpi.spec"; sed -n "$a,$((b - 1))p" "$T/mpi.spec"
  sed -n "$c,\$p" "$T/mpi.spec"; } > "$T/swap.spec"
refused "reordered ops" "$T/swap.spec" "swap.spec:$(line_of MPI_Send "$T/swap.spec"): op MPI_Send comes after MPI_Ssend"

# A new op in the middle of the spec.
{ sed -n "1,$((a - 1))p" "$T/mpi.spec"; printf 'fn coll MPI_Newop(MPI_Comm comm)\n  comm=comm apply=flush\n'
  sed -n "$a,\$p" "$T/mpi.spec"; } > "$T/new.spec"
refused "an op not in ops.lst" "$T/new.spec" "new.spec:$a: op MPI_Newop is not in .*ops.lst: append it"

# A removed op.
{ sed -n "1,$((b - 1))p" "$T/mpi.spec"; sed -n "$c,\$p" "$T/mpi.spec"; } > "$T/gone.spec"
refused "a removed op" "$T/gone.spec" "ops.lst: op MPI_Ssend (id [0-9]*) is in no spec"

# Appended at the end of the spec and of the list: accepted, with the next id.
mkdir "$T/app" && cp "$T/nccl.spec" "$T/cuda.spec" "$T/import.spec" "$T/app/"
{ cat "$T/mpi.spec"; printf 'fn coll MPI_Newop(MPI_Comm comm)\n  comm=comm apply=flush\n'; } > "$T/app/mpi.spec"
{ cat "$T/ops.lst"; echo MPI_Newop; } > "$T/app/ops.lst"
check "an op appended to the spec and the list" "$PY" "$GEN" ops "$T/app/ops.h" "$T/app/ops.c" "$T/app/mpi.spec" \
  "$T/app/nccl.spec" "$T/app/cuda.spec" "$T/app/import.spec"
last=$(sed 's/#.*//; /^[[:space:]]*$/d' "$T/ops.lst" | tail -1)
grep -q "CS_OP_$last,\$" "$T/app/ops.h" && grep -A1 "CS_OP_$last,\$" "$T/app/ops.h" |
  grep -q 'CS_OP_MPI_Newop,' || fail "the appended op did not get the next id after $last"
echo "ok: the appended op gets the next id; the others keep theirs"
pass
