#!/bin/sh
# The rooms of the code and the rule that keeps them apart (docs/design.md):
# scripts/layers.py on the sources (includes) and on this build's objects
# (calls) finds no arrow up, none between peer rooms and no circle; and it
# does find each kind of fault planted in a copy.
. "$srcdir/tests/lib.sh"
PY=/usr/bin/python3
L="$S/scripts/layers.py"
command -v nm > /dev/null || skip "nm not installed (binutils)"

"$PY" "$L" --src "$S" > "$T/src.out" 2>&1 || { cat "$T/src.out"; fail "the include graph breaks the rule"; }
grep -q '^include graph: [0-9]* modules, [0-9]* arrows, 13 rooms; 0 violations' "$T/src.out" ||
  fail "no summary of the include graph: $(cat "$T/src.out")"
echo "ok: $(tail -n 1 "$T/src.out")"
"$PY" "$L" --build "$B" > "$T/build.out" 2>&1 || { cat "$T/build.out"; fail "the call graph breaks the rule"; }
grep -q '^call graph: [0-9]* modules, [0-9]* arrows, 13 rooms; 0 violations' "$T/build.out" ||
  fail "no summary of the call graph: $(cat "$T/build.out")"
echo "ok: $(tail -n 1 "$T/build.out")"

# A copy of the sources, then one fault at a time.
mkdir "$T/tree"
(cd "$S" && find common libtrace kernels interpose analyzer tui -name '*.[ch]' | cpio -pdm --quiet "$T/tree") 2> /dev/null ||
  (cd "$S" && tar cf - $(find common libtrace kernels interpose analyzer tui -name '*.[ch]')) | (cd "$T/tree" && tar xf -)
[ -f "$T/tree/libtrace/store_read.c" ] || fail "the copy of the sources is incomplete"
"$PY" "$L" --src "$T/tree" > /dev/null || fail "the copy breaks the rule before any plant"

# plant FILE LINE WANT: FILE (in the copy) gets LINE first; the check must
# fail and say WANT; the file is put back.
plant() {
  cp "$T/tree/$1" "$T/keep"
  { echo "$2"; cat "$T/keep"; } > "$T/tree/$1"
  _rc=0
  "$PY" "$L" --src "$T/tree" > "$T/plant.out" 2>&1 || _rc=$?
  cp "$T/keep" "$T/tree/$1"
  [ $_rc = 1 ] || fail "planted '$2' in $1: exit $_rc, want 1"
  grep -q "$3" "$T/plant.out" || fail "planted '$2' in $1: no '$3' in $(cat "$T/plant.out")"
  echo "ok: planted in $1: $(grep "$3" "$T/plant.out" | head -n 1 | cut -c1-160)"
}
# the library includes the command (an arrow up)
plant libtrace/store_read.c '#include "analyzer/cmd/cli.h"' 'include: up from libtrace to analyzer/cmd'
# a pass includes the parallel driver above it
plant analyzer/analysis/an_match.c '#include "analyzer/par/par_fork.h"' 'up from analyzer/analysis to analyzer/par'
# two peer rooms
plant analyzer/analysis/an_tail.c '#include "analyzer/status/failure.h"' 'between peer rooms analyzer/analysis and analyzer/status'
# a circle inside one room: the analysis tables' header includes the
# passes' header, which includes it
plant analyzer/analysis/store_analysis.h '#include "analyzer/analysis/analysis.h"' 'include: a circle among analyzer/analysis/analysis .*analyzer/analysis/store_analysis'

# A call up, planted among copies of this build's objects.
mkdir -p "$T/objs"
(cd "$B" && find common libtrace analyzer tui interpose kernels -name '*.o' | tar cf - -T -) | (cd "$T/objs" && tar xf -) ||
  fail "cannot copy the build's objects"
"$PY" "$L" --build "$T/objs" > /dev/null || fail "the copied objects break the rule before any plant"
printf 'int cs_report_load(void *st, void *d);\nint cs_store_plant(void) { return cs_report_load(0, 0); }\n' > "$T/plant.c"
${CC:-cc} -c -o "$T/objs/libtrace/libcsstore_la-store_plant.o" "$T/plant.c" || fail "cannot compile the planted call"
_rc=0
"$PY" "$L" --build "$T/objs" > "$T/call.out" 2>&1 || _rc=$?
[ $_rc = 1 ] && grep -q 'call: up from libtrace to analyzer/report: libtrace/store_plant calls cs_report_load' "$T/call.out" ||
  fail "a planted call from libtrace into the report: exit $_rc, $(cat "$T/call.out")"
echo "ok: planted call: $(head -n 1 "$T/call.out")"
pass
