#!/bin/sh
# Communicators by name (libtrace/store_comms.c): on Open MPI and MPICH,
# tests/progs/nbloop on MPI_COMM_WORLD, on a dup, and on a split named
# "grad" with MPI_Comm_set_name, tests/progs/names_setget (names set twice,
# a long name, a dup of a named split), and the example trainer's --split
# (split, dup of world, dup of the split, create):
#  - MPI_Comm_set_name reaches the library (the program reads the names
#    back) traced, with the log full and with tracing off;
#  - the store keeps the name each rank set and each split's color and key
#    (comms.name, color, key: schema version 3);
#  - the text report's per-communicator table, cost models and proposals
#    name them: MPI_COMM_WORLD (4 ranks), "grad" with its parent and color
#    (the two halves share the name), dup(...), create(..., leader 0);
#    no communicator column holds a bare number of 6 or more digits or
#    "(several)";
#  - the JSON report gives comm_id and comm_name wherever it gives a
#    communicator, and every comm_name is a name;
#  - a store of schema version 2 (no names recorded) is upgraded when read
#    and named from how its communicators were made; a store whose
#    communicators are each other's parents is named in bounded time.
. "$srcdir/tests/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"

# no_bare_ids REPORT: no communicator shown as a bare number or "(several)".
no_bare_ids() {
  sed -n '/^Per communicator/,/^$/p' "$1" > "$T/percomm.txt"
  [ -s "$T/percomm.txt" ] || fail "$1: no per-communicator table"
  ! grep -q '(several)' "$T/percomm.txt" || fail "$1: '(several)' in the per-communicator table: $(cat "$T/percomm.txt")"
  ! grep -Eq '^  [0-9]{6,}( |$)' "$T/percomm.txt" || fail "$1: a bare id in the per-communicator table: $(cat "$T/percomm.txt")"
  ! grep -Eiq '(comm|communicator|on) [0-9]{6,}' "$1" || fail "$1: a bare communicator id: $(grep -Ei '(comm|communicator|on) [0-9]{6,}' "$1")"
  ! grep -Eq 'comm (0x)?[0-9a-f]{6,}' "$1" || fail "$1: a bare communicator id: $(grep -E 'comm (0x)?[0-9a-f]{6,}' "$1")"
}

# json_names JSON NAME...: every communicator in the JSON report has a
# comm_id and a comm_name that is no number; the names given are among them.
json_names() {
  "$PY" - "$@" << 'EOF' || fail "$1: JSON communicator names"
import json, re, sys
d = json.load(open(sys.argv[1]))
names = set()
def walk(x, where):
    if isinstance(x, dict):
        if "comm" in x and x["comm"] not in (0, "0"):
            for k in ("comm_id", "comm_name"):
                if k not in x:
                    sys.exit("%s: no %s next to comm in %s" % (sys.argv[1], k, where))
            n = x["comm_name"]
            if not isinstance(n, str) or not n or re.fullmatch(r"[0-9]+", n) or "(several)" in n:
                sys.exit("%s: comm_name %r in %s" % (sys.argv[1], n, where))
            names.add(n)
        for k, v in x.items():
            walk(v, where + "." + k)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            walk(v, "%s[%d]" % (where, i))
walk(d, "report")
for want in sys.argv[2:]:
    if want not in names:
        sys.exit("%s: no communicator named %r (names: %s)" % (sys.argv[1], want, sorted(names)))
print("ok: JSON names %s" % sorted(names))
EOF
}

