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
for f in $files; do
  case "$f" in *.gen.*) continue ;; esac
  if [ "$mode" = fix ]; then
    clang-format --style=file -i "$f"
  elif ! clang-format --style=file "$f" | cmp -s "$f" -; then
    echo "format-check: $f is not formatted (make format)"; bad=1
  fi
done
[ "$mode" = fix ] || { [ $bad -eq 0 ] && echo "format-check: all files formatted"; }
exit $bad
