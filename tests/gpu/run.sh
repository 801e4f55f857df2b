#!/bin/sh
# tests/gpu/run.sh: GPU checks of the NCCL/CUDA tracing (not part of make
# check; at most 8 minutes). On a machine with a GPU, in a configured build
# directory: builds what it needs, runs the NCCL trainer (4 ranks share the
# GPUs there are; 1 rank per GPU is best) traced with the real libraries,
# then a PyTorch DDP script (world size 1, NCCL backend) if torch imports,
# and checks the spans, the GPU times, and that the preload adds no GPU
# synchronization (no cudaStreamSynchronize/cudaDeviceSynchronize/
# cudaEventSynchronize span beyond the program's own); a kernel that holds
# rank 0's stream 8 s before a collective, named by collscope status while
# it runs and completed after. Then apply mode's
# NCCL fusion (tests/nccl/fuse_prog, COLLSCOPE_FUSE=1: the same checksum
# as unfused, fused calls in the trace, no fallback warning; with its
# guard on, 40 steps: the same checksum, the guard's votes agree on every
# rank through the real NCCL), and the kernels' checks (tests/gpu/kernels.sh).
#   tests/gpu/run.sh [BUILD_DIR]     (default: ./build)
# Exit 0 all passed; 77 no GPU (SKIP printed); anything else a failure.
set -u
B=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "FAIL: no build directory ${1:-build}"; exit 1; }
S=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "FAIL: GPU checks: $*"; exit 1; }
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 || { echo "SKIP: no GPU"; exit 77; }
nvidia-smi -L
ngpu=$(nvidia-smi -L | grep -c '^GPU')
jobs=$(nproc 2>/dev/null || echo 4)
timeout 240 make -C "$B" -j"$jobs" analyzer/collscope interpose/collscope-openmpi.la interpose/collscope-nompi.la \
  examples/nccl_trainer tests/nccl/fuse_prog kernels/libcskernels.la examples/mpi_trainer_ompi > "$B/gpu-build.log" 2>&1 || { tail -n 30 "$B/gpu-build.log"; fail "build failed"; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export COLLSCOPE_LIBDIR=$B/interpose/.libs COLLSCOPE_CUPTI=1
T=$(mktemp -d /tmp/cs-gpu.XXXXXX)
q() { sqlite3 -batch -noheader "$1" "$2"; }
np=$ngpu; [ "$np" -gt 4 ] && np=4
echo "== NCCL trainer, $np rank(s), real CUDA and NCCL"
start=$(date +%s)
timeout 120 mpirun.openmpi -np "$np" "$B/examples/nccl_trainer" --steps 50 --buckets 4 > "$T/bare.out" 2>&1 ||
  { tail "$T/bare.out"; fail "untraced trainer failed"; }
bare_s=$(( $(date +%s) - start ))
timeout 180 "$B/analyzer/collscope" run -o "$T/r" -- mpirun.openmpi -np "$np" "$B/examples/nccl_trainer" --steps 50 --buckets 4 \
  > "$T/run.out" 2> "$T/run.err" || { tail "$T/run.err"; fail "traced trainer failed"; }
db=$T/r/trace.db
[ "$(grep -E '^weights checksum' "$T/run.out")" = "$(grep -E '^weights checksum' "$T/bare.out")" ] || fail "results differ traced"
for r in $(seq 0 $((np - 1))); do
  line=$(grep -o "calls: rank $r .*" "$T/run.out")
  for kv in ${line#calls: rank $r }; do
    op=${kv%%=*}; want=${kv#*=}
    got=$(q "$db" "SELECT count(*) FROM spans WHERE rank=$r AND op='$op'")
    [ "$got" = "$want" ] || fail "rank $r $op: trace $got, program $want"
  done
done
echo "ok: per-op counts match"
nc=$(q "$db" "SELECT count(*) FROM spans WHERE op LIKE 'nccl%' AND kind IN ('coll','rooted','send','recv')")
ng=$(q "$db" "SELECT count(*) FROM spans WHERE op LIKE 'nccl%' AND kind IN ('coll','rooted','send','recv') AND gpu_end_ns >= gpu_begin_ns AND gpu_begin_ns > 0")
[ "$nc" = "$ng" ] || fail "GPU times on $ng of $nc collectives"
echo "ok: GPU begin/end on all $nc collectives; median GPU time $(q "$db" "SELECT gpu_dur_ns FROM spans WHERE gpu_dur_ns IS NOT NULL ORDER BY gpu_dur_ns LIMIT 1 OFFSET (SELECT count(*)/2 FROM spans WHERE gpu_dur_ns IS NOT NULL)") ns"
bad=$(q "$db" "SELECT count(*) FROM spans WHERE gpu_begin_ns IS NOT NULL AND grp IS NULL AND gpu_begin_ns < begin_ns - 1000000")
[ "$bad" = 0 ] || fail "$bad collectives ran on the GPU more than 1 ms before they were called (clock conversion)"
syncs=$(q "$db" "SELECT count(*) FROM spans WHERE kind='sync'")
want=$(grep -o "calls: rank [0-9]* .*" "$T/run.out" | grep -o 'cuda[A-Za-z]*Synchronize=[0-9]*' | awk -F= '{s+=$2} END {print s+0}')
[ "$syncs" = "$want" ] || fail "sync spans $syncs, program made $want (the tool added synchronization?)"
echo "ok: no synchronization added ($syncs = the program's own)"
nk=$(q "$db" "SELECT count(*) FROM gpu_activity WHERE kind='kernel'")
[ "$nk" -gt 0 ] || fail "no CUPTI kernel records (COLLSCOPE_CUPTI=1; see $T/run.err)"
nj=$(q "$db" "SELECT count(*) FROM spans s JOIN gpu_activity a ON a.rank=s.rank AND a.corr=s.corr AND a.kind='kernel' WHERE s.kind='launch'")
echo "ok: CUPTI: $nk kernel records, $nj joined to their launch call"
"$B/analyzer/collscope" report "$T/r" | sed -n '/^GPU overlap/,/^$/p'
echo "== a kernel that holds rank 0's stream 8 s before a collective: status names it, then it completes"
# A long but finite GPU delay (never a kernel that does not end): seq 2 of
# the world communicator (the broadcast is seq 0) waits behind it.
timeout 120 "$B/analyzer/collscope" run -o "$T/stall" -- mpirun.openmpi -np "$np" "$B/examples/nccl_trainer" --steps 4 \
  --gpu-delay-us 8000000 --gpu-delay-step 1 --delay-ranks 0 > "$T/stall.out" 2> "$T/stall.err" &
spid=$!
found=
for i in $(seq 1 60); do
  sleep 0.25
  [ -d "$T/stall/logs" ] || continue
  "$B/analyzer/collscope" status "$T/stall" --after 2 > "$T/stall.status" 2>&1
  grep -Eq '^nccl_stall: seq 2 of .* \(ncclAllReduce, [0-9]+ B\): rank 0 stalled: GPU work never started' "$T/stall.status" &&
    { found=1; break; }
done
wait $spid || { tail "$T/stall.err"; fail "the trainer with a GPU delay failed"; }
[ -n "$found" ] || { cat "$T/stall.status"; fail "status did not name rank 0's held collective (seq 2) within 15 s"; }
echo "ok: live: $(grep '^nccl_stall' "$T/stall.status")"
"$B/analyzer/collscope" status "$T/stall" > "$T/stall.after" 2>&1 || fail "status after the job: $(cat "$T/stall.after")"
grep -q 'nccl_stall\|GPU work' "$T/stall.after" && fail "GPU work still in flight after the job: $(cat "$T/stall.after")"
[ "$(q "$T/stall/trace.db" "SELECT count(*) FROM spans WHERE flags & 1024")" = 0 ] || fail "a completed collective ingested as in flight"
d=$(q "$T/stall/trace.db" "SELECT gpu_end_ns - end_ns FROM spans WHERE rank = 0 AND op = 'ncclAllReduce' AND seq = 2")
[ -n "$d" ] && [ "$d" -ge 7000000000 ] || fail "the held collective's GPU end came ${d:-no} ns after its call, want >= 7 s"
echo "ok: it completed, its GPU end $((d / 1000000)) ms after the call"
echo "== apply mode: NCCL fusion, $np rank(s), real CUDA and NCCL"
fz() { # fz NAME [VAR=VALUE...]: tests/nccl/fuse_prog traced into $T/NAME (FZ_STEPS steps, 5)
  _n=$1; shift
  env "$@" timeout 120 "$B/analyzer/collscope" run -o "$T/$_n" -- mpirun.openmpi -np "$np" "$B/tests/nccl/fuse_prog" --steps "${FZ_STEPS:-5}" \
    > "$T/$_n.out" 2> "$T/$_n.err" || { tail "$T/$_n.err"; fail "fuse_prog ($_n) failed"; }
  grep '^checksum: [0-9a-f]' "$T/$_n.out" || fail "fuse_prog ($_n) printed no checksum"
}
timeout 120 mpirun.openmpi -np "$np" "$B/tests/nccl/fuse_prog" --steps 5 > "$T/fbare.out" 2>&1 ||
  { tail "$T/fbare.out"; fail "untraced fuse_prog failed"; }
want=$(grep '^checksum:' "$T/fbare.out")
[ -n "$want" ] || fail "untraced fuse_prog printed no checksum"
[ "$(fz unfused)" = "$want" ] || fail "fuse_prog results differ traced (not fused)"
[ "$(fz fused COLLSCOPE_FUSE=1 COLLSCOPE_FUSE_GUARD=0)" = "$want" ] || fail "fuse_prog results differ fused ($want unfused)"
! grep 'collscope: apply mode' "$T/fused.err" || fail "apply mode fell back on the GPU (warnings above)"
nfz=$(q "$T/fused/trace.db" "SELECT count(*) FROM spans WHERE flags & 4")
nmb=$(q "$T/fused/trace.db" "SELECT count(*) FROM spans WHERE flags & 256")
[ "$nfz" = $((2 * 5 * np)) ] || fail "fused calls $nfz, want $((2 * 5 * np)) (2 a step a rank)"
bad=$(q "$T/fused/trace.db" "SELECT count(*) FROM spans f WHERE f.flags & 4 AND (SELECT sum(m.bytes) FROM spans m
  WHERE m.flags & 256 AND m.rank = f.rank AND m.comm = f.comm AND m.tag = f.tag) IS NOT f.bytes")
[ "$bad" = 0 ] || fail "$bad fused calls whose bytes are not their members' total"
ngt=$(q "$T/fused/trace.db" "SELECT count(*) FROM spans WHERE flags & 4 AND gpu_end_ns >= gpu_begin_ns AND gpu_begin_ns > 0")
echo "ok: fusion: $want fused and unfused; $nfz fused calls carrying $nmb calls, $ngt with GPU times"
timeout 120 mpirun.openmpi -np "$np" "$B/tests/nccl/fuse_prog" --steps 40 > "$T/gbare.out" 2>&1 ||
  { tail "$T/gbare.out"; fail "untraced fuse_prog (40 steps) failed"; }
gwant=$(grep '^checksum:' "$T/gbare.out")
[ "$(FZ_STEPS=40 fz guarded COLLSCOPE_FUSE=1)" = "$gwant" ] || fail "fuse_prog results differ fused with the guard ($gwant unfused)"
! grep 'collscope: apply mode' "$T/guarded.err" || fail "apply mode's guard fell back on the GPU (warnings above)"
gw=$(q "$T/guarded/trace.db" "SELECT count(*) FROM fuse_guard WHERE what = 'window' AND family = 'nccl' AND rank = 0")
[ "$gw" -ge 10 ] || fail "the NCCL guard measured $gw windows on rank 0, want 10 or more"
gdiff=$(q "$T/guarded/trace.db" "SELECT count(*) FROM (SELECT comm, window FROM fuse_guard WHERE what = 'window'
  GROUP BY comm, window, setting, calls HAVING count(*) != $np OR max(time_ns) > 1.01 * min(time_ns))")
[ "$gdiff" = 0 ] || fail "$gdiff guard windows whose figures differ between the ranks"
echo "ok: guard: $gwant with the guard on, $gw windows measured alike on every rank, decisions: $(q "$T/guarded/trace.db" \
  "SELECT group_concat(window || ':' || setting || ' ' || why, '; ') FROM fuse_guard WHERE what = 'decision' AND rank = 0")"
echo "== PyTorch DDP (world size 1, NCCL)"
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  cat > "$T/ddp.py" <<'PY'
import os, torch, torch.distributed as dist
os.environ.setdefault("MASTER_ADDR", "127.0.0.1"); os.environ.setdefault("MASTER_PORT", "29533")
dist.init_process_group("nccl", rank=0, world_size=1)
m = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(256, 256).cuda(), device_ids=[0])
opt = torch.optim.SGD(m.parameters(), lr=0.01)
for _ in range(20):
    opt.zero_grad(); m(torch.randn(64, 256, device="cuda")).sum().backward(); opt.step()
torch.cuda.synchronize(); dist.destroy_process_group(); print("ddp done")
PY
  RANK=0 timeout 180 "$B/analyzer/collscope" run --mpi none -o "$T/ddp" -- python3 "$T/ddp.py" > "$T/ddp.out" 2>&1 ||
    { tail "$T/ddp.out"; fail "DDP run failed"; }
  n=$(q "$T/ddp/trace.db" "SELECT count(*) FROM spans WHERE op='ncclAllReduce' AND gpu_begin_ns IS NOT NULL")
  [ "$n" -gt 0 ] || fail "no timed ncclAllReduce in the DDP trace"
  echo "ok: DDP: $n timed allreduces, $(q "$T/ddp/trace.db" "SELECT count(*) FROM spans WHERE op LIKE '%LaunchKernel'") kernel launches"
else
  echo "note: torch with CUDA not importable; DDP check skipped"
fi
echo "== apply mode for MPI on 4 ranks with a core each (bench/fuse_bench.sh; figures, not a gate)"
# The 4-rank figures of apply mode (>= 3x less time in communication, the
# prediction within 25 %) need a core per rank, which the 2-core CI VM lacks.
if [ "$(nproc)" -ge 4 ] && [ -x "$B/examples/mpi_trainer_ompi" ]; then
  RANKS=4 REPS=3 STEPS=300 timeout 150 sh "$S/bench/fuse_bench.sh" "$B" 2>/dev/null ||
    echo "note: fuse_bench missed a figure (see above)"
else
  echo "note: fewer than 4 cores or no mpi_trainer_ompi; skipped"
fi
echo "== kernels"
sh "$S/tests/gpu/kernels.sh" "$B"; rc=$?
[ $rc -eq 0 ] || [ $rc -eq 77 ] || fail "kernels.sh exit $rc"
rm -rf "$T"
echo "SUMMARY: trainer $np rank(s) ${bare_s}s bare; $nc collectives timed; $nk CUPTI kernel records ($nj joined); $nfz fused calls, results identical; PASS"
exit 0
