/* draw.h: what every screen draws with: colours, the glyph of each kind,
 * clipped text, the header and the status line. Screens draw into any
 * curses WINDOW, so that bench/tui_bench renders headlessly with the same
 * code. Works with and without colours and UTF-8: every kind has its own
 * glyph, colours only add to it. */
#ifndef CS_TUI_DRAW_H
#define CS_TUI_DRAW_H

#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif
#include <curses.h>

#include "tui/model.h"

/* Smallest terminal the screens are drawn in. */
#define TUI_MIN_COLS 50
#define TUI_MIN_ROWS 12
/* Width of the lane labels at the left of the timeline. */
#define TUI_LABEL_W 9
/* Wider where the labels need it (groups' lanes), up to this. */
#define TUI_LABEL_MAX 160

/* The name of each kind (CS_TK_*), as the legends show it. */
extern const char *const tui_draw_kind_name[CS_TK_N];

/* Set up the colours after initscr/newterm; clears m->colour when the
 * terminal has none. */
void tui_draw_init(tui_model *m);
/* The glyph and the attributes of a kind. */
wchar_t tui_draw_glyph(const tui_model *m, int kind);
attr_t tui_draw_kind_attr(const tui_model *m, int kind);
/* Attributes of warnings (the status line's). */
attr_t tui_draw_warn_attr(const tui_model *m);

/* One wide character at (y, x). */
void tui_draw_put(WINDOW *w, int y, int x, wchar_t ch, attr_t attr);
/* Text clipped to n columns at (y, x). */
void tui_draw_text(WINDOW *w, int y, int x, int n, attr_t attr, const char *s);
/* Clear line y, then write s clipped to cols. */
void tui_draw_line(WINDOW *w, int y, int cols, attr_t attr, const char *s);
/* Line 0: the program, the screen's title, the trace and its analysis. */
void tui_draw_header(const tui_model *m, WINDOW *w, int cols, const char *title);
/* Line y: the model's status at the left, `right` at the right. */
void tui_draw_statusline(const tui_model *m, WINDOW *w, int y, int cols, const char *right);
/* The whole window: "Terminal too small", wrapped at word boundaries. */
void tui_draw_too_small(WINDOW *w, int rows, int cols);

#endif
