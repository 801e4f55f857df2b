/* main.c: collscope-tui, the terminal browser of a trace: options, the
 * terminal's setup and its restoration on every way out (normal exit,
 * errors, signals), and the keys of each screen. */
#include "config.h"
#include "tui/tui.h"

#include <errno.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char tui_usage[] = "usage: collscope-tui [--index] DIR|TRACE.db\n"
                                "\n"
                                "Browse the timeline of a traced job in the terminal: one lane per rank\n"
                                "(and per thread, and per CUDA stream: rN sK, its calls at their GPU times\n"
                                "and its kernels), collectives split into waiting and transfer, the worst\n"
                                "instances and straggler steps of the analysis, stats and ranks screens.\n"
                                "Press ? inside for the keys. See collscope-tui(1).\n"
                                "\n"
                                "  --index      build the timeline summary of the trace (done on first\n"
                                "               open otherwise), print how long it took, and exit\n"
                                "  --version    print the version\n"
                                "\n"
                                "Environment: NO_COLOR (any value) draws without colours; TERM and LANG\n"
                                "as usual (UTF-8 locales get block glyphs, others ASCII).\n"
                                "Exit status: 0; 1 when the trace cannot be read or the terminal cannot be\n"
                                "used (one message says why); 2 on bad usage; 128+N after signal N.\n";

/* ---- the terminal, restored on every way out ---- */

static volatile sig_atomic_t tui_curses_on;
static volatile sig_atomic_t tui_signal;

static void tui_end(void)
{
    if (tui_curses_on) {
        tui_curses_on = 0;
        endwin();
    }
}

static void tui_on_quit_signal(int sig)
{
    tui_signal = sig;
}

static void tui_on_fatal_signal(int sig)
{
    /* Not async-signal-safe, but the terminal matters more than the risk. */
    if (tui_curses_on) {
        tui_curses_on = 0;
        endwin();
    }
    static const char msg[] = "collscope-tui: crashed (fatal signal); the terminal was restored\n";
    if (write(2, msg, sizeof msg - 1) < 0) {
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void tui_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = tui_on_quit_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGQUIT, &sa, NULL);
    sa.sa_handler = tui_on_fatal_signal;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGFPE, &sa, NULL);
    sigaction(SIGABRT, &sa, NULL);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
}

static int tui_exit_signal(void)
{
    int sig = tui_signal;
    tui_end();
    fprintf(stderr, "collscope-tui: stopped by signal %d (%s); the terminal was restored\n", sig, strsignal(sig));
    return 128 + sig;
}

/* ---- helpers ---- */

static void tui_redraw(tui *t)
{
    tui_draw(t, stdscr, LINES, COLS);
    wnoutrefresh(stdscr);
    doupdate();
}

/* A line typed on the status line; 0 when entered, -1 when cancelled. */
static int tui_prompt(tui *t, const char *question, char *out, size_t len)
{
    size_t n = 0;
    out[0] = '\0';
    curs_set(1);
    for (;;) {
        tui_redraw(t);
        int y = LINES - 1;
        move(y, 0);
        clrtoeol();
        attron(A_BOLD);
        mvaddnstr(y, 0, question, COLS - 1);
        attroff(A_BOLD);
        addnstr(out, COLS - 1 - (int)strlen(question) > 0 ? COLS - 1 - (int)strlen(question) : 0);
        refresh();
        int ch = getch();
        if (tui_signal) {
            curs_set(0);
            return -1;
        }
        if (ch == ERR || ch == KEY_RESIZE)
            continue;
        if (ch == 27) {
            curs_set(0);
            return -1;
        }
        if (ch == '\n' || ch == '\r' || ch == KEY_ENTER)
            break;
        if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
            if (n)
                out[--n] = '\0';
        } else if (ch >= 32 && ch < 127 && n + 1 < len) {
            out[n++] = (char)ch;
            out[n] = '\0';
        }
    }
    curs_set(0);
    return 0;
}

static void tui_invalidate_nav(tui *t)
{
    t->worst_loaded = 0;
    t->iWorst = -1;
}

