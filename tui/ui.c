/* ui.c: the screen manager: the table of screens, one key loop that
 * dispatches to the screen shown, prompts on the status line, and the
 * terminal, restored on every way out (normal exit, errors, signals). */
#include "config.h"
#include "tui/screen.h"
#include "common/msg.h"

#include <langinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The screens, indexed by enum tui_screen_id. */
static const tui_screen *const tui_screens[TUI_NSCREENS] = {
    [TUI_TIMELINE] = &tui_timeline_screen, [TUI_STATS] = &tui_stats_screen, [TUI_RANKS] = &tui_ranks_screen,
    [TUI_LAYOUT] = &tui_layout_screen,     [TUI_HELP] = &tui_help_screen,
};

struct tui_ui {
    tui_model *m;
    void *aState[TUI_NSCREENS]; /* each screen's own state */
    int rc;                     /* exit status after TUI_BREAK */
};

/* ---- the terminal, restored on every way out ---- */

static volatile sig_atomic_t curses_on;
static volatile sig_atomic_t stop_signal;

static void terminal_end(void)
{
    if (curses_on) {
        curses_on = 0;
        endwin();
    }
}

static volatile sig_atomic_t waiting_key; /* in getch: the loop sees stop_signal */

/* SIGINT, SIGTERM, SIGHUP, SIGQUIT: while the browser waits for a key, the
 * loop ends at once and says why; anywhere else (loading, drawing, an
 * analysis) nothing may keep it from ending: the terminal is restored here
 * and the process exits. */
static void on_quit_signal(int sig)
{
    stop_signal = sig;
    if (waiting_key)
        return;
    if (curses_on) { /* not async-signal-safe, as in on_fatal_signal */
        curses_on = 0;
        endwin();
    }
    char msg[96] = "collscope-tui: stopped by signal ";
    size_t n = strlen(msg);
    if (sig >= 10)
        msg[n++] = (char)('0' + sig / 10 % 10);
    msg[n++] = (char)('0' + sig % 10);
    const char tail[] = "; the terminal was restored\n";
    memcpy(msg + n, tail, sizeof tail);
    if (write(2, msg, strlen(msg)) < 0) {
    }
    _exit(128 + sig);
}

static int ui_getch(void)
{
    waiting_key = 1;
    int ch = stop_signal ? ERR : getch();
    waiting_key = 0;
    return ch;
}

static void on_fatal_signal(int sig)
{
    /* Not async-signal-safe, but the terminal matters more than the risk. */
    if (curses_on) {
        curses_on = 0;
        endwin();
    }
    static const char msg[] = "collscope-tui: crashed (fatal signal); the terminal was restored\n";
    if (write(2, msg, sizeof msg - 1) < 0) {
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

void tui_ui_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_quit_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGQUIT, &sa, NULL);
    sa.sa_handler = on_fatal_signal;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGFPE, &sa, NULL);
    sigaction(SIGABRT, &sa, NULL);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
}

int tui_ui_stop_signal(void)
{
    return stop_signal;
}

int tui_ui_exit_signal(void)
{
    int sig = stop_signal;
    terminal_end();
    fprintf(stderr, "collscope-tui: stopped by signal %d (%s); the terminal was restored\n", sig, strsignal(sig));
    return 128 + sig;
}

void tui_ui_suspend(tui_ui *ui)
{
    (void)ui;
    terminal_end();
}

void tui_ui_resume(tui_ui *ui)
{
    (void)ui;
    refresh();
    curses_on = 1;
}

void tui_ui_fail(tui_ui *ui, const char *msg)
{
    terminal_end();
    cs_msg_line(stderr, "%s", msg);
    ui->rc = 1;
}

/* ---- the screens ---- */

tui_ui *tui_ui_new(tui_model *m)
{
    tui_ui *ui = calloc(1, sizeof *ui);
    if (!ui)
        return NULL;
    ui->m = m;
    for (int i = 0; i < TUI_NSCREENS; i++)
        if (tui_screens[i]->create && !(ui->aState[i] = tui_screens[i]->create())) {
            tui_ui_free(ui);
            return NULL;
        }
    return ui;
}

void tui_ui_free(tui_ui *ui)
{
    if (!ui)
        return;
    for (int i = 0; i < TUI_NSCREENS; i++)
        if (tui_screens[i]->destroy)
            tui_screens[i]->destroy(ui->aState[i]);
    free(ui);
}

