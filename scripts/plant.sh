#!/bin/sh
# scripts/plant.sh [NAME...]: the planted regressions of docs/testing.md,
# one at a time, each with the tests that must catch it. Run it in the
# build tree, as `make check`:
#
#   cd build && sh ../scripts/plant.sh            # every plant
#   cd build && sh ../scripts/plant.sh waits      # one
#
# For each plant: its source file is copied aside, changed by one sed
# expression, the tree built (make), the plant's tests run (make check
# TESTS=...), then the file is put back and the tree built again, however
# the script ends (an interrupt too): the tree is never left changed.
# Prints, per plant, each of its tests that failed with its first FAIL
# line ("caught"), or "NOT CAUGHT".
# Exit status: 0 when every plant was caught; 1 when one was not, or no
# longer applies (its sed changed nothing: the code moved, update the
# table), or a build failed; 2 on bad usage.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
[ -f Makefile ] || { echo "plant.sh: run it in the build tree (no Makefile here)" >&2; exit 2; }
# name|file (in the source tree)|sed expression|tests
plants='steps|analyzer/analysis/an_match.c|s/^            P = best;$/            P = 1;/|tests/analysis/nb_steps_ompi.sh
waits|analyzer/analysis/an_match.c|s/cs_wait w = { m->span, m->rank, comm, seq, wt };/cs_wait w = { m->span, m->rank, comm, seq, 2 * wt };/|tests/analysis/waits_exact.sh
ingest|libtrace/store_import.c|s/^            rc = import_span(im, r, flags);$/            rc = im->stats->spans == 2 ? (im->stats->spans++, 0) : import_span(im, r, flags);/|tests/mpi/counts.sh tests/store/ingest.sh
tuikey|tui/timeline.c|/^    case .w.: tui_analysis_next_worst(&tl->nav, m, 1); break;$/d|tests/tui/tui.sh
foreign|libtrace/store_index.c|s/if (job_file_owned(path, f, i, \&unknown, why, sizeof why) != 0) {/if (job_file_owned(path, f, i, \&unknown, why, sizeof why) != 0 \&\& 0) {/|tests/store/foreign_rank.sh
readfail|analyzer/analysis/an_open.c|s/^    if (rc == 0 \&\& read_ok)$/    if (rc == 0)/|tests/store/corrupt_stored.sh
answer|analyzer/report/report_text.c|s/^        fprintf(f, "  culprit: %s\\n", a.who);$/        ;/|tests/report/answer.sh
reportunit|analyzer/report/report_text.c|s/cs__report_tnum(\&u2, r->median_lateness_ns, b2, sizeof b2));/cs__report_tstr(\&u2, r->median_lateness_ns, b2, sizeof b2));/|tests/report/answer.sh'
names=$(echo "$plants" | cut -d'|' -f1)
for want in "$@"; do
  echo "$names" | grep -qx "$want" || { echo "plant.sh: no plant '$want' (plants: $(echo $names))" >&2; exit 2; }
done
tmp=$(mktemp -d /tmp/plant.XXXXXX) || exit 1
cur=
restore() {
  if [ -n "$cur" ] && ! cmp -s "$tmp/orig" "$src/$cur"; then
    cp "$tmp/orig" "$src/$cur"
    make -s < /dev/null > "$tmp/build.log" 2>&1 || echo "plant.sh: the build after restoring $cur failed (see $tmp/build.log)" >&2
  fi
  cur=
}
trap 'restore; rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
rc=0
while IFS='|' read -r name file expr tests; do
  if [ $# -gt 0 ] && ! echo " $* " | grep -q " $name "; then
    continue
  fi
  cp "$src/$file" "$tmp/orig"
  cur=$file
  sed -e "$expr" "$tmp/orig" > "$tmp/planted"
  if cmp -s "$tmp/orig" "$tmp/planted"; then
    echo "$name: the plant no longer applies to $file (update scripts/plant.sh and docs/testing.md)"
    cur=
    rc=1
    continue
  fi
  cp "$tmp/planted" "$src/$file"
  # printf, not echo: a changed line may hold a backslash ("%s\n")
  printf '%s\n' "$name: planted in $file: $(diff "$tmp/orig" "$tmp/planted" | grep '^[<>]' | sed 's/^\(.\) */\1 /' | head -2 | tr '\n' ' ')"
  if ! make -s < /dev/null > "$tmp/build.log" 2>&1; then
    echo "$name: the planted tree does not build (see $tmp/build.log)"
    restore
    rc=1
    continue
  fi
  make -s check TESTS="$tests" < /dev/null > "$tmp/check.log" 2>&1
  caught=0
  for t in $tests; do
    log=${t%.sh}.log
    if grep -q '^:test-result: FAIL' "${t%.sh}.trs" 2> /dev/null; then
      caught=1
      echo "$name: caught by $t: $(grep -m1 '^FAIL' "$log" | cut -c1-300)"
    else
      echo "$name: $t passed"
    fi
  done
  [ $caught = 1 ] || { echo "$name: NOT CAUGHT"; rc=1; }
  restore
done << PLANTS
$plants
PLANTS
exit $rc
