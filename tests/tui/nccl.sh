#!/bin/sh
# nccl.sh: collscope-tui in tmux on the NCCL trainer recorded under the CPU
# stand-ins (4 ranks; with the CUPTI stand-in when built): a lane per
# (rank, stream) under each rank's lane, labelled rN sK in order of first
# use; an ncclAllReduce selected on its stream lane, at its GPU time, shows
# its stream and GPU begin, end and duration; kernels drawn as GPU kernels.
. "$srcdir/tests/lib.sh"
. "$S/tests/nccl/nccl_lib.sh"
need_standins
. "$srcdir/tests/tui/tuilib.sh"

cupti=no
[ -e "$SI/libcupti.so.13" ] && cupti=yes
if [ $cupti = yes ]; then
  COLLSCOPE_CUPTI=1 run_trainer "$T/r" "$T/run.out" --steps 4 --buckets 3
else
  run_trainer "$T/r" "$T/run.out" --steps 4 --buckets 3
fi
db=$T/r/trace.db
echo "ok: recorded the NCCL trainer on 4 ranks (CUPTI stand-in: $cupti)"

# -- the lanes: rank N, then rN s1.. (one per stream the rank used)
tui_start 140 44 "env LANG=C.UTF-8 TERM=xterm-256color '$TUI' '$T/r'"
wait_for 'rank 3'
wait_for 'r3 s1'
for r in 0 1 2 3; do
  ns=$(q "$db" "SELECT count(*) FROM (SELECT stream FROM span WHERE rank=$r AND stream IS NOT NULL
                UNION SELECT stream FROM gpu_activity WHERE rank=$r AND kind='kernel' AND stream IS NOT NULL)")
  [ "$ns" -gt 0 ] || fail "rank $r has no stream in the trace"
  k=1
  while [ $k -le "$ns" ]; do
    screen | grep -q "^[ >]r$r s$k " || fail "lane r$r s$k missing"
    k=$((k + 1))
  done
  screen | grep -q "^[ >]r$r s$((ns + 1)) " && fail "rank $r: more stream lanes than streams ($ns)"
  # the rank's lane first, then its streams
  order=$(screen | grep -E "^[ >](rank $r|r$r s[0-9]+) " | cut -c2-8 | sed "s/ *$//" | tr '\n' ,)
  case $order in "rank $r,r$r s1,"*) ;; *) fail "rank $r lanes out of order: $order" ;; esac
done
echo "ok: stream lanes r0..r3 s1..sK under their rank's lane"
keys q
wait_for '\[rc=0\]'

# The summary (version 2) names each stream lane's stream and number.
expect_eq "summary version" "$(q "$db" "SELECT value FROM meta WHERE key='tui_lod_version'")" 2
tb=$(q "$db" "SELECT MIN(first_ns) FROM tui_lanes")
view=$(q "$db" "SELECT (MAX(last_ns) - MIN(first_ns)) * 51 / 50 FROM tui_lanes")

# zoom_keys DUR: the '+' presses that bring the view down to about 4 x DUR.
zoom_keys() {
  _v=$view; _k=""
  while [ "$_v" -gt $(($1 * 4)) ]; do _v=$((_v / 2)); _k="$_k +"; done
  echo "$_k"
}

# -- an ncclAllReduce at its GPU time on rank 0's stream lane: its details
set -- $(q "$db" "SELECT s.id, (s.gpu_begin_ns + s.gpu_end_ns) / 2 - $tb, s.gpu_dur_ns, l.sidx
                  FROM spans s JOIN tui_lanes l ON l.rank = s.rank AND l.stream = s.stream AND l.sidx > 0
                  WHERE s.rank = 0 AND s.op = 'ncclAllReduce' AND s.gpu_dur_ns > 0
                  ORDER BY s.gpu_dur_ns DESC, s.id LIMIT 1" | tr '|' ' ')
[ $# = 4 ] || fail "no ncclAllReduce with GPU times on rank 0"
id=$1; at=$2; gdur=$3; sidx=$4
# the duration as the report prints it (common/fmt.c, cs_fmt_ns)
gfmt=$(awk -v v="$gdur" 'BEGIN { if (v < 1e4) printf "%.2f us", v / 1e3; else if (v < 1e7) printf "%.1f us", v / 1e3;
                                 else if (v < 1e10) printf "%.2f ms", v / 1e6; else printf "%.2f s", v / 1e9 }')
tui_start 140 44 "env LANG=C.UTF-8 TERM=xterm-256color '$TUI' '$T/r'"
wait_for 'r3 s1'
keys g; for c in $(echo "${at}ns" | sed 's/./& /g'); do keys "$c"; done; keys Enter
wait_for 'at \+'
for k in $(zoom_keys "$gdur"); do keys "$k"; sleep 0.05; done
i=0; while [ $i -lt "$sidx" ]; do keys j; i=$((i + 1)); done
wait_for "^>r0 s$sidx "
screen | grep "^>r0 s$sidx " | grep -q '█' || fail "no collective drawn on r0 s$sidx at the allreduce's GPU time"
echo "ok: the allreduce drawn on r0 s$sidx at its GPU time"
keys Enter
wait_for "Selected: ncclAllReduce \(coll\)  rank 0 .*span #$id"
wait_for "stream s$sidx \(0x[0-9a-f]+\).*GPU begin \+[0-9.]+ [mun]?s  end \+[0-9.]+ [mun]?s  duration $gfmt"
echo "ok: details: $(screen | grep -o 'stream s[0-9].*')"
keys q
wait_for '\[rc=0\]'

# -- a kernel on its stream lane (CUPTI records), drawn with the kernel glyph
if [ $cupti = yes ] && [ "$(q "$db" "SELECT count(*) FROM gpu_activity WHERE rank=0 AND kind='kernel'")" -gt 0 ]; then
  m="(g.begin_ns + g.end_ns) / 2"
  set -- $(q "$db" "SELECT $m + COALESCE(k.offset_ns, 0) + CAST(COALESCE(k.drift_ppm, 0) * 1e-6 * ($m - COALESCE(k.ref_ns, 0)) AS INTEGER) - $tb,
                           MAX(g.end_ns - g.begin_ns, 100), l.sidx
                    FROM gpu_activity g JOIN tui_lanes l ON l.rank = g.rank AND l.stream = g.stream AND l.sidx > 0
                    LEFT JOIN clocks k ON k.rank = g.rank
                    WHERE g.rank = 0 AND g.kind = 'kernel' ORDER BY g.end_ns - g.begin_ns DESC LIMIT 1" | tr '|' ' ')
  at=$1; kdur=$2; sidx=$3
  tui_start 140 44 "env LANG=C.UTF-8 TERM=xterm-256color '$TUI' '$T/r'"
  wait_for 'r3 s1'
  keys g; for c in $(echo "${at}ns" | sed 's/./& /g'); do keys "$c"; done; keys Enter
  wait_for 'at \+'
  for k in $(zoom_keys "$kdur"); do keys "$k"; sleep 0.05; done
  i=0; while [ $i -lt "$sidx" ]; do keys j; i=$((i + 1)); done
  wait_for "^>r0 s$sidx .*▓"
  echo "ok: a kernel drawn on r0 s$sidx with the GPU-kernel glyph"
  keys q
  wait_for '\[rc=0\]'
else
  echo "ok: no kernel records (no CUPTI stand-in): kernel glyph not checked"
fi

pass
