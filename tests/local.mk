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