void tui_ui_draw(tui_ui *ui, WINDOW *win, int rows, int cols)
{
    tui_model *m = ui->m;
    if (rows < TUI_MIN_ROWS || cols < TUI_MIN_COLS) {
        tui_draw_too_small(win, rows, cols);
        return;
    }
    int id = m->screen >= 0 && m->screen < TUI_NSCREENS ? m->screen : TUI_TIMELINE;
    tui_screens[id]->draw(ui->aState[id], m, win, rows, cols);
}

void tui_ui_redraw(tui_ui *ui)
{
    tui_ui_draw(ui, stdscr, LINES, COLS);
    wnoutrefresh(stdscr);
    doupdate();
}

int tui_ui_key(tui_ui *ui, int ch)
{
    tui_model *m = ui->m;
    if (ch == 'q' || ch == 'Q')
        return TUI_HANDLED | TUI_BREAK;
    int id = m->screen >= 0 && m->screen < TUI_NSCREENS ? m->screen : TUI_TIMELINE;
    const tui_screen *cur = tui_screens[id];
    int r = TUI_IGNORED;
    if (cur->modal) {
        r = cur->key(ui->aState[id], m, ui, ch);
    } else {
        if (LINES < TUI_MIN_ROWS || COLS < TUI_MIN_COLS)
            return TUI_HANDLED | TUI_REDRAW;
        for (int i = 0; i < TUI_NSCREENS; i++)
            if (ch > 0 && ch < 128 && strchr(tui_screens[i]->keys, ch)) {
                if (tui_screens[i]->enter)
                    tui_screens[i]->enter(ui->aState[i], m, ui);
                m->screen = i;
                return TUI_HANDLED | TUI_REDRAW;
            }
        r = cur->key(ui->aState[id], m, ui, ch);
    }
    if (r & TUI_RELOADED)
        for (int i = 0; i < TUI_NSCREENS; i++)
            if (tui_screens[i]->reset)
                tui_screens[i]->reset(ui->aState[i]);
    if (!(r & TUI_HANDLED) && ch != KEY_RESIZE && ch != ERR)
        tui_model_status(m, 0, "press ? for the keys");
    return r;
}

int tui_ui_prompt(tui_ui *ui, const char *question, char *out, size_t len)
{
    size_t n = 0;
    out[0] = '\0';
    curs_set(1);
    for (;;) {
        tui_ui_redraw(ui);
        int y = LINES - 1;
        move(y, 0);
        clrtoeol();
        attron(A_BOLD);
        mvaddnstr(y, 0, question, COLS - 1);
        attroff(A_BOLD);
        addnstr(out, COLS - 1 - (int)strlen(question) > 0 ? COLS - 1 - (int)strlen(question) : 0);
        refresh();
        int ch = ui_getch();
        if (stop_signal) {
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

/* ---- the loop ---- */

int tui_ui_run(tui_model *m, const char *term)
{
    atexit(terminal_end);
    SCREEN *scr = newterm(NULL, stdout, stdin);
    if (!scr) {
        fprintf(stderr, "collscope-tui: cannot use terminal type '%s'\n", term);
        return 1;
    }
    set_term(scr);
    curses_on = 1;
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    curs_set(0);
    set_escdelay(25);
    timeout(200);
    const char *nc = getenv("NO_COLOR");
    m->colour = !(nc && *nc) && has_colors();
    m->utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
    tui_draw_init(m);
    tui_ui *ui = tui_ui_new(m);
    if (!ui) {
        terminal_end();
        delscreen(scr);
        fprintf(stderr, "collscope-tui: out of memory\n");
        return 1;
    }
    int dirty = 1;
    for (;;) {
        if (stop_signal) {
            ui->rc = tui_ui_exit_signal();
            break;
        }
        if (dirty) {
            tui_ui_redraw(ui);
            dirty = 0;
        }
        int ch = ui_getch();
        if (ch == ERR)
            continue;
        if (ch == KEY_RESIZE) {
            clearok(curscr, TRUE);
            dirty = 1;
            continue;
        }
        int r = tui_ui_key(ui, ch);
        if (r & TUI_BREAK)
            break;
        dirty = (r & TUI_REDRAW) || !(r & TUI_HANDLED) || dirty;
    }
    int rc = ui->rc;
    terminal_end();
    delscreen(scr);
    tui_ui_free(ui);
    return rc;
}
