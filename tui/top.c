/* top.c: `collscope top`'s terminal view (top.h). */
#include "config.h"
#include "tui/top.h"
#include "common/msg.h"
#include "tui/draw.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t top_sig;

static void top_on_signal(int sig)
{
    top_sig = sig;
}

static double top_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void top_draw(cs_live *l, int sort, double interval_s, const cs_tui_top_hooks *hooks)
{
    int rows = LINES, cols = COLS;
    const char *title = hooks && hooks->title ? hooks->title(hooks->arg) : NULL;
    erase();
    if (rows < 3 + (title != NULL) || cols < 40) {
        tui_draw_line(stdscr, 0, cols, A_NORMAL, "terminal too small; q quits");
        refresh();
        return;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int y = 0;
    if (title)
        tui_draw_line(stdscr, y++, cols, A_BOLD, title);
    if (f) {
        cs_live_frame(l, f, cols, rows - 1 - y, sort);
        fclose(f);
    }
    for (char *line = buf, *next; line && *line && y < rows - 1; line = next, y++) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        attr_t a = A_NORMAL;
        if (strncmp(line, "ALARM", 5) == 0 || strstr(line, " SLOW"))
            a = A_BOLD;
        else if (strncmp(line, " rank", 5) == 0)
            a = A_REVERSE;
        tui_draw_line(stdscr, y, cols, a, line);
    }
    free(buf);
    char st[160];
    snprintf(st, sizeof st, "q %s  s sort: %s  every %.1f s", title ? "leave the view" : "quit",
             cs_live_sort_name[sort], interval_s);
    tui_draw_line(stdscr, rows - 1, cols, A_REVERSE, st);
    refresh();
}

int cs_tui_top(cs_live *l, double interval_s, int sort, const cs_tui_top_hooks *hooks)
{
    char err[1024];
    if (!isatty(0) || !isatty(1)) {
        cs_error("top: the view needs a terminal (use --once for one frame as text)");
        return 1;
    }
    if (!newterm(NULL, stdout, stdin)) {
        cs_error("top: cannot use the terminal (TERM=%s)", getenv("TERM") ? getenv("TERM") : "");
        return 1;
    }
    struct sigaction sa, old[3];
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = top_on_signal;
    sigaction(SIGINT, &sa, &old[0]);
    sigaction(SIGTERM, &sa, &old[1]);
    sigaction(SIGHUP, &sa, &old[2]);
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    curs_set(0);
    int rc = 0;
    double next = 0;
    while (!top_sig) {
        double t = top_now();
        if (t >= next) {
            if (cs_live_poll(l, err, sizeof err) != 0) {
                rc = 1;
                break;
            }
            if (hooks && hooks->refreshed)
                hooks->refreshed(hooks->arg);
            top_draw(l, sort, interval_s, hooks);
            next = t + interval_s;
        }
        struct pollfd pf[2] = { { 0, POLLIN, 0 }, { hooks ? hooks->fd : -1, POLLIN, 0 } };
        int wait = (int)((next - top_now()) * 1000);
        if (poll(pf, 2, wait > 0 ? wait : 0) > 0) {
            if (pf[1].revents & POLLIN && hooks && hooks->ready)
                hooks->ready(hooks->arg);
            if (pf[0].revents & (POLLHUP | POLLERR))
                break;
        }
        int ch, quit = 0;
        while ((ch = getch()) != ERR) {
            if (ch == 'q' || ch == 'Q')
                quit = 1;
            else if (ch == 's') {
                sort = (sort + 1) % CS_LIVE_NSORT;
                top_draw(l, sort, interval_s, hooks);
            } else if (ch == KEY_RESIZE)
                top_draw(l, sort, interval_s, hooks);
        }
        if (quit)
            break;
    }
    endwin();
    sigaction(SIGINT, &old[0], NULL);
    sigaction(SIGTERM, &old[1], NULL);
    sigaction(SIGHUP, &old[2], NULL);
    if (rc)
        cs_error("top: %s", err);
    return top_sig ? 128 + top_sig : rc;
}
