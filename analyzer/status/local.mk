# analyzer/status: libcsstatus, job status and failures: `collscope status`
# of a running or dead job (status.c), its hang and GPU views
# (status_hang.c, status_gpu.c), and the failure model and its store
# (failure.c, failure_store.c) that the report and the TUI read too.
noinst_LTLIBRARIES += analyzer/status/libcsstatus.la
analyzer_status_libcsstatus_la_SOURCES = analyzer/status/status.h analyzer/status/status.c \
	analyzer/status/status_gpu.h analyzer/status/status_gpu.c analyzer/status/status_hang.h analyzer/status/status_hang.c \
	analyzer/status/failure.h analyzer/status/failure.c analyzer/status/failure_store.c
analyzer_status_libcsstatus_la_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
CS_STATUS_LIBS = analyzer/status/libcsstatus.la $(CS_STORE_LIBS) $(PTHREAD_LIBS) -lm
# Unit test of the failure diagnosis on hand-made models.
check_PROGRAMS += tests/unit/test_failure
TESTS += tests/unit/test_failure
tests_unit_test_failure_SOURCES = tests/unit/test_failure.c tests/unit/check.h
tests_unit_test_failure_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_unit_test_failure_LDADD = $(CS_STATUS_LIBS)
