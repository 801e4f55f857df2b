#!/bin/sh
# `collscope --help` against each `collscope CMD --help`, and each against
# the command's parser (issue 36): the usage `collscope --help` shows for a
# command is the one its own --help states (word for word); every option
# either names (its usage lines and its option list) is one the parser
# takes (getopt never answers "unrecognized option" or "invalid option");
# every value a "--format a|b|c" (or top's "--sort a|b|c") offers is
# taken, a made-up one refused with a message listing the same values, and
# every name of the table the option dispatches on (read from its source)
# that the command takes is offered: a table's entry missing from --help
# fails. Every value list any --help shows is made from such a table
# (none written by hand in an option table), run's --mpi and
# --hang-action checked on a job that traces nothing.
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
# table_of NAME FILE: the initializer of the array NAME in FILE, from
# "NAME[] = {" to the first "};"
table_of() {
  awk -v n="$1[] = {" 'index($0, n) { on = 1 } on { print } on && /};/ { exit }' "$2"
}
# src_names CMD OPT: the names of the table CMD's OPT dispatches on, read
# from its source (not from the command): the report formats, the export
# and import formats, top's sort keys; nothing for an option with no table
src_names() {
  case "$1 $2" in
    "report --format") grep -oE '\{ "[a-z0-9]+", cs_report_' "$srcdir/analyzer/report/report_format.c" ;;
    "export --format") grep -oE '\.name = "[a-z0-9]+"' "$srcdir/analyzer/formats/export.c" ;;
    "import --format") sed -n '/cs_import_table\[\] = {/,/^};/p' "$srcdir/analyzer/formats/import.c" | grep -oE '\.name = "[a-z0-9]+"' ;;
    "top --sort") grep -E 'cs_live_sort_key\[CS_LIVE_NSORT\] = ' "$srcdir/analyzer/live/live.c" | grep -oE '"[a-z0-9]+"' ;;
    "diff --format" | "status --format") grep -E 'cs_fmt_textjson_name\[\] = ' "$srcdir/common/fmt.c" ;;
    "run --mpi") table_of cs_run_mpis "$srcdir/analyzer/cmd/cmd_run.c" | grep -oE '\{ "[a-z0-9]+"' ;;
    "run --hang-action") table_of cs_run_hang_actions "$srcdir/analyzer/cmd/cmd_run.c" | grep -oE '"[a-z0-9]+"' ;;
  esac | grep -oE '"[a-z0-9]+"' | tr -d '"' | sort -u
}
# Every value list a --help shows ("[--OPT a|b|c") is made from a table
# (issue 36: --help texts generated from the tables the parser uses): no
# cs_opt entry writes one by hand (a literal "a|b" in its values field),
# and src_names finds the table of each list shown.
hand=$(grep -nE 'CS_OPT_(REQUIRED|OPTIONAL), *"[^"]*", *"[a-z0-9-]+(\|[a-z0-9-]+)+"' \
  "$srcdir"/analyzer/cmd/*.c "$srcdir"/tui/*.c 2> /dev/null)
[ -z "$hand" ] || fail "an option's value list written by hand instead of made from its table (.values_of): $hand"
vlists=0
# check_values CMD OPT: the values CMD's usage line offers for OPT
# ("OPT a|b|c"): each taken (the command goes on to the path), a made-up
# one refused with a message that names it and lists exactly the values
# offered, and every name of the option's table (src_names) that the
# command takes offered, or named in OPT's row as a short form ("md for
# short"): a table's entry missing from --help fails here
check_values() {
  _c=$1 _o=$2
  _vals=$(sed '/^$/q' "$T/$_c.help" | tr '\n' ' ' | tr -s ' ' | grep -oE -- "\\[$_o [a-z0-9|]+" | head -n 1 | sed "s/^\\[$_o //")
  [ -n "$_vals" ] || return 0
  echo "$_vals" | tr '|' '\n' | sort > "$T/shown"
  for v in $(cat "$T/shown"); do
    try "$_c" "$_o" "$v"
    grep -q "does-not-exist" "$T/err" ||
      fail "collscope $_c --help offers $_o $v, which its parser refuses: $(head -n 2 "$T/err")"
  done
  try "$_c" "$_o" no-such-value && fail "collscope $_c took $_o no-such-value"
  grep -q "no-such-value" "$T/err" || fail "collscope $_c: $_o no-such-value refused without naming it: $(head -n 2 "$T/err")"
  head -n 1 "$T/err" | sed -e 's/.*no-such-value//' -e 's/^[^a-z]*//' -e 's/)$//' |
    sed -e 's/, /\n/g' -e 's/ or /\n/g' | sort > "$T/listed"
  cmp -s "$T/shown" "$T/listed" ||
    fail "collscope $_c: --help offers $_o $_vals, its refusal of a made-up value lists: $(head -n 1 "$T/err")"
  src_names "$_c" "$_o" > "$T/table"
  _n=0
  for v in $(cat "$T/table"); do
    try "$_c" "$_o" "$v"
    grep -q "does-not-exist" "$T/err" || continue
    _n=$((_n + 1))
    grep -qx "$v" "$T/shown" && continue
    tr '\n' ' ' < "$T/$_c.help" | tr -s ' ' | grep -q "$v for short" ||
      fail "collscope $_c takes $_o $v (a name of its table) but its --help offers only $_vals"
  done
  # the table was read: every value offered is one of its names
  if [ -s "$T/table" ]; then
    for v in $(cat "$T/shown"); do
      grep -qx "$v" "$T/table" || fail "collscope $_c offers $_o $v, which its table's source does not name"
    done
  fi
  nvals=$((nvals + 1))
  echo "ok: $_c $_o $_vals (listed alike when refused; $_n names of its table taken, each offered or named a short form)"
}
nopts=0 nrows=0 nvals=0
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
  # every value list shown comes from a table the test can read
  for vl in $(sed '/^$/q' "$T/$c.help" | tr '\n' ' ' | tr -s ' ' | grep -oE -- '\[--[a-z-]+ [a-z0-9]+(\|[a-z0-9]+)+' |
    sed -E 's/^\[(--[a-z-]+) .*/\1/'); do
    [ -n "$(src_names "$c" "$vl")" ] ||
      fail "collscope $c --help offers a value list for $vl that no table of its source holds (written by hand?)"
    vlists=$((vlists + 1))
  done
  # the values offered (--format a|b|c, --sort a|b|c), each taken, a
  # made-up one refused, and those the command takes all offered
  for vopt in --format --sort; do
    check_values "$c" "$vopt"
  done
