/* screen.h: one screen of the terminal browser, and the screen manager
 * (ui.c) that walks the table of screens.
 *
 * A screen keeps its own state (created by .create), draws itself from the
 * model and that state, and handles its keys. Screens talk to each other
 * only through the model: a screen that wants another one shown sets
 * m->screen. To add a screen: a file with its tui_screen, declared below,
 * an id in enum tui_screen_id (model.h) and an entry in the table in ui.c. */
#ifndef CS_TUI_SCREEN_H
#define CS_TUI_SCREEN_H

#include "tui/draw.h"
#include "tui/model.h"

/* What a key handler did (flags). */
enum {
    TUI_IGNORED = 0,  /* not a key of this screen */
    TUI_HANDLED = 1,  /* the key was used */
    TUI_REDRAW = 2,   /* the screen must be drawn again */
    TUI_BREAK = 4,    /* leave the browser */
    TUI_RELOADED = 8, /* the model was reopened: every screen drops what it read */
};

typedef struct tui_ui tui_ui;

typedef struct tui_screen {
    const char *name; /* its title in the header */
    const char *keys; /* the keys that show it, from any screen */
    int modal;        /* it gets every key (but q) before the screen keys */
    void *(*create)(void);
    void (*destroy)(void *st);
    /* The model was reopened: forget what was read from it. */
    void (*reset)(void *st);
    /* Called before the screen is shown by one of its keys. */
    void (*enter)(void *st, tui_model *m, tui_ui *ui);
    /* Draw the whole window (rows x cols, at least TUI_MIN_ROWS x TUI_MIN_COLS). */
    void (*draw)(void *st, tui_model *m, WINDOW *w, int rows, int cols);
    /* A key: TUI_* flags. */
    int (*key)(void *st, tui_model *m, tui_ui *ui, int ch);
} tui_screen;

extern const tui_screen tui_timeline_screen; /* timeline.c */
extern const tui_screen tui_stats_screen;    /* stats.c */
extern const tui_screen tui_ranks_screen;    /* ranks.c */
extern const tui_screen tui_layout_screen;   /* layout.c */
extern const tui_screen tui_help_screen;     /* help.c */

/* ---- the screen manager (ui.c) ---- */

/* Catch the quitting signals (SIGINT, SIGTERM, SIGHUP, SIGQUIT) from now
 * on; fatal signals restore the terminal before the process dies. */
void tui_ui_signals(void);
/* The quitting signal received, 0 when none. */
int tui_ui_stop_signal(void);
/* After a quitting signal: restore the terminal, say which signal in one
 * line, and return the exit status 128+N. */
int tui_ui_exit_signal(void);
/* Run the browser on the terminal (stdin and stdout, type term) over the
 * open model until q or a signal; the terminal is restored on every way
 * out. Returns the exit status: 0, 1 (one message said why) or 128+N. */
int tui_ui_run(tui_model *m, const char *term);

/* The screens over model m; NULL when out of memory. */
tui_ui *tui_ui_new(tui_model *m);
void tui_ui_free(tui_ui *ui);
/* Draw the current screen into win (rows x cols). */
void tui_ui_draw(tui_ui *ui, WINDOW *win, int rows, int cols);
/* Handle one key: TUI_* flags. */
int tui_ui_key(tui_ui *ui, int ch);

/* For screens, in the terminal: */
/* Draw the current screen on the terminal now. */
void tui_ui_redraw(tui_ui *ui);
/* A line typed on the status line; 0 when entered, -1 when cancelled. */
int tui_ui_prompt(tui_ui *ui, const char *question, char *out, size_t len);
/* Leave the screen for the plain terminal (messages of a long task), and
 * come back to it. */
void tui_ui_suspend(tui_ui *ui);
void tui_ui_resume(tui_ui *ui);
/* Leave the browser with exit status 1 and the message msg on stderr;
 * the key handler then returns TUI_BREAK. */
void tui_ui_fail(tui_ui *ui, const char *msg);

#endif
