#!/bin/sh
# Every term the text report prints is defined in docs/guide.md's glossary
# (issue 36), checked both ways on the MPI demo trace and an imported
# 16-rank GPU job (tests/import/gpu_pipe_gen.py), by glossary.py (TERMS
# there maps each glossary term to how the report prints it; a term the
# reports print must be in the glossary, every glossary term must be in
# TERMS, and every section title of the reports must be one the test
# knows; tests/nccl/straggler.sh runs it on the NCCL stand-in job). The
# Markdown report links to the glossary, whose heading is there.
. "${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
PY=${PYTHON3:-python3}
command -v "$PY" > /dev/null || skip "$PY not installed"
gunzip -c "$S/tests/analysis/data/demo_shared_cores.db.gz" > "$T/demo.db" || fail "cannot unpack the demo trace"
check "generate the GPU job" $PY "$S/tests/import/gpu_pipe_gen.py" "$T/gpu" --dp 4 --pp 4 --slow-rank 6 --factor 2
"$COLLSCOPE" import -o "$T/gpu.out" "$T/gpu" > "$T/gpu.imp" 2>&1 || { cat "$T/gpu.imp"; fail "import failed"; }
for n in demo gpu; do
  tr="$T/$n.db"
  [ "$n" = gpu ] && tr="$T/gpu.out"
  "$COLLSCOPE" report "$tr" --full > "$T/$n.txt" || fail "$n: report failed"
  "$COLLSCOPE" report "$tr" --format markdown > "$T/$n.md" || fail "$n: markdown report failed"
  grep -q '\[glossary\](docs/guide.md#glossary)' "$T/$n.md" || fail "$n: the Markdown report does not link to the glossary"
done
$PY "$S/tests/report/glossary.py" "$S/docs/guide.md" "$T/demo.txt" "$T/gpu.txt" ||
  fail "the glossary and the report disagree (above)"
pass
