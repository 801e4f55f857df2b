#!/bin/sh
# scripts/venv.sh [DIR]: make the project's Python virtual environment, or
# bring it to scripts/venv-requirements.txt (every package pinned: PyTorch,
# Holistic Trace Analysis, protobuf and their dependencies). DIR: $CS_VENV,
# else .venv in the repository's top. Does nothing when every pinned version
# is already there. scripts/setup.sh runs it; tests find the venv through
# need_venv (tests/lib.sh).
#
# Made from Debian 12's /usr/bin/python3 (3.11; package python3-venv), with
# pip quiet. About 6 GB, mostly PyPI torch's CUDA libraries (its Linux wheel
# is the CUDA build; it runs on CPUs but only imports with them installed).
# pip's own settings apply (PIP_INDEX_URL, PIP_FIND_LINKS for a folder of
# wheels already downloaded). Exit 1, with a message, when pip fails.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
venv=${1:-${CS_VENV:-$top/.venv}}
req=$top/scripts/venv-requirements.txt
py=${CS_VENV_PYTHON:-/usr/bin/python3}

# Exit 0 when every "name==version" line of the file is installed as pinned.
check='import sys, importlib.metadata as md
bad = []
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, want = line.split("==")
    try:
        got = md.version(name)
    except md.PackageNotFoundError:
        got = None
    if got != want:
        bad.append("%s (%s)" % (line, got or "missing"))
if bad:
    print("not as pinned: " + ", ".join(bad[:5]) + (" and %d more" % (len(bad) - 5) if len(bad) > 5 else ""))
sys.exit(1 if bad else 0)'

if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "$check" "$req" > /dev/null 2>&1; then
  echo "== Python venv $venv: as pinned"
  exit 0
fi
echo "== Python venv $venv: installing scripts/venv-requirements.txt (torch, HolisticTraceAnalysis, protobuf; minutes, about 6 GB)"
start=$(date +%s)
if [ ! -x "$venv/bin/python" ]; then
  "$py" -m venv "$venv" || {
    echo "scripts/venv.sh: '$py -m venv $venv' failed (Debian 12: apt-get install python3-venv)" >&2
    exit 1
  }
fi
pip_pin=$(grep '^pip==' "$req")
if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check "$pip_pin" ||
  ! "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req"; then
  echo "scripts/venv.sh: pip could not install $req into $venv (its messages are above):" \
    "check the network or proxy (PIP_INDEX_URL, or PIP_FIND_LINKS for downloaded wheels)," \
    "or set CS_VENV to a venv that has these packages" >&2
  exit 1
fi
if ! msg=$("$venv/bin/python" -c "$check" "$req"); then
  echo "scripts/venv.sh: after pip, $venv is still $msg" >&2
  exit 1
fi
echo "== Python venv $venv: made in $(($(date +%s) - start)) s, $(du -sh "$venv" | cut -f1)"