done
# run's value lists (--mpi, --hang-action): each value offered goes on to
# the job (a `true` that traces nothing: exit 4, no word of the value), a
# made-up one is refused (exit 2) with a message listing the same values,
# and every name of the table is offered
for ropt in --mpi --hang-action; do
  _vals=$(sed '/^$/q' "$T/run.help" | tr '\n' ' ' | tr -s ' ' | grep -oE -- "\\[$ropt [a-z0-9|]+" | sed "s/^\\[$ropt //")
  [ -n "$_vals" ] || fail "collscope run --help offers no value list for $ropt"
  echo "$_vals" | tr '|' '\n' | sort > "$T/shown"
  src_names run "$ropt" > "$T/table"
  cmp -s "$T/shown" "$T/table" || fail "collscope run offers $ropt $_vals, its table holds $(tr '\n' ' ' < "$T/table")"
  pre=""
  [ "$ropt" = --hang-action ] && pre="--hang-timeout 60"
  for v in $(cat "$T/shown"); do
    # shellcheck disable=SC2086 # $pre is two words or none
    "$COLLSCOPE" run -o "$T/run-$v" $pre "$ropt" "$v" -- true > /dev/null 2> "$T/err" < /dev/null
    _rc=$?
    [ "$_rc" = 4 ] && grep -q "nothing was traced" "$T/err" ||
      fail "collscope run $ropt $v (offered by --help): exit $_rc, $(head -n 2 "$T/err")"
  done
  # shellcheck disable=SC2086
  "$COLLSCOPE" run -o "$T/run-bad" $pre "$ropt" no-such-value -- true > /dev/null 2> "$T/err" < /dev/null
  expect_eq "collscope run $ropt no-such-value: exit status" $? 2
  head -n 1 "$T/err" | sed -e 's/.*no-such-value//' -e 's/^[^a-z]*//' -e 's/)$//' |
    sed -e 's/, /\n/g' -e 's/ or /\n/g' | sort > "$T/listed"
  cmp -s "$T/shown" "$T/listed" ||
    fail "collscope run: --help offers $ropt $_vals, its refusal of a made-up value lists: $(head -n 1 "$T/err")"
  [ -e "$T/run-bad" ] && fail "collscope run $ropt no-such-value made its output folder"
  echo "ok: run $ropt $_vals (each taken, a made-up one refused listing the same, all of its table)"
  vlists=$((vlists + 1))
done
# the check can fail: an option no parser knows is refused as such
"$COLLSCOPE" report --no-such-option "$NX" > /dev/null 2> "$T/err"
grep -qE 'unrecognized option|invalid option' "$T/err" || fail "an unknown option is not refused as such: $(cat "$T/err")"
[ "$nopts" -ge 30 ] || fail "only $nopts options found in the --help texts"
[ "$nrows" -ge 50 ] || fail "only $nrows rows of option lists checked"
# report, export, import, diff and status --format, top --sort
[ "$nvals" -ge 6 ] || fail "only $nvals value lists checked"
# ... and with run's two: every list shown made from a table
[ "$vlists" -ge 9 ] || fail "only $vlists value lists found made from a table"
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
