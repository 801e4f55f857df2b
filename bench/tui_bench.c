/* tui_bench: how fast the terminal browser opens a trace and redraws it,
 * measured headlessly: the same model and screens as collscope-tui,
 * drawn into a curses screen whose output goes to /dev/null.
 *   tui_bench TRACE.db [--cols C] [--rows R]
 * Prints the time to build the summary (when missing), the open time, and
 * the redraw times (p50 and max) over every zoom level from the whole
 * trace down to a few microseconds, against the targets 1 s and 20 ms.
 *   tui_bench DIR|TRACE.db --first-screen [--cols C] [--rows R]
 * Opens as collscope-tui does (building the summary when missing, merging
 * a job kept as rank stores) and draws the first screen (alike ranks
 * grouped where they outnumber the rows); prints one line: the time from
 * the start to the first full screen, and its parts. */
#include "config.h"
#include "tui/screen.h"

#include "common/fmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int bench_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A curses screen on /dev/null, rows x cols; NULL when none. */
static SCREEN *bench_screen(FILE *out, FILE *in, int rows, int cols)
{
    SCREEN *scr = out && in ? newterm("xterm-256color", out, in) : NULL;
    if (!scr && out && in)
        scr = newterm("vt100", out, in);
    if (scr) {
        set_term(scr);
        resize_term(rows, cols);
    }
    return scr;
}

/* --first-screen: open as collscope-tui does, draw the first screen. */
/* The trace at path opened as the commands open it. */
static int tui_model_open_path(tui_model *t, const char *path, int build_index, int quiet, char *err, size_t errlen)
{
    cs_source src;
    if (cs_source_open(path, &src, err, errlen) != 0) {
        memset(t, 0, sizeof *t);
        return -1;
    }
    return tui_model_open(t, &src, build_index, quiet, err, errlen);
}

static int bench_first_screen(const char *path, int rows, int cols, double t_start)
{
    char err[1024];
    tui_model t;
    double a = bench_now();
    if (tui_model_open_path(&t, path, 1, 1, err, sizeof err) != 0) {
        fprintf(stderr, "tui_bench: %s\n", err);
        return 1;
    }
    double open_s = bench_now() - a;
    FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
    SCREEN *scr = bench_screen(out, in, rows, cols);
    tui_ui *ui = scr ? tui_ui_new(&t) : NULL;
    if (!ui) {
        fprintf(stderr, "tui_bench: cannot open a headless curses screen\n");
        return 1;
    }
    t.colour = has_colors();
    t.utf8 = 1;
    tui_draw_init(&t);
    a = bench_now();
    tui_ui_draw(ui, stdscr, rows, cols);
    wnoutrefresh(stdscr);
    doupdate();
    double now = bench_now();
    int groups = 0;
    for (int i = 0; i < t.nVis; i++)
        groups += t.aVisGrp[i] >= 0;
    printf("first screen: %.1f ms (open %.1f ms, first frame %.1f ms): %d ranks, %lld spans, %d rows on screen "
           "(%d of them groups' lanes)%s\n",
           (now - t_start) * 1e3, open_s * 1e3, (now - a) * 1e3, t.nRk, (long long)t.nSpan,
           t.nVis - t.lane_top < rows - 5 ? t.nVis - t.lane_top : rows - 5, groups,
           t.job ? ", a job kept as rank stores" : "");
    tui_ui_free(ui);
    endwin();
    delscreen(scr);
    tui_model_close(&t);
    fclose(out);
    fclose(in);
    return 0;
}

