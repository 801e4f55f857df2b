# tests/tui/tuilib.sh: drive collscope-tui in a private tmux server.
# Source after tests/lib.sh. Provides: $TUI, $TM (tmux command),
# tui_start W H CMD, screen, keys KEY..., wait_for REGEX [SECONDS],
# wait_gone REGEX, line N, tui_pid. The server is killed on exit.
[ "${CS_HAVE_NCURSES:-yes}" = no ] && skip "ncursesw not found at configure time: no collscope-tui"
TUI="$B/tui/collscope-tui"
[ -x "$TUI" ] || skip "collscope-tui not built"
command -v tmux >/dev/null 2>&1 || skip "tmux not installed"
TM="tmux -L cs-test-$$ -f /dev/null"
at_exit '$TM kill-server 2> /dev/null'

# tui_start W H CMD: a fresh session running CMD in sh; the pane stays
# after the command ends (the command's own output stays visible).
# The new session starts before the old one is killed: a server left with
# no session exits, and a new-session racing that exit fails ("server
# exited unexpectedly").
tui_start() {
  $TM new-session -d -s next -x "$1" -y "$2" "$3; echo \"[rc=\$?]\"; stty -a | tr ' ;' '\n\n' | grep -x -- '-*icanon' | sed 's/^/[tty /;s/\$/]/'; sleep 600"
  $TM kill-session -t =t 2>/dev/null
  $TM rename-session -t =next t
  $TM set-option -t t status off >/dev/null
  $TM set-window-option -t t aggressive-resize on >/dev/null 2>&1
}
screen() { $TM capture-pane -p -t t; }
keys() { $TM send-keys -t t "$@"; }
# wait_for REGEX [SECONDS]: until the screen matches (grep -E), else fail.
wait_for() {
  _n=$(( ${2:-15} * 10 ))
  while [ $_n -gt 0 ]; do
    screen | grep -Eq -- "$1" && { echo "ok: screen shows /$1/"; return 0; }
    sleep 0.1; _n=$((_n - 1))
  done
  echo "--- screen ---" >&2; screen >&2; echo "--------------" >&2
  fail "screen never showed /$1/"
}
wait_gone() {
  _n=$(( ${2:-15} * 10 ))
  while [ $_n -gt 0 ]; do
    screen | grep -Eq -- "$1" || { echo "ok: screen no longer shows /$1/"; return 0; }
    sleep 0.1; _n=$((_n - 1))
  done
  echo "--- screen ---" >&2; screen >&2; echo "--------------" >&2
  fail "screen still shows /$1/"
}
# line N: line N (1-based) of the screen.
line() { screen | sed -n "$1p"; }
# tui_pid: the collscope-tui process of the session.
tui_pid() { pgrep -P "$($TM list-panes -t t -F '#{pane_pid}')" -x collscope-tui | head -n 1; }
resize() { $TM resize-window -t t -x "$1" -y "$2"; }
