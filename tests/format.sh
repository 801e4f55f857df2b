#!/bin/sh
# The sources follow the one indent style (.clang-format): the check that
# `make format-check` runs, as a test, so CI holds the tree to it.
. "$srcdir/tests/lib.sh"
command -v clang-format >/dev/null 2>&1 || skip "clang-format not installed (apt-get install clang-format)"
sh "$S/scripts/format.sh" check > "$T/out" 2>&1 || { cat "$T/out"; fail "sources not formatted: run make format"; }
cat "$T/out"
pass
