# tui: the terminal browser: libcstui (model, screens, screen manager,
# the TUI index's SQL in tui/store_tui.c; entry cs_tui_main, which
# `collscope tui` calls too), collscope-tui, its tests (tmux) and its
# benchmark.

EXTRA_DIST += tests/tui/extreme.sh tests/tui/tui.sh tests/tui/badinput.sh tests/tui/tuilib.sh tests/tui/nccl.sh tests/tui/tui_readonly.sh tests/tui/layout.sh \
	docs/collscope-tui.1
dist_doc_DATA += docs/tui.md
TESTS += tests/tui/extreme.sh tests/tui/tui.sh tests/tui/badinput.sh tests/tui/nccl.sh tests/tui/tui_readonly.sh tests/tui/layout.sh
# The failures of a hung job: open-ended bars, F (docs/tui.md).
TESTS += tests/tui/failures.sh
EXTRA_DIST += tests/tui/failures.sh
# Thousands of ranks: alike ranks drawn as one lane (docs/tui.md), and how
# fast the first screen of such a job opens (not part of make check).
EXTRA_DIST += bench/tui_scale_bench.sh
TESTS += tests/tui/groups.sh
EXTRA_DIST += tests/tui/groups.sh
# The ranks screen's GPU view on a generated GPU trace (docs/tui.md).
TESTS += tests/tui/gpu.sh
EXTRA_DIST += tests/tui/gpu.sh

if HAVE_NCURSES
noinst_LTLIBRARIES += tui/libcstui.la
tui_libcstui_la_SOURCES = tui/tui.h tui/tui.c tui/model.h tui/model.c tui/groups.h tui/groups.c tui/lanes.h tui/lanes.c \
	tui/analysis.h tui/analysis.c tui/draw.h tui/draw.c tui/screen.h tui/ui.c \
	tui/timeline.c tui/stats.c tui/ranks.c tui/layout.c tui/help.c tui/store_tui.h tui/store_tui.c \
	tui/top.h tui/top.c
tui_libcstui_la_CFLAGS = $(AM_CFLAGS) $(NCURSES_CFLAGS) $(SQLITE_CFLAGS)
# What a program that links libcstui links after it.
CS_TUI_LIBS = tui/libcstui.la $(CS_LIVE_LIBS) $(CS_REPORT_LIBS) $(NCURSES_LIBS)

bin_PROGRAMS += tui/collscope-tui
tui_collscope_tui_SOURCES = tui/main.c
tui_collscope_tui_LDADD = $(CS_TUI_LIBS)
dist_man1_MANS += docs/collscope-tui.1

# Headless benchmark (same model and screens, off screen); its traces come
# from bench/tui_gen (bench/local.mk).
noinst_PROGRAMS += bench/tui_bench
bench_tui_bench_SOURCES = bench/tui_bench.c
bench_tui_bench_CFLAGS = $(AM_CFLAGS) $(NCURSES_CFLAGS) $(SQLITE_CFLAGS)
bench_tui_bench_LDADD = $(CS_TUI_LIBS)
else
EXTRA_DIST += docs/collscope-tui.1 tui/store_tui.h tui/store_tui.c
endif
# Names from the trace drawn escaped (a newline, an escape sequence).
TESTS += tests/tui/names.sh
EXTRA_DIST += tests/tui/names.sh
