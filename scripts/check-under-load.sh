#!/bin/sh
# scripts/check-under-load.sh: a command (default `make check`, in the
# current folder: the build tree) with N busy loops beside it, to show
# that the suite holds on a loaded machine (tests must not rest on having
# the cores to themselves).
#
#   scripts/check-under-load.sh [-n N] [COMMAND [ARG]...]
#
# N (default 8, or $CS_LOAD): the busy loops, each a shell spinning on
# one core for as long as the command runs. They are stopped by their
# process ids when the command ends, and when this script is interrupted
# or ended (SIGINT, SIGTERM, SIGHUP: the command gets the same signal)
# or exits for any other reason.
# Exit status: the command's; 2 for bad usage.
# `make check-under-load` in the build tree runs it with `make check`
# (TESTS=... and CS_LOAD=N pass on).
set -u
n=${CS_LOAD:-8}
if [ "${1:-}" = -n ]; then
  [ $# -ge 2 ] || { echo "usage: check-under-load.sh [-n N] [COMMAND...]" >&2; exit 2; }
  n=$2
  shift 2
fi
case $n in
  '' | *[!0-9]*) echo "check-under-load.sh: -n wants a number of busy loops, not '$n'" >&2; exit 2 ;;
esac
[ $# -gt 0 ] || set -- make check
pids= cmd=
stop() {
  for p in $pids; do kill "$p" 2> /dev/null; done
  for p in $pids; do wait "$p" 2> /dev/null; done
  pids=
}
trap 'stop' EXIT
for sig in INT:130 TERM:143 HUP:129; do
  trap "[ -z \"\$cmd\" ] || kill -${sig%:*} \$cmd 2> /dev/null; stop; exit ${sig#*:}" ${sig%:*}
done
i=0
while [ $i -lt "$n" ]; do
  sh -c 'while :; do :; done' < /dev/null > /dev/null 2>&1 &
  pids="$pids $!"
  i=$((i + 1))
done
echo "check-under-load: $n busy loops (pids$pids) beside: $*"
# The command in the background, so that a signal reaches the traps at
# once (a shell runs them only when its foreground command has ended).
"$@" &
cmd=$!
rc=0
wait $cmd || rc=$?
cmd=
stop
echo "check-under-load: busy loops stopped; the command exited $rc"
exit $rc
