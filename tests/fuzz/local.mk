# tests/fuzz: fuzz targets (docs/security.md, "Fuzzing"). Each target is one
# LLVMFuzzerTestOneInput over a reader: the log (fuzz_log.c), the store
# (fuzz_store.c) and the report's options (fuzz_report_opts.c); its seed
# corpus is tests/fuzz/TARGET/corpus, the inputs that once crashed it
# tests/fuzz/TARGET/crashes.
#  - `make check` replays both with replay_TARGET (replay.c, any compiler)
#    through tests/fuzz/replay.sh; tests/fuzz/known-crashes lists the
#    crash files of faults not yet fixed, skipped with their reason.
#  - `make fuzz` (top Makefile.am) builds fuzz_TARGET with clang's libFuzzer
#    under ASan and UBSan in build-fuzz/ and runs each (tests/fuzz/run.sh).
CS_FUZZ_TARGETS = log store report_opts kineto live
CS_FUZZ_COMMON = tests/fuzz/fuzz.h tests/fuzz/fuzz_util.c
CS_FUZZ_ANALYSIS_LIBS = $(CS_REPORT_LIBS)
if HAVE_NCURSES
CS_FUZZ_STORE_CPPFLAGS = -DCS_FUZZ_TUI
CS_FUZZ_STORE_LIBS = $(CS_TUI_LIBS)
else
CS_FUZZ_STORE_CPPFLAGS =
CS_FUZZ_STORE_LIBS = $(CS_FUZZ_ANALYSIS_LIBS)
endif

check_PROGRAMS += tests/fuzz/replay_log tests/fuzz/replay_store tests/fuzz/replay_report_opts
tests_fuzz_replay_log_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_log.c $(CS_FUZZ_COMMON)
tests_fuzz_replay_log_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_fuzz_replay_log_LDADD = $(CS_STORE_LIBS) $(PTHREAD_LIBS)
tests_fuzz_replay_store_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_store.c $(CS_FUZZ_COMMON)
tests_fuzz_replay_store_CPPFLAGS = $(AM_CPPFLAGS) $(CS_FUZZ_STORE_CPPFLAGS)
tests_fuzz_replay_store_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_fuzz_replay_store_LDADD = $(CS_FUZZ_STORE_LIBS)
tests_fuzz_replay_report_opts_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_report_opts.c analyzer/cmd/cmd_report.c analyzer/formats/outfile.c \
	$(CS_FUZZ_COMMON)
tests_fuzz_replay_report_opts_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_fuzz_replay_report_opts_LDADD = $(CS_FUZZ_ANALYSIS_LIBS)

# The libFuzzer builds: made only on request (`make fuzz`, in a tree
# configured with CC=clang and CFLAGS with -fsanitize=fuzzer-no-link).
EXTRA_PROGRAMS = tests/fuzz/fuzz_log tests/fuzz/fuzz_store tests/fuzz/fuzz_report_opts
CS_LIBFUZZER_FLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_log_SOURCES = tests/fuzz/fuzz_log.c $(CS_FUZZ_COMMON)
tests_fuzz_fuzz_log_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_fuzz_fuzz_log_LDFLAGS = $(CS_LIBFUZZER_FLAGS)
tests_fuzz_fuzz_log_LDADD = $(CS_STORE_LIBS) $(PTHREAD_LIBS)
tests_fuzz_fuzz_store_SOURCES = tests/fuzz/fuzz_store.c $(CS_FUZZ_COMMON)
tests_fuzz_fuzz_store_CPPFLAGS = $(AM_CPPFLAGS) $(CS_FUZZ_STORE_CPPFLAGS)
tests_fuzz_fuzz_store_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_fuzz_fuzz_store_LDFLAGS = $(CS_LIBFUZZER_FLAGS)
tests_fuzz_fuzz_store_LDADD = $(CS_FUZZ_STORE_LIBS)
tests_fuzz_fuzz_report_opts_SOURCES = tests/fuzz/fuzz_report_opts.c analyzer/cmd/cmd_report.c analyzer/formats/outfile.c \
	$(CS_FUZZ_COMMON)
tests_fuzz_fuzz_report_opts_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_fuzz_fuzz_report_opts_LDFLAGS = $(CS_LIBFUZZER_FLAGS)
tests_fuzz_fuzz_report_opts_LDADD = $(CS_FUZZ_ANALYSIS_LIBS)

# The Kineto reader of collscope import (analyzer/formats/import_kineto.c).
check_PROGRAMS += tests/fuzz/replay_kineto
tests_fuzz_replay_kineto_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_kineto.c analyzer/formats/import_kineto.c $(CS_FUZZ_COMMON)
tests_fuzz_replay_kineto_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(YAJL_CFLAGS) $(ZLIB_CFLAGS)
tests_fuzz_replay_kineto_LDADD = $(CS_STORE_LIBS) $(YAJL_LIBS) $(ZLIB_LIBS) $(PTHREAD_LIBS)
EXTRA_PROGRAMS += tests/fuzz/fuzz_kineto
tests_fuzz_fuzz_kineto_SOURCES = tests/fuzz/fuzz_kineto.c analyzer/formats/import_kineto.c $(CS_FUZZ_COMMON)
tests_fuzz_fuzz_kineto_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(YAJL_CFLAGS) $(ZLIB_CFLAGS)
tests_fuzz_fuzz_kineto_LDFLAGS = $(CS_LIBFUZZER_FLAGS)
tests_fuzz_fuzz_kineto_LDADD = $(CS_STORE_LIBS) $(YAJL_LIBS) $(ZLIB_LIBS) $(PTHREAD_LIBS)
EXTRA_DIST += tests/fuzz/kineto

# The log follower of collscope top (libtrace/log_follow.c, analyzer/live).
check_PROGRAMS += tests/fuzz/replay_live
tests_fuzz_replay_live_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_live.c $(CS_FUZZ_COMMON)
tests_fuzz_replay_live_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_fuzz_replay_live_LDADD = $(CS_LIVE_LIBS) $(PTHREAD_LIBS)
EXTRA_PROGRAMS += tests/fuzz/fuzz_live
tests_fuzz_fuzz_live_SOURCES = tests/fuzz/fuzz_live.c $(CS_FUZZ_COMMON)
tests_fuzz_fuzz_live_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_fuzz_fuzz_live_LDFLAGS = $(CS_LIBFUZZER_FLAGS)
tests_fuzz_fuzz_live_LDADD = $(CS_LIVE_LIBS) $(PTHREAD_LIBS)
EXTRA_DIST += tests/fuzz/live

TESTS += tests/fuzz/replay.sh
EXTRA_DIST += tests/fuzz/replay.sh tests/fuzz/run.sh tests/fuzz/seeds.sh tests/fuzz/known-crashes \
	tests/fuzz/log tests/fuzz/store tests/fuzz/report_opts

# `make fuzz` (top Makefile.am): each target for FUZZ_SECONDS (default
# 60) under ASan and UBSan, then the replay of its corpus and crash files;
# FUZZ_SEED fixes libFuzzer's seed (CI: 1); FUZZ_TARGETS picks some.
FUZZ_SECONDS = 60
FUZZ_SEED = 0
FUZZ_TARGETS = $(CS_FUZZ_TARGETS)
clean-local: clean-local-fuzz
clean-local-fuzz:
	-rm -rf build-fuzz
.PHONY: clean-local-fuzz
