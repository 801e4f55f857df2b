#!/bin/sh
# scripts/format.sh check|fix: hold the C and CUDA sources of the tree to
# .clang-format. `check` names each file clang-format would change and
# exits 1; `fix` rewrites them. Generated files (*.gen.*) are not sources.
set -u
cd "$(dirname "$0")/.." || exit 1
mode=${1:-check}
command -v clang-format >/dev/null 2>&1 || { echo "format.sh: clang-format is not installed (apt-get install clang-format)" >&2; exit 1; }
if [ -d .git ] || git rev-parse --git-dir >/dev/null 2>&1; then
  files=$(git ls-files '*.c' '*.h' '*.cu')
else
  files=$(find common libtrace interpose analyzer tui kernels tests examples bench \
            \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) ! -name '*.gen.*' | sort)
fi
bad=0
list=
for f in $files; do
  case "$f" in *.gen.*) continue ;; esac
  list="$list $f"
done
if [ "$mode" = fix ]; then
  # shellcheck disable=SC2086 # one word a file (the tree's names have no blanks)
  [ -z "$list" ] || clang-format --style=file -i $list || bad=1
  exit $bad
fi
# One clang-format for all the files (a process each cost 10 s of CPU):
# --dry-run -Werror names each place it would change, FILE:LINE:COL: ...
out=$(mktemp "${TMPDIR:-/tmp}/cs-format.XXXXXX") || exit 1
rc=0
# shellcheck disable=SC2086
[ -z "$list" ] || clang-format --style=file --dry-run -Werror $list > "$out" 2>&1 || rc=$?
if [ $rc -ne 0 ]; then
  named=$(sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' "$out" | sort -u)
  if [ -n "$named" ]; then
    for f in $named; do echo "format-check: $f is not formatted (make format)"; done
  else
    cat "$out" # clang-format failed for another reason: say what it said
  fi
  bad=1
fi
rm -f "$out"
[ $bad -eq 0 ] && echo "format-check: all files formatted"
exit $bad
