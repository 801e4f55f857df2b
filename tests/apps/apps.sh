# tests/apps/apps.sh: helpers shared by the tests of real applications.
# Source it after tests/lib.sh:  . "$S/tests/apps/apps.sh"

# run_to FILE COMMAND...: run COMMAND with stdout and stderr into FILE; its status.
run_to() { _f=$1; shift; "$@" >"$_f" 2>&1; }

# traced_to DIR FILE LAUNCH...: run LAUNCH under collscope, output into FILE and
# the trace into DIR; fails the test unless the job and the trace are there.
traced_to() {
  _d=$1; _f=$2; shift 2
  run_to "$_f" "$COLLSCOPE" run -o "$_d" -- "$@" || { tail -n 20 "$_f" >&2; fail "traced run: $*"; }
  [ -s "$_d/trace.db" ] || fail "no trace at $_d/trace.db"
  echo "ok: traced run ($*)"
}

# printed_count FILE RANK FUNC: FUNC's count in "calls: rank RANK MPI_X=n ..."
# as the program printed it (empty when absent). Launchers can put another
# rank's output before a line's newline, hence grep -o, not whole lines.
printed_count() {
  grep -o "calls: rank $2\( MPI_[A-Za-z_]*=[0-9]*\)\{1,\}" "$1" | head -n 1 |
    tr ' ' '\n' | sed -n "s/^$3=//p"
}

# printed_value FILE LABEL PATTERN: the text matching PATTERN after "LABEL: ".
printed_value() { grep -o "$2: *$3" "$1" | head -n 1 | sed "s/^$2: *//"; }

# traced_count DB RANK FUNC: how many spans of FUNC the trace holds for RANK.
traced_count() { q "$1" "SELECT count(*) FROM spans WHERE rank=$2 AND op='$3'"; }

# traced_ranks DB WHERE: the ranks (comma separated, ascending) with a span
# matching the SQL condition WHERE.
traced_ranks() {
  q "$1" "SELECT group_concat(rank) FROM (SELECT DISTINCT rank FROM spans WHERE $2 ORDER BY rank)"
}

# expect_counts_match OUTFILE DB NRANK FUNC...: for every rank and function,
# the count printed by the program equals the count in the trace.
expect_counts_match() {
  _o=$1; _db=$2; _n=$3; shift 3
  _r=0
  while [ $_r -lt "$_n" ]; do
    for _fn in "$@"; do
      _want=$(printed_count "$_o" $_r "$_fn")
      [ -n "$_want" ] || fail "rank $_r printed no count of $_fn (see $_o)"
      expect_eq "rank $_r $_fn spans" "$(traced_count "$_db" $_r "$_fn")" "$_want"
    done
    _r=$((_r + 1))
  done
}