ran=0
for mpi in openmpi mpich; do
  L=$(mpirun_for $mpi)
  [ -n "$L" ] && [ -x "$L" ] || continue
  sfx=$( [ $mpi = openmpi ] && echo ompi || echo mpich)
  NB=$B/tests/progs/nbloop_$sfx
  TR=$B/examples/mpi_trainer_$sfx
  [ -x "$NB" ] || fail "$NB not built"
  ran=$((ran + 1))

  # a split named "grad": both halves carry the name, each its color
  d=$T/$mpi-grad
  "$COLLSCOPE" run -o "$d" -- "$L" -np 4 "$NB" --comm split --name grad --steps 20 --buckets 8 --compute-us 200 \
    > "$T/out.txt" 2>&1 || fail "$mpi: nbloop --comm split --name grad: $(tail -5 "$T/out.txt")"
  db=$d/trace.db
  expect_eq "$mpi: schema version" "$(q "$db" "SELECT value FROM meta WHERE key='schema_version'")" 7
  expect_eq "$mpi: the name each rank set, on its own row" \
    "$(q "$db" "SELECT group_concat(rank || ':' || name || ':' || color || ':' || key, ' ') FROM (SELECT * FROM comms WHERE how='split' ORDER BY rank)")" \
    "0:grad:0:0 1:grad:1:1 2:grad:0:2 3:grad:1:3"
  "$COLLSCOPE" report --full "$d" > "$T/grad.txt" 2>&1 || fail "$mpi: report: $(tail -3 "$T/grad.txt")"
  for want in 'MPI_COMM_WORLD (4 ranks)' 'grad \[split(MPI_COMM_WORLD, color 0)\] (2 ranks)' \
    'grad \[split(MPI_COMM_WORLD, color 1)\] (2 ranks)'; do
    sed -n '/^Per communicator/,/^$/p' "$T/grad.txt" | grep -q "^  $want " ||
      fail "$mpi: no '$want' in the per-communicator table: $(sed -n '/^Per communicator/,/^$/p' "$T/grad.txt")"
  done
  grep -q '^  MPI_Iallreduce on grad \[split(MPI_COMM_WORLD, color [01])\] ' "$T/grad.txt" ||
    fail "$mpi: the cost models do not name the split: $(sed -n '/^Cost models/,/^$/p' "$T/grad.txt")"
  no_bare_ids "$T/grad.txt"
  "$COLLSCOPE" report "$d" --format json > "$T/grad.json" || fail "$mpi: report --format json"
  json_names "$T/grad.json" MPI_COMM_WORLD 'grad [split(MPI_COMM_WORLD, color 0)]' 'grad [split(MPI_COMM_WORLD, color 1)]'
  "$COLLSCOPE" report "$d" --format markdown > "$T/grad.md" || fail "$mpi: report --format markdown"
  ! grep -Eq '(comm|communicator|on) [0-9]{6,}' "$T/grad.md" || fail "$mpi: a bare communicator id in the Markdown report"
  echo "ok: $mpi: the split named grad"

  # names set twice (the last one counts, 58 bytes: two log records),
  # MPI_COMM_WORLD renamed, a dup of a named split; the program reads its
  # names back the same traced, with the log full, and with tracing off
  NS=$B/tests/progs/names_setget_$sfx
  [ -x "$NS" ] || fail "$NS not built"
  long=gradient-buckets-of-the-second-half-of-the-layers-0123456
  "$L" -np 4 "$NS" 2> "$T/ns-plain.err" | sort > "$T/ns-plain.txt" || fail "$mpi: names_setget: $(cat "$T/ns-plain.err")"
  expect_eq "$mpi: names read back untraced" "$(grep -c "half='$long' world='everyone'" "$T/ns-plain.txt")" 4
  d=$T/$mpi-names
  "$COLLSCOPE" run -o "$d" -- "$L" -np 4 "$NS" 2> "$T/ns.err" | sort > "$T/ns.txt"
  diff "$T/ns-plain.txt" "$T/ns.txt" || fail "$mpi: names_setget traced: output differs"
  COLLSCOPE_TEST_ENOSPC_AFTER=0 "$COLLSCOPE" run -o "$T/$mpi-full" -- "$L" -np 4 "$NS" 2> "$T/ns.err" | sort > "$T/ns.txt"
  diff "$T/ns-plain.txt" "$T/ns.txt" || fail "$mpi: names_setget, log full: output differs"
  COLLSCOPE_DISABLE=1 "$COLLSCOPE" run -o "$T/$mpi-off" -- "$L" -np 4 "$NS" 2> "$T/ns.err" | sort > "$T/ns.txt"
  diff "$T/ns-plain.txt" "$T/ns.txt" || fail "$mpi: names_setget, tracing off: output differs"
  echo "ok: $mpi: MPI_Comm_set_name reaches the library traced, with the log full and with tracing off"
  db=$d/trace.db
  expect_eq "$mpi: the last name set, whole" \
    "$(q "$db" "SELECT count(*) FROM comms WHERE how='split' AND name='$long'")|$(q "$db" "SELECT count(*) FROM comms WHERE how='world' AND name='everyone'")" "4|4"
  "$COLLSCOPE" report "$d" > "$T/ns-report.txt" 2>&1 || fail "$mpi: report: $(tail -3 "$T/ns-report.txt")"
  sed -n '/^Per communicator/,/^$/p' "$T/ns-report.txt" > "$T/ns-comms.txt"
  for c in 0 1; do
    for want in "$long [split(MPI_COMM_WORLD, color $c)] (2 ranks)" "dup($long [split(MPI_COMM_WORLD, color $c)]) (2 ranks)"; do
      grep -qF "  $want " "$T/ns-comms.txt" || fail "$mpi: no '$want': $(cat "$T/ns-comms.txt")"
    done
  done
  no_bare_ids "$T/ns-report.txt"
  echo "ok: $mpi: a long name set twice, a dup of a named split"

  # a dup, unnamed; plain world
  d=$T/$mpi-dup
  "$COLLSCOPE" run -o "$d" -- "$L" -np 4 "$NB" --comm dup --steps 20 --buckets 8 --compute-us 200 > "$T/out.txt" 2>&1 ||
    fail "$mpi: nbloop --comm dup: $(tail -5 "$T/out.txt")"
  "$COLLSCOPE" report "$d" > "$T/dup.txt" 2>&1 || fail "$mpi: report: $(tail -3 "$T/dup.txt")"
  sed -n '/^Per communicator/,/^$/p' "$T/dup.txt" | grep -q '^  dup(MPI_COMM_WORLD) (4 ranks) ' ||
    fail "$mpi: no dup(MPI_COMM_WORLD): $(sed -n '/^Per communicator/,/^$/p' "$T/dup.txt")"
  no_bare_ids "$T/dup.txt"
  "$COLLSCOPE" report "$d" --format json > "$T/dup.json" || fail "$mpi: report --format json"
  json_names "$T/dup.json" 'dup(MPI_COMM_WORLD)'
  d=$T/$mpi-world
  "$COLLSCOPE" run -o "$d" -- "$L" -np 4 "$NB" --steps 20 --buckets 8 --compute-us 200 > "$T/out.txt" 2>&1 ||
    fail "$mpi: nbloop: $(tail -5 "$T/out.txt")"
  "$COLLSCOPE" report "$d" > "$T/world.txt" 2>&1 || fail "$mpi: report: $(tail -3 "$T/world.txt")"
  expect_eq "$mpi: world only" "$(sed -n '/^Per communicator/,/^$/p' "$T/world.txt" | sed -n '3p' | cut -c1-26)" \
    "  MPI_COMM_WORLD (4 ranks)"
  no_bare_ids "$T/world.txt"
  grep -q '^Proposals' "$T/world.txt" || fail "$mpi: no proposals section"
  if grep -q 'call site .* per step on' "$T/world.txt"; then
    grep -q 'per step on MPI_COMM_WORLD;' "$T/world.txt" ||
      fail "$mpi: the proposal does not name MPI_COMM_WORLD: $(grep 'per step on' "$T/world.txt")"
    echo "ok: $mpi: the proposal names MPI_COMM_WORLD"
  fi

  # the example trainer's sub-communicators
  if [ -x "$TR" ]; then
    d=$T/$mpi-trainer
    "$COLLSCOPE" run -o "$d" -- "$L" -np 4 "$TR" --split --steps 6 > "$T/out.txt" 2>&1 ||
      fail "$mpi: trainer --split: $(tail -5 "$T/out.txt")"
    "$COLLSCOPE" report "$d" > "$T/tr.txt" 2>&1 || fail "$mpi: report: $(tail -3 "$T/tr.txt")"
    sed -n '/^Per communicator/,/^$/p' "$T/tr.txt" > "$T/tr-comms.txt"
    for want in 'MPI_COMM_WORLD (4 ranks)' 'split(MPI_COMM_WORLD, color 0) (2 ranks)' \
      'split(MPI_COMM_WORLD, color 1) (2 ranks)' 'dup(MPI_COMM_WORLD) (4 ranks)' \
      'dup(split(MPI_COMM_WORLD, color 0)) (2 ranks)' 'dup(split(MPI_COMM_WORLD, color 1)) (2 ranks)' \
      'create(MPI_COMM_WORLD, leader 0) (2 ranks)'; do
      grep -qF "  $want " "$T/tr-comms.txt" || fail "$mpi: trainer: no '$want': $(cat "$T/tr-comms.txt")"
    done
    no_bare_ids "$T/tr.txt"
    "$COLLSCOPE" report "$d" --format json > "$T/tr.json" || fail "$mpi: report --format json"
    json_names "$T/tr.json" 'create(MPI_COMM_WORLD, leader 0)' 'dup(split(MPI_COMM_WORLD, color 1))'
    echo "ok: $mpi: the trainer's split, dups and create"
  fi
