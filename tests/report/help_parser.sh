#!/bin/sh
# `collscope --help` against each `collscope CMD --help`, and each against
# the command's parser (issue 36): the usage `collscope --help` shows for a
# command is the one its own --help states (word for word); every option
# either names (its usage lines and its option list) is one the parser
# takes (getopt never answers "unrecognized option" or "invalid option");
# every value a "--format a|b|c" offers is taken, and a made-up one refused.
# Each row of a command's option list ("-o, --output FILE", made from the
# command's option table, common/opts.h) agrees with the parser: both forms
# are the same option, one that takes an argument refuses to go without
# it, one that takes none refuses one; and each option the list names is
# in the command's part of its man page (docs/collscope.1, and
# docs/collscope-tui.1 for collscope-tui).
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
# the man page's text for command $1 (its synopsis lines and its entry
# under COMMANDS), roff escapes and fonts taken out
man_part() {
  awk -v c="$1" '
    function name(w) { gsub(/\\/, "", w); return w }
    /^\.SH/ { sec = $2 }
    sec == "SYNOPSIS" && /^\.B collscope / { on = (name($3) == c); next }
    sec == "SYNOPSIS" && /^\.br/ { on = 0 }
    sec == "COMMANDS" && /^\.TP/ { tp = 1; next }
    sec == "COMMANDS" && tp && /^\.B [a-z][a-z\\-]*$/ { on = (name($2) == c) }
    { tp = 0 }
    sec != "SYNOPSIS" && sec != "COMMANDS" { on = 0 }
    on { print }' "$srcdir/docs/collscope.1" | sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g'
}
# check_rows NAME HELPFILE MANTEXT: each row against the parser (through
# "$@" after the three, the command line that starts the command) and
# the man page
check_rows() {
  _name=$1 _help=$2 _man=$3; shift 3
  grep -E '^  -' "$_help" | sed -E 's/^  //; s/   *.*$//' > "$T/rows"
  [ -s "$T/rows" ] || return 0
  while read -r row; do
    short=$(echo "$row" | grep -oE '^-[a-zA-Z]' || true)
    long=$(echo "$row" | grep -oE -- '--[a-z][a-z-]*' | head -n 1 || true)
    meta=$(echo "$row" | sed -E 's/^-[a-zA-Z](, )?//; s/^--[a-z][a-z-]*//' | tr -d ' ')
    [ "$long" = "--help" ] && continue
    for form in $short $long; do
      if [ -n "$meta" ]; then
        # an option that takes an argument, given none
        "$@" "$form" > /dev/null 2> "$T/err" < /dev/null
        grep -q 'requires an argument' "$T/err" ||
          fail "$_name: the list shows '$row' but $form with no argument is not refused as such: $(head -n 2 "$T/err")"
      elif [ "$form" = "$long" ]; then
        "$@" "$form=x" "$NX" > /dev/null 2> "$T/err" < /dev/null
        grep -q "doesn't allow an argument" "$T/err" ||
          fail "$_name: the list shows '$row' without an argument but $form=x is not refused as such: $(head -n 2 "$T/err")"
      fi
    done
    # both forms of a row are one option: given twice as each, no error
    # other than the missing operand (usage) or the path
    if [ -n "$short" ] && [ -n "$long" ]; then
      "$@" "$short" v1 "$long" v2 > /dev/null 2> "$T/err" < /dev/null
      grep -qE 'unrecognized|invalid option' "$T/err" && fail "$_name: '$row': $(head -n 2 "$T/err")"
    fi
    # the man page names it
    mform=${long:-$short}
    grep -qE -- "(^|[^a-z-])$mform([^a-z-]|\$)" "$_man" ||
      fail "$_name --help lists $mform, its man page does not"
    nrows=$((nrows + 1))
  done < "$T/rows"
}
nopts=0 nrows=0
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
  # the option list's rows against the parser and the man page
  man_part "$c" > "$T/$c.man"
  [ -s "$T/$c.man" ] || fail "docs/collscope.1 has no part for $c"
  check_rows "collscope $c" "$T/$c.help" "$T/$c.man" "$COLLSCOPE" "$c"
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
[ "$nrows" -ge 50 ] || fail "only $nrows rows of option lists checked"
# collscope-tui: its own --help against its parser and its man page
TUI=$(dirname "$COLLSCOPE")/../tui/collscope-tui
if [ -x "$TUI" ]; then
  "$TUI" --help > "$T/tui-own.help" || fail "collscope-tui --help failed"
  sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$srcdir/docs/collscope-tui.1" > "$T/tui-own.man"
  check_rows collscope-tui "$T/tui-own.help" "$T/tui-own.man" "$TUI"
  grep -q -- '--index' "$T/tui-own.help" || fail "collscope-tui --help does not list --index"
fi
echo "ok: $(echo "$cmds" | wc -w) commands, $nopts options, usage lines agree; $nrows list rows agree with the parsers and the man pages"
pass
