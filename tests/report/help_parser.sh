#!/bin/sh
# `collscope --help` against each `collscope CMD --help`, and each against
# the command's parser (issue 36): the usage `collscope --help` shows for a
# command is the one its own --help states (word for word); every option
# either names (its usage lines and its option list) is one the parser
# takes (getopt never answers "unrecognized option" or "invalid option");
# every value a "--format a|b|c" offers is taken, and a made-up one refused.
# Nothing is run: each try fails on a path that does not exist or on a
# missing argument, after the parser has read the option.
. "$srcdir/tests/lib.sh"
NX="$T/does-not-exist"
"$COLLSCOPE" --help > "$T/top.txt" || fail "collscope --help failed"
cmds=$(sed -n '/^commands:/,/^$/p' "$T/top.txt" | grep -E '^  [a-z-]+ ' | awk '{ print $1 }')
[ "$(echo "$cmds" | wc -w)" -ge 10 ] || fail "collscope --help lists only: $cmds"
# the usage words of a command: from `collscope --help` (the lines under
# its name) and from its own --help (up to the first blank line)
top_words() {
  awk -v c="$1" '/^  [a-z-]+ / { on = ($1 == c); next } on && /^           / { print } /^$/ { on = 0 }' "$T/top.txt" | tr -s ' \n' '\n' | grep -v '^$'
}
own_words() {
  sed '/^$/q' "$T/$1.help" | sed "1s/^usage: collscope $1//" | tr -s ' \n' '\n' | grep -v '^$'
}
# try CMD ARGS...: CMD with ARGS and one made-up path, or two where one
# is bad usage; its stderr in $T/err
try() {
  _c=$1; shift
  "$COLLSCOPE" "$_c" "$@" "$NX" > /dev/null 2> "$T/err" < /dev/null
  _rc=$?
  if head -n 1 "$T/err" | grep -q '^usage:'; then
    "$COLLSCOPE" "$_c" "$@" "$NX" "$NX" > /dev/null 2> "$T/err" < /dev/null
    _rc=$?
  fi
  return $_rc
}
nopts=0
for c in $cmds; do
  "$COLLSCOPE" "$c" --help > "$T/$c.help" || fail "collscope $c --help failed"
  [ "$(top_words "$c")" = "$(own_words "$c")" ] ||
    fail "collscope --help shows '$(top_words "$c" | tr '\n' ' ')' for $c, its --help '$(own_words "$c" | tr '\n' ' ')'"
  # the options: in the usage lines and at the start of the option list's lines
  { sed '/^$/q' "$T/$c.help"; grep -E '^  +-' "$T/$c.help"; } |
    grep -oE '(^|[ [|])--?[a-zA-Z][a-zA-Z-]*' | sed 's/^[ [|]//' | sort -u > "$T/$c.opts"
  while read -r o; do
    [ "$o" = "-h" ] || [ "$o" = "--help" ] && continue
    # a run with an option and no LAUNCH stops at the missing LAUNCH
    if [ "$c" = run ]; then "$COLLSCOPE" run "$o" > /dev/null 2> "$T/err" < /dev/null
    else try "$c" "$o"; fi
    if grep -qE 'unrecognized option|invalid option|unknown option' "$T/err"; then
      fail "collscope $c --help offers $o, which its parser refuses: $(head -n 2 "$T/err")"
    fi
    nopts=$((nopts + 1))
  done < "$T/$c.opts"
  # the formats offered, each taken; a made-up one refused
  fmts=$(sed '/^$/q' "$T/$c.help" | grep -oE -- '--format [a-z0-9|]+' | head -n 1 | sed 's/--format //')
  [ -n "$fmts" ] || continue
  for v in $(echo "$fmts" | tr '|' ' '); do
    try "$c" --format "$v"
    grep -qiE "unknown format|not a format|unknown .*'$v'" "$T/err" &&
      fail "collscope $c --help offers --format $v, which its parser refuses: $(head -n 2 "$T/err")"
  done
  try "$c" --format no-such-format &&
    fail "collscope $c took --format no-such-format"
  grep -q "no-such-format" "$T/err" || fail "collscope $c: --format no-such-format refused without naming it: $(head -n 2 "$T/err")"
  echo "ok: $c --format $fmts"
done
# the check can fail: an option no parser knows is refused as such
"$COLLSCOPE" report --no-such-option "$NX" > /dev/null 2> "$T/err"
grep -qE 'unrecognized option|invalid option' "$T/err" || fail "an unknown option is not refused as such: $(cat "$T/err")"
[ "$nopts" -ge 30 ] || fail "only $nopts options found in the --help texts"
echo "ok: $(echo "$cmds" | wc -w) commands, $nopts options, usage lines agree"
pass