static void tui_filter(tui *t, const char *line)
{
    char what[32] = "", arg[128] = "";
    if (sscanf(line, " %31s %127s", what, arg) < 1) {
        tui_status(t, 1, "filter: type 'op NAME', 'rank N', 'comm ID' or 'clear'");
        return;
    }
    if (!strcmp(what, "clear")) {
        t->f_op = -1;
        t->f_rank = -1;
        t->f_comm = 0;
        tui_status(t, 0, "filters cleared");
    } else if (!strcmp(what, "op") && arg[0]) {
        int found = -1;
        for (int i = 0; i < t->nOp && found < 0; i++)
            if (!strcasecmp(t->aOp[i].name, arg) ||
                (!strncasecmp(t->aOp[i].name, "MPI_", 4) && !strcasecmp(t->aOp[i].name + 4, arg)))
                found = i;
        for (int i = 0; i < t->nOp && found < 0; i++)
            if (t->aOp[i].name[0] && strcasestr(t->aOp[i].name, arg))
                found = i;
        if (found < 0) {
            tui_status(t, 1, "filter: no op named '%s'", arg);
            return;
        }
        t->f_op = found;
        tui_status(t, 0, "filter: only %s", t->aOp[found].name);
    } else if (!strcmp(what, "rank") && arg[0]) {
        char *end;
        long r = strtol(arg, &end, 10);
        if (*end || r < 0 || tui_lane_of(t, (int)r, -1) < 0) {
            int old = t->f_rank;
            t->f_rank = -1;
            tui_filters_apply(t);
            int ok = !*end && r >= 0 && tui_lane_of(t, (int)r, -1) >= 0;
            t->f_rank = old;
            if (!ok) {
                tui_filters_apply(t);
                tui_status(t, 1, "filter: no rank '%s' in this trace", arg);
                return;
            }
        }
        t->f_rank = (int)r;
        tui_status(t, 0, "filter: only rank %ld", r);
    } else if (!strcmp(what, "comm") && arg[0]) {
        char *end;
        long long c = strtoll(arg, &end, 0);
        if (*end || c == 0) {
            tui_status(t, 1, "filter: '%s' is not a communicator id", arg);
            return;
        }
        t->f_comm = c;
        tui_status(t, 0, "filter: only communicator %#llx", c);
    } else {
        tui_status(t, 1, "filter: type 'op NAME', 'rank N', 'comm ID' or 'clear'");
        return;
    }
    tui_filters_apply(t);
    tui_invalidate_nav(t);
}

/* The collscope command: next to this program, in the build tree, or PATH. */
static void tui_find_collscope(char *out, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *sl = strrchr(self, '/');
        if (sl) {
            *sl = '\0';
            snprintf(out, len, "%s/collscope", self);
            if (access(out, X_OK) == 0)
                return;
            snprintf(out, len, "%s/../analyzer/collscope", self);
            if (access(out, X_OK) == 0)
                return;
        }
    }
    snprintf(out, len, "collscope");
}

