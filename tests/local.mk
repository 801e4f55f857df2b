# tests: the runner and its environment. Components add to CS_TESTS.
EXTRA_DIST += tests/run-tests.sh tests/lib.sh

CS_TEST_ENV = srcdir=$(srcdir) top_srcdir=$(top_srcdir) \
	abs_top_srcdir=$(abs_top_srcdir) abs_top_builddir=$(abs_top_builddir) \
	COLLSCOPE_LIBDIR=$(abs_top_builddir)/interpose/.libs \
	MPIRUN_OMPI=$(MPIRUN_OMPI) MPIRUN_MPICH=$(MPIRUN_MPICH) MPIFC_OMPI=$(MPIFC_OMPI) \
	PYTHON3=$(PYTHON3) CS_HAVE_OMPI=$(cs_have_ompi) CS_HAVE_MPICH=$(cs_have_mpich) \
	CS_HAVE_NVCC=$(cs_have_nvcc) CS_HAVE_NCURSES=$(cs_have_ncurses)

check-local:
	@$(CS_TEST_ENV) $(SHELL) $(srcdir)/tests/run-tests.sh $(CS_TESTS)

clean-local: clean-local-tests
clean-local-tests:
	-rm -rf tests/logs tests/tmp
.PHONY: clean-local-tests

# Unit tests of libtrace.
check_PROGRAMS += tests/unit/test_log
CS_TESTS += tests/unit/test_log
tests_unit_test_log_SOURCES = tests/unit/test_log.c
tests_unit_test_log_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_unit_test_log_LDADD = libtrace/libcstrace.la $(SQLITE_LIBS) $(PTHREAD_LIBS)

# Multi-rank tests of the MPI preload.
CS_TESTS += tests/mpi/counts.sh tests/mpi/crash.sh tests/mpi/undisturbed.sh tests/mpi/singleton.sh \
	tests/mpi/papi_counters.sh
EXTRA_DIST += tests/mpi/counts.sh tests/mpi/crash.sh tests/mpi/undisturbed.sh tests/mpi/singleton.sh \
	tests/mpi/papi_counters.sh tests/mpi/stubmpi.c tests/mpi/stubprog.c
if HAVE_OMPI
check_PROGRAMS += tests/mpi/errnorc_ompi
tests_mpi_errnorc_ompi_SOURCES = tests/mpi/errnorc.c
tests_mpi_errnorc_ompi_CFLAGS = $(AM_CFLAGS) $(OMPI_CFLAGS)
tests_mpi_errnorc_ompi_LDADD = $(OMPI_LIBS)
else
EXTRA_DIST += tests/mpi/errnorc.c
endif

# The store and the commands' handling of bad input.
CS_TESTS += tests/store/schema.sh tests/store/bad_input.sh
EXTRA_DIST += tests/store/schema.sh tests/store/bad_input.sh
