# analyzer/live: libcslive, a running job watched from its growing logs
# (`collscope top`, the live metrics): the figures, steps and change-point
# alarms (live.c), and the Prometheus textfile and HTTP endpoint
# (live_serve.c). It reads libtrace's log follower and names a hang as
# libcsstatus does.
noinst_LTLIBRARIES += analyzer/live/libcslive.la
analyzer_live_libcslive_la_SOURCES = analyzer/live/live.h analyzer/live/live.c \
	analyzer/live/live_serve.h analyzer/live/live_serve.c
analyzer_live_libcslive_la_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
CS_LIVE_LIBS = analyzer/live/libcslive.la $(CS_STATUS_LIBS)
