# tui: the terminal browser (collscope-tui), its summary queries in
# tui/store_tui.c, its tests (tmux) and its benchmark.
# `collscope tui` runs collscope-tui (or says it was not built).
analyzer_collscope_SOURCES += tui/cmd_tui.c

EXTRA_DIST += tests/tui/tui.sh tests/tui/badinput.sh tests/tui/tuilib.sh tests/tui/nccl.sh tests/tui/tui_readonly.sh \
	docs/collscope-tui.1
dist_doc_DATA += docs/tui.md
CS_TESTS += tests/tui/tui.sh tests/tui/badinput.sh tests/tui/nccl.sh tests/tui/tui_readonly.sh

if HAVE_NCURSES
bin_PROGRAMS += tui/collscope-tui
tui_collscope_tui_SOURCES = tui/tui.h tui/model.c tui/draw.c tui/main.c tui/store_tui.h tui/store_tui.c
tui_collscope_tui_CFLAGS = $(AM_CFLAGS) $(NCURSES_CFLAGS) $(SQLITE_CFLAGS)
tui_collscope_tui_LDADD = analyzer/libcsanalysis.la $(CS_STORE_LIBS) $(NCURSES_LIBS) $(PTHREAD_LIBS) -lm
dist_man1_MANS += docs/collscope-tui.1

# Headless benchmark (same drawing code, off screen); its traces come from
# bench/tui_gen (bench/local.mk).
noinst_PROGRAMS += bench/tui_bench
bench_tui_bench_SOURCES = bench/tui_bench.c tui/tui.h tui/model.c tui/draw.c tui/store_tui.h tui/store_tui.c
bench_tui_bench_CFLAGS = $(AM_CFLAGS) $(NCURSES_CFLAGS) $(SQLITE_CFLAGS)
bench_tui_bench_LDADD = analyzer/libcsanalysis.la $(CS_STORE_LIBS) $(NCURSES_LIBS) $(PTHREAD_LIBS) -lm
else
EXTRA_DIST += docs/collscope-tui.1 tui/store_tui.h tui/store_tui.c
endif
