# nb_fusion.inc.sh: fusion proposals and check-estimate against the
# program's own timers, on tests/progs/nbloop (nonblocking allreduce
# buckets and one MPI_Waitall a step, no step markers), 4 ranks, under one
# MPI ($CS_MPI: openmpi or mpich). For each (buckets, bytes):
#  - 3 pairs of runs, each traced without and with apply mode (every bucket
#    of a step fused into one call), and for blocking buckets (which apply
#    mode does not fuse) without and with the program making 2 buckets of
#    the same bytes itself; the measured gain of fusion is the
#    median over the pairs of the programs' own median step times
#    (step_us_med, the median over the ranks), unfused minus fused;
#  - where that gain is below 5 %, no unfused run's report proposes fusion
#    of the buckets, and its JSON report says why in proposals_declined
#    (measured on this machine: 64 x 2 KiB and 16 x 64 KiB under MPICH,
#    16 blocking 64 KiB buckets; docs/fusion.md);
#  - check-estimate on every pair prints both traces' step counts and never
#    exits 0 (confirmed) unless that pair's own step time fell by 5 % or
#    more.
# Sourced by nb_fusion_ompi.sh and nb_fusion_mpich.sh.
need_mpi "$CS_MPI"
MPIRUN=$(mpirun_for "$CS_MPI")
case $CS_MPI in openmpi) PROG="$B/tests/progs/nbloop_ompi" ;; *) PROG="$B/tests/progs/nbloop_mpich" ;; esac
[ -x "$PROG" ] || skip "$PROG not built"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
# MPICH's waiting ranks busy-poll: its steps take whole scheduler slices
# (20-60 ms on 2 shared cores), so fewer of them
case $CS_MPI in openmpi) STEPS=${NB_FUSION_STEPS:-100} ;; *) STEPS=${NB_FUSION_STEPS:-60} ;; esac

# stepmed FILE: the median over the ranks of the program's step_us_med
stepmed() {
  grep -o 'NBLOOP rank=[0-9]* .*step_us_med=[0-9.]*' "$1" | sed 's/.*step_us_med=//' | sort -n |
    awk '{v[NR] = $1} END {if (NR == 0) exit 1; print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

for combo in "nb 64 2048" "nb 16 65536" "bl 16 65536"; do
  set -- $combo
  kind=$1 nb=$2 by=$3 total=$(($2 * $3))
  tag=$CS_MPI-$kind-$nb-$by
  op=MPI_Iallreduce
  [ $kind = bl ] && op=MPI_Allreduce
  gains=
  for i in 1 2 3; do
    for mode in plain fused; do
      d=$T/$tag-$mode$i
      b=$nb s=$by
      set -- env
      if [ $mode = fused ] && [ $kind = nb ]; then
        set -- env COLLSCOPE_FUSE=1 COLLSCOPE_FUSE_THRESHOLD=65536 COLLSCOPE_FUSE_BUFFER=$total
      elif [ $mode = fused ]; then
        b=2 s=$((total / 2))
      fi
      set -- "$@" "$COLLSCOPE" run -o "$d" -- "$MPIRUN" -np 4 "$PROG" --buckets $b --bytes $s --steps $STEPS
      [ $kind = bl ] && set -- "$@" --blocking
      "$@" > "$d.out" 2>&1 || fail "$tag: $mode run $i failed (see $d.out)"
      stepmed "$d.out" > "$d.med" || fail "$tag: $mode run $i printed no NBLOOP line (see $d.out)"
    done
    p=$(cat "$T/$tag-plain$i.med") f=$(cat "$T/$tag-fused$i.med")
    g=$(awk -v p="$p" -v f="$f" 'BEGIN {printf "%.4f", (p - f) / p}')
    gains="$gains $g"
    echo "$tag pair $i: step_us_med unfused $p, fused $f: gain $(awk -v g="$g" 'BEGIN {printf "%.1f", 100 * g}') %"

    # check-estimate on the pair: both step counts, never confirmed
    # without the program's own gain of 5 %
    "$COLLSCOPE" check-estimate "$T/$tag-plain$i" "$T/$tag-fused$i" > "$T/$tag-check$i.txt" 2> "$T/$tag-check$i.err"
    rc=$?
    cat "$T/$tag-check$i.txt" "$T/$tag-check$i.err"
    [ $rc -le 3 ] || fail "$tag pair $i: check-estimate exit $rc"
    grep -q '^  BEFORE [0-9][0-9]* steps' "$T/$tag-check$i.txt" && grep -q '^  AFTER  [0-9][0-9]* steps' "$T/$tag-check$i.txt" ||
      fail "$tag pair $i: check-estimate does not report both traces' step counts"
    if [ $rc = 0 ] && awk -v g="$g" 'BEGIN {exit !(g < 0.05)}'; then
      fail "$tag pair $i: check-estimate confirmed a gain the program's step time does not show (gain $g)"
    fi
    "$COLLSCOPE" check-estimate "$T/$tag-plain$i" "$T/$tag-fused$i" --json > "$T/$tag-check$i.json" 2>/dev/null
    "$PY" - "$T/$tag-check$i.json" $rc <<'PYEOF' || fail "$tag pair $i: check-estimate's JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "collscope-check-estimate" and d["version"] == 2, d
assert d["before_steps"] >= 0 and d["after_steps"] >= 0, d
assert d["pass"] == (sys.argv[2] == "0"), d
assert not d["pass"] or (d["comparable"] and d["gain_shown"] and d["measured_gain_share"] >= 0.05), d
PYEOF
  done
  med=$(echo $gains | tr ' ' '\n' | sort -n | sed -n 2p)
  echo "$tag: measured gain of fusion (median of 3 pairs): $(awk -v g="$med" 'BEGIN {printf "%.1f", 100 * g}') %"
  if awk -v g="$med" 'BEGIN {exit !(g < 0.05)}'; then
    for i in 1 2 3; do
      "$COLLSCOPE" report "$T/$tag-plain$i" --format json -o "$T/$tag-plain$i.json" 2>/dev/null ||
        fail "$tag: report of unfused run $i failed"
      "$PY" - "$T/$tag-plain$i.json" $op <<'PYEOF' || fail "$tag: fusion proposed although it gains less than 5 % (run $i)"
import json, sys
d = json.load(open(sys.argv[1]))
f = [p for p in d["proposals"] if p["kind"] == "fusion" and p["op"] == sys.argv[2]]
assert not f, f
assert any(" %s" % sys.argv[2] in l for l in d["proposals_declined"]), d["proposals_declined"]
print("no fusion proposal: " + "; ".join(d["proposals_declined"]))
PYEOF
    done
    echo "ok: $tag: fusion gains less than 5 %: not proposed, and the report says why"
  fi
done
pass
