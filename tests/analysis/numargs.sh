#!/bin/sh
# Numeric options of the commands: NaN, infinities, negative, overflowing
# and non-numeric values are refused with one message naming the option and
# the value, exit 2; good values still work (a 25 % straggler gate fails a
# job with a persistent straggler, exit 3).
. "$srcdir/tests/lib.sh"
GEN=$B/bench/gen_trace
[ -x "$GEN" ] || fail "bench/gen_trace not built"
"$GEN" "$T/pers.db" --ranks 8 --steps 60 --persistent 3:5000 >/dev/null || fail "gen_trace failed"
"$COLLSCOPE" analyze "$T/pers.db" || fail "analyze failed"
# refused DESC OPTION-REGEX CMD...: exit 2, one line naming the value
refused() {
  _d=$1 _re=$2; shift 2
  "$@" >"$T/out" 2>"$T/err"; _rc=$?
  [ $_rc -eq 2 ] || { cat "$T/err"; fail "$_d: exit $_rc, want 2"; }
  [ "$(wc -l <"$T/err")" -eq 1 ] || { cat "$T/err"; fail "$_d: want one line of message"; }
  grep -Eq -- "$_re" "$T/err" || { cat "$T/err"; fail "$_d: message does not match /$_re/"; }
  echo "ok: $_d: $(cat "$T/err")"
}
for v in nan NaN inf -inf infinity 1e999 -5 abc 25x '' 0x19 ' 25'; do
  refused "--fail-on straggler='$v'" "fail-on straggler.*'$v'" \
    "$COLLSCOPE" report "$T/pers.db" --fail-on "straggler=$v"
  refused "check-estimate --tolerance '$v'" "tolerance.*'$v'" \
    "$COLLSCOPE" check-estimate --tolerance "$v" "$T/pers.db" "$T/pers.db"
done
refused "--fail-on step=nan" "fail-on step.*'nan'" "$COLLSCOPE" report "$T/pers.db" --baseline "$T/pers.db" --fail-on step=nan
refused "--fail-on p99=inf" "fail-on p99.*'inf'" "$COLLSCOPE" report "$T/pers.db" --baseline "$T/pers.db" --fail-on p99=inf
# good values
"$COLLSCOPE" report "$T/pers.db" --fail-on straggler=25% >/dev/null; expect_eq "straggler=25% on a straggler" $? 3
"$COLLSCOPE" report "$T/pers.db" --fail-on straggler=1e9 >/dev/null; expect_eq "straggler=1e9" $? 0
"$COLLSCOPE" report "$T/pers.db" --fail-on straggler=2.5e1 >/dev/null; expect_eq "straggler=2.5e1" $? 3
# the environment: a bad value warns once and keeps the default
COLLSCOPE_MEMCPY_GBPS=nan "$COLLSCOPE" analyze --force "$T/pers.db" 2>"$T/err" || fail "analyze with a bad COLLSCOPE_MEMCPY_GBPS"
[ "$(grep -c COLLSCOPE_MEMCPY_GBPS "$T/err")" -eq 1 ] || { cat "$T/err"; fail "want one warning on COLLSCOPE_MEMCPY_GBPS=nan"; }
pass
