# common: the small helpers every part shares (growable arrays, a hash map,
# the one parser of numbers given on the command line or in the environment,
# a message line on stderr,
# order statistics, time and size formatting, JSON values, the folder of a
# path). PIC, hidden,
# linked into the commands, the TUI and the preload alike.
noinst_LTLIBRARIES += common/libcscommon.la
common_libcscommon_la_SOURCES = \
	common/vec.h common/vec.c common/map.h common/map.c \
	common/stats.h common/stats.c common/fmt.h common/fmt.c \
	common/json.h common/json.c \
	common/numarg.h common/numarg.c common/msg.h common/msg.c \
	common/path.h common/path.c \
	common/opts.h common/opts.c
common_libcscommon_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
common_libcscommon_la_LIBADD = -lm

# The option tables: parser and help made from one table.
check_PROGRAMS += tests/unit/test_opts
TESTS += tests/unit/test_opts
tests_unit_test_opts_SOURCES = tests/unit/test_opts.c tests/unit/check.h
tests_unit_test_opts_LDADD = common/libcscommon.la
