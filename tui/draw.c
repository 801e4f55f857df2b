/* draw.c: the drawing helpers every screen shares (see draw.h). */
#include "config.h"
#include "tui/draw.h"
#include "common/msg.h"

#include <stdio.h>
#include <string.h>
#include <wchar.h>

enum { P_COLL = 1, P_WAIT, P_P2P, P_GPU, P_OTHER, P_GAP, P_HEAD, P_WARN, P_AXIS };

/* glyphs per kind: UTF-8, ASCII */
static const wchar_t glyph_u[CS_TK_N] = { L'\x00b7', L'\x2588', L'\x2591', L'\x2592', L'\x2593', L'\x258c' };
static const wchar_t glyph_a[CS_TK_N] = { L'.', L'#', L':', L'=', L'%', L'|' };
const char *const tui_draw_kind_name[CS_TK_N] = { "compute", "collective", "waiting", "p2p", "GPU/compute", "other" };

void tui_draw_init(tui_model *m)
{
    if (m->colour && has_colors()) {
        start_color();
        use_default_colors();
        init_pair(P_COLL, COLOR_BLUE, -1);
        init_pair(P_WAIT, COLOR_YELLOW, -1);
        init_pair(P_P2P, COLOR_GREEN, -1);
        init_pair(P_GPU, COLOR_MAGENTA, -1);
        init_pair(P_OTHER, COLOR_CYAN, -1);
        init_pair(P_GAP, -1, -1);
        init_pair(P_HEAD, COLOR_BLACK, COLOR_CYAN);
        init_pair(P_WARN, COLOR_RED, -1);
        init_pair(P_AXIS, COLOR_WHITE, -1);
    } else {
        m->colour = 0;
    }
}

wchar_t tui_draw_glyph(const tui_model *m, int kind)
{
    return m->utf8 ? glyph_u[kind] : glyph_a[kind];
}

attr_t tui_draw_kind_attr(const tui_model *m, int kind)
{
    if (!m->colour)
        return kind == CS_TK_GAP ? A_DIM : A_NORMAL;
    static const short pair[CS_TK_N] = { P_GAP, P_COLL, P_WAIT, P_P2P, P_GPU, P_OTHER };
    return COLOR_PAIR(pair[kind]) | (kind == CS_TK_GAP ? A_DIM : A_NORMAL);
}

attr_t tui_draw_warn_attr(const tui_model *m)
{
    return m->colour ? COLOR_PAIR(P_WARN) | A_BOLD : A_BOLD;
}

void tui_draw_put(WINDOW *w, int y, int x, wchar_t ch, attr_t attr)
{
    cchar_t cc;
    wchar_t s[2] = { ch, 0 };
    setcchar(&cc, s, attr, (short)PAIR_NUMBER(attr), NULL);
    mvwadd_wch(w, y, x, &cc);
}

void tui_draw_text(WINDOW *w, int y, int x, int n, attr_t attr, const char *s)
{
    if (n <= 0)
        return;
    /* Names come from the trace (files, communicators, call sites, kernel
     * names): a control byte would move the cursor (a newline ends the
     * line, a tab jumps) or draw ^X; such a string is shown escaped, as
     * every command prints it (\n, \xHH: common/msg.h). */
    char esc[1024];
    for (const unsigned char *p = (const unsigned char *)s; *p && p - (const unsigned char *)s < n; p++)
        if (*p < 0x20 || *p == 0x7f) {
            s = cs_msg_name(s, esc, sizeof esc);
            break;
        }
    wattrset(w, attr);
    mvwaddnstr(w, y, x, s, n);
    wattrset(w, A_NORMAL);
}

void tui_draw_line(WINDOW *w, int y, int cols, attr_t attr, const char *s)
{
    wmove(w, y, 0);
    wclrtoeol(w);
    tui_draw_text(w, y, 0, cols, attr, s);
}

static attr_t head_attr(const tui_model *m)
{
    return m->colour ? COLOR_PAIR(P_HEAD) : A_REVERSE;
}

void tui_draw_header(const tui_model *m, WINDOW *w, int cols, const char *title)
{
    char buf[1024];
    wattrset(w, head_attr(m));
    for (int i = 0; i < cols; i++)
        mvwaddch(w, 0, i, ' ');
    wattrset(w, A_NORMAL);
    snprintf(buf, sizeof buf, " collscope-tui | %s | %s | %d lanes, %lld spans | analysis: %s", title, m->dir, m->nLane,
             (long long)m->nSpan,
             m->analysed == 2   ? "yes"
             : m->analysed == 1 ? "stale"
                                : "none");
    tui_draw_text(w, 0, 0, cols, head_attr(m), buf);
}

void tui_draw_statusline(const tui_model *m, WINDOW *w, int y, int cols, const char *right)
{
    int rl = right ? (int)strlen(right) : 0;
    wmove(w, y, 0);
    wclrtoeol(w);
    attr_t a = m->status_warn ? tui_draw_warn_attr(m) : A_NORMAL;
    int room = cols - rl - 1;
    tui_draw_text(w, y, 0, room > 0 ? room : cols, a, m->status);
    if (right && rl < cols)
        tui_draw_text(w, y, cols - rl, rl, A_NORMAL, right);
}

void tui_draw_too_small(WINDOW *w, int rows, int cols)
{
    werase(w);
    char msg[128];
    snprintf(msg, sizeof msg, "Terminal too small (%dx%d): need at least %dx%d. Resize, or q to quit.", cols, rows,
             TUI_MIN_COLS, TUI_MIN_ROWS);
    /* wrap at word boundaries */
    int y = 0, len = (int)strlen(msg), i = 0;
    while (i < len && y < rows) {
        int n = len - i < cols ? len - i : cols;
        if (i + n < len)
            for (int j = n; j > cols / 2; j--)
                if (msg[i + j] == ' ') {
                    n = j;
                    break;
                }
        mvwaddnstr(w, y++, 0, msg + i, n);
        i += n;
        while (msg[i] == ' ')
            i++;
    }
}