int main(int argc, char **argv)
{
    double t_start = bench_now();
    const char *path = NULL;
    int cols = 300, rows = 100, first_screen = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--first-screen"))
            first_screen = 1;
        else if (!strcmp(argv[i], "--cols") && i + 1 < argc)
            cols = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rows") && i + 1 < argc)
            rows = atoi(argv[++i]);
        else if (!path)
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: tui_bench TRACE.db|DIR [--first-screen] [--cols C] [--rows R]\n");
        return 2;
    }
    if (first_screen)
        return bench_first_screen(path, rows, cols, t_start);
    char err[1024];
    tui_model t;
    /* the summary, when missing, is built once, as collscope-tui does */
    if (tui_model_open_path(&t, path, 0, 1, err, sizeof err) != 0) {
        fprintf(stderr, "tui_bench: %s\n", err);
        return 1;
    }
    if (!t.idx.present || t.idx.stale) {
        cs_tui_index_info info;
        double a = bench_now();
        if (cs_tui_index_build(t.path, NULL, NULL, &info, err, sizeof err) != 0) {
            fprintf(stderr, "tui_bench: %s\n", err);
            return 1;
        }
        printf("summary build: %lld spans in %.2f s (%d levels, finest bucket %lld ns)\n", (long long)info.spans,
               bench_now() - a, info.levels, (long long)1 << info.shift);
    }
    tui_model_close(&t);
    double a = bench_now();
    if (tui_model_open_path(&t, path, 0, 1, err, sizeof err) != 0) {
        fprintf(stderr, "tui_bench: %s\n", err);
        return 1;
    }
    double open_s = bench_now() - a;
    FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
    SCREEN *scr = bench_screen(out, in, rows, cols);
    if (!scr) {
        fprintf(stderr, "tui_bench: cannot open a headless curses screen\n");
        return 1;
    }
    t.colour = has_colors();
    t.utf8 = 1;
    tui_draw_init(&t);
    tui_ui *ui = tui_ui_new(&t);
    if (!ui) {
        fprintf(stderr, "tui_bench: out of memory\n");
        return 1;
    }
    /* the first frame, as the user sees it after opening */
    a = bench_now();
    tui_ui_draw(ui, stdscr, rows, cols);
    wnoutrefresh(stdscr);
    doupdate();
    double first = bench_now() - a;
    double times[512];
    int n = 0, levels = 0, raw = 0;
    t.cur_col = (cols - TUI_LABEL_W) / 2;
    int64_t width0 = t.t1 - t.t0;
    for (int z = 0; z < 60 && n < 500; z++) {
        /* three frames at this zoom: here, panned right, panned back */
        for (int p = 0; p < 3 && n < 500; p++) {
            if (p == 1)
                tui_model_pan(&t, (t.t1 - t.t0) / 4);
            if (p == 2)
                tui_model_pan(&t, -(t.t1 - t.t0) / 4);
            a = bench_now();
            tui_ui_draw(ui, stdscr, rows, cols);
            wnoutrefresh(stdscr);
            doupdate();
            times[n++] = (bench_now() - a) * 1e3;
            if (getenv("TUI_BENCH_VERBOSE"))
                fprintf(stderr, "view %lld ns level %d: %.2f ms\n", (long long)(t.t1 - t.t0), t.lod_level,
                        times[n - 1]);
        }
        levels++;
        raw += t.lod_level < 0;
        int64_t w = t.t1 - t.t0;
        if (w <= (int64_t)(cols - TUI_LABEL_W) * 4)
            break;
        tui_model_zoom(&t, 0.5);
        if (t.t1 - t.t0 >= w)
            break;
    }
    tui_ui_free(ui);
    endwin();
    delscreen(scr);
    qsort(times, (size_t)n, sizeof *times, bench_cmp);
    double p50 = times[n / 2], max = times[n - 1];
    char b1[32], b2[32];
    printf("trace: %s: %lld spans, %d lanes, %s long\n", t.path, (long long)t.nSpan, t.nLane,
           cs_fmt_ns(t.t_end - t.t_begin, b1, sizeof b1));
    printf("terminal: %dx%d (headless)\n", cols, rows);
    printf("open: %.1f ms (target < 1000 ms) %s\n", open_s * 1e3, open_s < 1.0 ? "ok" : "MISSED");
    printf("first frame: %.2f ms\n", first * 1e3);
    printf("redraw over %d zoom levels (%s down to %s, %d read raw), %d frames: p50 %.2f ms, max %.2f ms"
           " (target < 20 ms) %s\n",
           levels, cs_fmt_ns(width0, b1, sizeof b1), cs_fmt_ns(t.t1 - t.t0, b2, sizeof b2), raw, n, p50, max,
           max < 20.0 ? "ok" : "MISSED");
    tui_model_close(&t);
    fclose(out);
    fclose(in);
    return 0;
}
