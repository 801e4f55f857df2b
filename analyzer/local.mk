# analyzer: the collscope command.
bin_PROGRAMS += analyzer/collscope
analyzer_collscope_SOURCES = analyzer/cli.h analyzer/main.c analyzer/util.c analyzer/ingest.c \
	analyzer/symbolize.c analyzer/cmd_run.c analyzer/report.c
analyzer_collscope_CPPFLAGS = $(AM_CPPFLAGS) -DPKGLIBDIR='"$(pkglibdir)"'
analyzer_collscope_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
analyzer_collscope_LDADD = libtrace/libcstrace.la $(SQLITE_LIBS) $(PTHREAD_LIBS)