done
[ $ran -gt 0 ] || skip "neither Open MPI nor MPICH is installed"

# A store of schema version 2: upgraded when read, named from how its
# communicators were made (no colors: split(MPI_COMM_WORLD)).
old=$T/v2.db
cp "$T/$mpi-grad/trace.db" "$old"
q "$old" "ALTER TABLE comms DROP COLUMN name; ALTER TABLE comms DROP COLUMN key; ALTER TABLE comms DROP COLUMN color;
  UPDATE meta SET value='2' WHERE key='schema_version'; DELETE FROM meta WHERE key LIKE 'analysis%'"
"$COLLSCOPE" report "$old" > "$T/v2.txt" 2>&1 || fail "a version 2 store: $(tail -3 "$T/v2.txt")"
expect_eq "upgraded to version 3" "$(q "$old" "SELECT value FROM meta WHERE key='schema_version'")" 7
sed -n '/^Per communicator/,/^$/p' "$T/v2.txt" > "$T/v2-comms.txt"
grep -qF '  split(MPI_COMM_WORLD) #2 (2 ranks) ' "$T/v2-comms.txt" && grep -qF '  split(MPI_COMM_WORLD) (2 ranks) ' "$T/v2-comms.txt" ||
  fail "a version 2 store: the two halves are not told apart: $(cat "$T/v2-comms.txt")"
no_bare_ids "$T/v2.txt"
echo "ok: a version 2 store is read, its communicators named from how they were made"

# Damage: the two halves each other's parent (a cycle): named all the
# same, in bounded time.
bad=$T/cycle.db
cp "$T/$mpi-grad/trace.db" "$bad"
q "$bad" "UPDATE comms SET parent = (SELECT MIN(c2.id) FROM comms c2 WHERE c2.how = 'split' AND c2.id != comms.id),
  name = NULL WHERE how = 'split'"
timeout 60 "$COLLSCOPE" report "$bad" > "$T/cycle.txt" 2>&1 || fail "a store with a cycle of parents: $(tail -3 "$T/cycle.txt")"
sed -n '/^Per communicator/,/^$/p' "$T/cycle.txt" > "$T/cycle-comms.txt"
expect_eq "a cycle of parents: both halves named" "$(grep -c '^  split(split(' "$T/cycle-comms.txt")" 2
no_bare_ids "$T/cycle.txt"
pass