static void tui_run_analysis(tui *t, const char *arg)
{
    char exe[PATH_MAX];
    tui_find_collscope(exe, sizeof exe);
    tui_end();
    fprintf(stderr, "collscope-tui: running %s analyze %s ...\n", exe, t->dir);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        execlp(exe, exe, "analyze", t->dir, (char *)NULL);
        fprintf(stderr, "collscope-tui: cannot run %s: %s\n", exe, strerror(errno));
        _exit(127);
    }
    int st = 0;
    if (pid > 0)
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
    int ok = pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    /* reopen, keeping the view */
    int64_t t0 = t->t0, t1 = t->t1;
    int cur_col = t->cur_col, cur_lane = t->cur_lane, colour = t->colour, utf8 = t->utf8;
    char err[1024];
    tui_close(t);
    if (tui_open(t, arg, 1, 0, err, sizeof err) != 0) {
        fprintf(stderr, "collscope-tui: %s\n", err);
        exit(1);
    }
    t->t0 = t0;
    t->t1 = t1;
    t->cur_col = cur_col;
    t->cur_lane = cur_lane < t->nVis ? cur_lane : 0;
    t->colour = colour;
    t->utf8 = utf8;
    refresh();
    tui_curses_on = 1;
    if (ok)
        tui_status(t, 0, "analysis done: w/W worst instances, s/S straggler steps, R ranks");
    else
        tui_status(t, 1, "collscope analyze failed (exit %d); see the messages above after quitting",
                   WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

/* ---- keys ---- */

enum { TUI_CONTINUE = 0, TUI_QUIT = 1 };

static int tui_key_timeline(tui *t, int ch, const char *arg)
{
    int ncols = t->ncols > 0 ? t->ncols : 1;
    int64_t w = t->t1 - t->t0;
    char line[160];
    switch (ch) {
    case '+':
    case '=': tui_zoom(t, 0.5); break;
    case '-':
    case '_': tui_zoom(t, 2.0); break;
    case 'f':
        t->t0 = t->t_begin;
        t->t1 = t->t_end + (t->t_end - t->t_begin) / 50 + 1;
        break;
    case KEY_LEFT:
    case 'h':
        if (--t->cur_col < 0) {
            tui_pan(t, -w / 4);
            t->cur_col = ncols / 4 - 1;
        }
        break;
    case KEY_RIGHT:
    case 'l':
        if (++t->cur_col >= ncols) {
            tui_pan(t, w / 4);
            t->cur_col = ncols - ncols / 4;
        }
        break;
    case KEY_SLEFT:
    case 'H':
    case '<': tui_pan(t, -w / 4); break;
    case KEY_SRIGHT:
    case 'L':
    case '>': tui_pan(t, w / 4); break;
    case KEY_DOWN:
    case 'j':
        if (t->cur_lane + 1 < t->nVis)
            t->cur_lane++;
        break;
    case KEY_UP:
    case 'k':
        if (t->cur_lane > 0)
            t->cur_lane--;
        break;
    case KEY_NPAGE: t->cur_lane = t->cur_lane + 10 < t->nVis ? t->cur_lane + 10 : t->nVis - 1; break;
    case KEY_PPAGE: t->cur_lane = t->cur_lane > 10 ? t->cur_lane - 10 : 0; break;
    case KEY_HOME:
    case '0':
        tui_center(t, t->t_begin + w / 2 - w / 50, w);
        t->cur_col = 0;
        break;
    case KEY_END:
    case '$':
        tui_center(t, t->t_end - w / 2 + w / 50, w);
        t->cur_col = ncols - 1;
        break;
    case 'g':
        if (tui_prompt(t, "go to time (e.g. 12.5ms, 3s, 40%): ", line, sizeof line) == 0) {
            int64_t x = tui_parse_time(t, line);
            if (x < 0)
                tui_status(t, 1, "go to: '%s' is not a time (12.5ms, 3s, 800us, 40%%)", line);
            else {
                tui_center(t, t->t_begin + x, 0);
                char b[32];
                tui_status(t, 0, "at +%s", tui_fmt_ns(x, b, sizeof b));
            }
        }
        break;
    case '\n':
    case '\r':
    case KEY_ENTER:
        if (tui_select_at_cursor(t) != 0)
            tui_status(t, 1, "no span at the cursor on this lane");
        else
            tui_status(t, 0, "selected %s; Esc unselects", t->aOp[t->sel.op].name);
        break;
    case 27: t->has_sel = 0; break;
    case 'w': tui_next_worst(t, 1); break;
    case 'W': tui_next_worst(t, -1); break;
    case 's': tui_next_step(t, 1); break;
    case 'S': tui_next_step(t, -1); break;
    case '/':
        if (tui_prompt(t, "filter (op NAME | rank N | comm ID | clear): ", line, sizeof line) == 0)
            tui_filter(t, line);
        break;
    case 'x': tui_filter(t, "clear"); break;
    case 'A': tui_run_analysis(t, arg); break;
    default: return -1;
    }
    return TUI_CONTINUE;
}

static int tui_key_stats(tui *t, int ch)
{
    switch (ch) {
    case '\t':
        t->stats_table = (t->stats_table + 1) % 3;
        t->stats_top = 0;
        break;
    case KEY_BTAB:
        t->stats_table = (t->stats_table + 2) % 3;
        t->stats_top = 0;
        break;
    case '<':
    case KEY_LEFT:
    case 'h':
        t->stats_sort = (t->stats_sort + 7) % 8;
        tui_sort_stats(t);
        break;
    case '>':
    case KEY_RIGHT:
    case 'l':
        t->stats_sort = (t->stats_sort + 1) % 8;
        tui_sort_stats(t);
        break;
    case 'r':
        t->stats_rev = !t->stats_rev;
        tui_sort_stats(t);
        break;
    case KEY_DOWN:
    case 'j': t->stats_top++; break;
    case KEY_UP:
    case 'k':
        if (t->stats_top > 0)
            t->stats_top--;
        break;
    default: return -1;
    }
    return TUI_CONTINUE;
}

static int tui_key_ranks(tui *t, int ch)
{
    switch (ch) {
    case KEY_DOWN:
    case 'j': t->ranks_top++; break;
    case KEY_UP:
    case 'k':
        if (t->ranks_top > 0)
            t->ranks_top--;
        break;
    case '\n':
    case '\r':
    case KEY_ENTER:
        if (t->ranks_top < t->nRank) {
            int l = tui_lane_of(t, t->aRank[t->ranks_top].rank, -1);
            if (l >= 0)
                t->cur_lane = l;
            t->screen = TUI_TIMELINE;
        }
        break;
    default: return -1;
    }
    return TUI_CONTINUE;
}

static int tui_key(tui *t, int ch, const char *arg)
{
    if (ch == 'q' || ch == 'Q')
        return TUI_QUIT;
    if (t->screen == TUI_HELP) {
        t->screen = TUI_TIMELINE;
        return TUI_CONTINUE;
    }
    if (LINES < TUI_MIN_ROWS || COLS < TUI_MIN_COLS)
        return TUI_CONTINUE;
    switch (ch) {
    case '?': t->screen = TUI_HELP; return TUI_CONTINUE;
    case '1':
    case 't': t->screen = TUI_TIMELINE; return TUI_CONTINUE;
    case '2':
    case 'T':
        if (!t->stats_loaded) {
            tui_status(t, 0, "reading the stats of %lld spans...", (long long)t->nSpan);
            tui_redraw(t);
        }
        t->screen = TUI_STATS;
        tui_status(t, 0, "stats of the whole trace");
        return TUI_CONTINUE;
    case '3':
    case 'R': t->screen = TUI_RANKS; return TUI_CONTINUE;
    }
    int r = -1;
    if (t->screen == TUI_TIMELINE)
        r = tui_key_timeline(t, ch, arg);
    else if (t->screen == TUI_STATS)
        r = tui_key_stats(t, ch);
    else if (t->screen == TUI_RANKS)
        r = tui_key_ranks(t, ch);
    if (r < 0 && ch != KEY_RESIZE && ch != ERR)
        tui_status(t, 0, "press ? for the keys");
    return TUI_CONTINUE;
}

/* ---- main ---- */

static int tui_index_only(const char *arg)
{
    tui t;
    char err[1024];
    if (tui_open(&t, arg, 0, 1, err, sizeof err) != 0) {
        fprintf(stderr, "collscope-tui: %s\n", err);
        tui_close(&t);
        return 1;
    }
    cs_tui_index_info info;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (cs_tui_index_build(t.path, NULL, NULL, &info, err, sizeof err) != 0) {
        fprintf(stderr, "collscope-tui: %s\n", err);
        tui_close(&t);
        return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("collscope-tui: indexed %lld spans of %s in %.2f s (%d levels, finest bucket %lld ns)\n",
           (long long)info.spans, t.path, (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9,
           info.levels, (long long)1 << info.shift);
    tui_close(&t);
    return 0;
}

int main(int argc, char **argv)
{
    const char *arg = NULL;
    int index_only = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(tui_usage, stdout);
            return 0;
        } else if (!strcmp(argv[i], "--version")) {
            printf("collscope-tui %s\n", PACKAGE_VERSION);
            return 0;
        } else if (!strcmp(argv[i], "--index")) {
            index_only = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "collscope-tui: unknown option '%s'\n%s", argv[i], tui_usage);
            return 2;
        } else if (!arg) {
            arg = argv[i];
        } else {
            fputs(tui_usage, stderr);
            return 2;
        }
    }
    if (!arg) {
        fputs(tui_usage, stderr);
        return 2;
    }
    setlocale(LC_ALL, "");
    if (index_only)
        return tui_index_only(arg);
    tui_signals();
    tui t;
    char err[1024];
    if (tui_open(&t, arg, 1, 0, err, sizeof err) != 0 || tui_signal) {
        tui_close(&t);
        if (tui_signal)
            return tui_exit_signal();
        fprintf(stderr, "collscope-tui: %s\n", err);
        return 1;
    }
    const char *term = getenv("TERM");
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO) || !term || !*term || !strcmp(term, "dumb")) {
        fprintf(stderr, "collscope-tui: %s: cannot draw a terminal UI here\n",
                !isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO) ? "standard input and output must be a terminal"
                : term && *term                                 ? "TERM is dumb"
                                                                : "TERM is not set");
        tui_close(&t);
        return 1;
    }
    atexit(tui_end);
    SCREEN *scr = newterm(NULL, stdout, stdin);
    if (!scr) {
        fprintf(stderr, "collscope-tui: cannot use terminal type '%s'\n", term);
        tui_close(&t);
        return 1;
    }
    set_term(scr);
    tui_curses_on = 1;
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    curs_set(0);
    set_escdelay(25);
    timeout(200);
    const char *nc = getenv("NO_COLOR");
    t.colour = !(nc && *nc) && has_colors();
    t.utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
    tui_draw_init(&t);
    int rc = 0;
    int dirty = 1;
    for (;;) {
        if (tui_signal) {
            rc = tui_exit_signal();
            break;
        }
        if (dirty) {
            tui_redraw(&t);
            dirty = 0;
        }
        int ch = getch();
        if (ch == ERR)
            continue;
        dirty = 1;
        if (ch == KEY_RESIZE) {
            clearok(curscr, TRUE);
            continue;
        }
        if (tui_key(&t, ch, arg) == TUI_QUIT)
            break;
    }
    tui_end();
    delscreen(scr);
    tui_close(&t);
    return rc;
}
