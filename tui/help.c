/* help.c: the help screen: the keys of every screen and the glyphs. Any
 * key but q goes back to the timeline. */
#include "config.h"
#include "tui/screen.h"

#include <stdio.h>

static const char *const help_lines[] = {
    "Timeline",
    "  + =  zoom in around the cursor       -  zoom out         f  fit the whole trace",
    "  h l  Left Right  move the cursor (the view follows)      H L  < >  pan by a quarter",
    "  j k  Down Up  next / previous lane                        Home 0  start   End $  end",
    "  c    group alike ranks into one lane each (with their count) / one lane per rank",
    "  e    on a group's lane: a lane per member (Enter too); on a member's: group them again",
    "  g    go to a time (12.5ms, 3s, 40%)  Enter  select the span at the cursor  Esc  unselect",
    "  w W  next / previous worst collective instance, by arrival skew (needs the analysis)",
    "  s S  next / previous straggler step (needs the analysis)",
    "  /    filter: 'op NAME', 'rank N', 'comm NAME|ID', 'clear'  x  clear the filters",
    "  A    run 'collscope analyze' on this trace now",
    "  F    next failure of the job (a call that never returned, a dead rank): its first culprit's call",
    "Screens",
    "  1 t  timeline    2 T  stats (Tab: next table, < >: sort column, r: reverse)    3 R  ranks by lateness",
    "       (j k: move, Enter: the rank's lane on the timeline, out of its group; g: GPU time per rank,",
    "       a bar of compute, comm exposed, memory, idle; s: its sort key)",
    "  4 G  layout: the ranks as the parallel grid, shaded by their share of the slowdown (arrows, Enter: the",
    "       rank's worst step on the timeline)",
    "  ?  this help  q  quit (from any screen)",
    "Glyphs",
    "  collective (transfer part), waiting part of a collective, point-to-point, GPU kernel or",
    "  compute span (imported traces), other calls (init, markers), compute (no traced call);",
    "  dim: busy less than a quarter. Bold > (UTF-8: a double angle): a call that never returned,",
    "  from its start to the end of the trace.",
    NULL
};

static void help_draw(void *st, tui_model *m, WINDOW *w, int rows, int cols)
{
    (void)st;
    tui_draw_header(m, w, cols, tui_help_screen.name);
    int y = 1;
    for (int i = 0; help_lines[i] && y < rows - 2; i++, y++)
        tui_draw_line(w, y, cols, help_lines[i][0] != ' ' ? A_BOLD : A_NORMAL, help_lines[i]);
    wmove(w, y, 0);
    wclrtoeol(w);
    int x = 2;
    for (int k = 1; k < CS_TK_N + 1 && x < cols - 12; k++) {
        int kind = k % CS_TK_N;
        tui_draw_put(w, y, x, tui_draw_glyph(m, kind), tui_draw_kind_attr(m, kind));
        char buf[32];
        int n = snprintf(buf, sizeof buf, " %s  ", tui_draw_kind_name[kind]);
        tui_draw_text(w, y, x + 1, cols - x - 1, A_NORMAL, buf);
        x += n + 1;
    }
    for (y++; y < rows - 1; y++) {
        wmove(w, y, 0);
        wclrtoeol(w);
    }
    tui_draw_statusline(m, w, rows - 1, cols, " any key: back ");
}

static int help_key(void *st, tui_model *m, tui_ui *ui, int ch)
{
    (void)st;
    (void)ui;
    (void)ch;
    m->screen = TUI_TIMELINE;
    return TUI_HANDLED | TUI_REDRAW;
}

const tui_screen tui_help_screen = {
    .name = "help",
    .keys = "?",
    .modal = 1,
    .draw = help_draw,
    .key = help_key,
};
