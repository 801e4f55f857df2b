# tests: automake's parallel harness. Each component adds its tests to
# TESTS (scripts by their path in the source tree, programs by their path
# in the build tree); `make check` runs them (`make -j2 check` two at a
# time), each through tests/run-one.sh (a timeout, no terminal input, and
# the tests in CS_SERIAL_TESTS alone), with its log at the test's path
# (tests/mpi/fuse.log). Exit 0 passes, 77 skips, anything else fails.
# Subsets: make check TESTS='tests/store/schema.sh tests/mpi/crash.sh'
# or CS_TEST_FILTER='verdicts*' (a glob on the test's name or path).
EXTRA_DIST += tests/run-one.sh tests/summary.sh tests/lib.sh

TEST_EXTENSIONS = .sh
LOG_COMPILER = $(SHELL) $(srcdir)/tests/run-one.sh
SH_LOG_COMPILER = $(SHELL) $(srcdir)/tests/run-one.sh $(SHELL)
AM_TESTS_ENVIRONMENT = top_srcdir='$(top_srcdir)' abs_top_srcdir='$(abs_top_srcdir)' \
	abs_top_builddir='$(abs_top_builddir)' COLLSCOPE_LIBDIR='$(abs_top_builddir)/interpose/.libs' \
	MPIRUN_OMPI='$(MPIRUN_OMPI)' MPIRUN_MPICH='$(MPIRUN_MPICH)' MPIFC_OMPI='$(MPIFC_OMPI)' \
	PYTHON3='$(PYTHON3)' CS_HAVE_OMPI='$(cs_have_ompi)' CS_HAVE_MPICH='$(cs_have_mpich)' \
	CS_HAVE_NVCC='$(cs_have_nvcc)' CS_HAVE_NCURSES='$(cs_have_ncurses)' \
	CS_SERIAL_TESTS='$(CS_SERIAL_TESTS)' CS_TEST_LOCK='$(abs_top_builddir)/tests/.serial-lock'; \
	export top_srcdir abs_top_srcdir abs_top_builddir COLLSCOPE_LIBDIR MPIRUN_OMPI MPIRUN_MPICH \
	MPIFC_OMPI PYTHON3 CS_HAVE_OMPI CS_HAVE_MPICH CS_HAVE_NVCC CS_HAVE_NCURSES CS_SERIAL_TESTS CS_TEST_LOCK;
# Tests whose checks rest on a multi-rank job keeping its timing on the
# shared cores (verdicts on 100 ms delays, apply mode's step medians, the
# program's own timers against the report's): each runs while no other
# test does (tests/run-one.sh), once: no test is retried.
CS_SERIAL_TESTS = tests/analysis/verdicts_ompi.sh tests/analysis/verdicts_mpich.sh \
	tests/analysis/apply_estimate.sh tests/analysis/nb_fusion_ompi.sh tests/analysis/nb_fusion_mpich.sh \
	tests/analysis/verdicts_nb_ompi.sh tests/analysis/verdicts_nb_mpich.sh \
	tests/analysis/recurring_ompi.sh tests/analysis/recurring_mpich.sh \
	tests/analysis/nb_steps_ompi.sh tests/analysis/nb_steps_mpich.sh tests/analysis/align_strict.sh \
	tests/analysis/whatif.sh tests/analysis/costmodel.sh tests/tui/tui.sh \
	tests/analysis/slowdown_ompi.sh tests/analysis/slowdown_mpich.sh \
	tests/status/watchdog_ompi.sh tests/status/watchdog_mpich.sh
CS_SERIAL_TESTS += tests/nccl/stall.sh
# The 8-rank job of the merged/unmerged comparison (a persistent straggler).
CS_SERIAL_TESTS += tests/store/scale_mpi.sh

# check-TESTS runs the tests as automake's own rule does (the logs named in
# RECHECK_LOGS rerun, test-suite.log written, automake's summary printed),
# the tests of CS_SERIAL_TESTS first: started one after another they run
# back to back, and the others then share every job slot (started in
# among the others, each one that runs alone first waits for the running
# tests to drain, slots held idle: 71 s of a 488 s make -j4 check), and
# then, whatever their outcome, tests/summary.sh: the failed tests'
# log tails, the skip reasons, and last the line that CI reads,
# "N passed, N failed, N skipped". It replaces automake's rule (hence
# -Wno-override), since a check-local rule would not run after a failure.
AUTOMAKE_OPTIONS = -Wno-override
# No "Leaving directory" lines from the sub-makes after that line.
AM_MAKEFLAGS = --no-print-directory
check-TESTS: $(check_PROGRAMS) $(check_LTLIBRARIES)
	@list='$(RECHECK_LOGS)'; test -z "$$list" || rm -f $$list
	@list='$(RECHECK_LOGS:.log=.trs)'; test -z "$$list" || rm -f $$list
	@test -z "$(TEST_SUITE_LOG)" || rm -f $(TEST_SUITE_LOG)
	@set +e; $(am__set_TESTS_bases); \
	if test -n "$$CS_TEST_FILTER"; then \
	  bases=`for b in $$bases; do case "$$b" in */$$CS_TEST_FILTER|$$CS_TEST_FILTER) echo $$b ;; esac; done`; \
	fi; \
	serial=; rest=; for b in $$bases; do \
	  case " $(CS_SERIAL_TESTS) " in *" $$b.sh "*) serial="$$serial $$b" ;; *) rest="$$rest $$b" ;; esac; \
	done; bases="$$serial $$rest"; \
	logs=`for b in $$bases; do echo $$b.log; done`; \
	$(MAKE) $(AM_MAKEFLAGS) $(TEST_SUITE_LOG) TEST_LOGS="`echo $$logs`"; rc=$$?; \
	$(SHELL) $(srcdir)/tests/summary.sh $$bases; \
	exit $$rc
# The tests of the suite in two lists, those that run alone first
# (scripts/setup.sh runs the two parts as two make check).
print-check-order:
	@s=; o=; for t in $(TESTS); do \
	  case " $(CS_SERIAL_TESTS) " in *" $$t "*) s="$$s $$t" ;; *) o="$$o $$t" ;; esac; \
	done; echo "serial:$$s"; echo "other:$$o"
.PHONY: print-check-order
# The summary of the last run again (of every test in TESTS that has a result).
check-summary:
	@$(am__set_TESTS_bases); $(SHELL) $(srcdir)/tests/summary.sh $$bases
.PHONY: check-summary

# The suite with CS_LOAD (default 8) busy loops beside it, stopped
# whatever happens (scripts/check-under-load.sh); TESTS=... picks a subset.
EXTRA_DIST += scripts/check-under-load.sh scripts/plant.sh
check-under-load:
	$(SHELL) $(srcdir)/scripts/check-under-load.sh -n "$${CS_LOAD:-8}" $(MAKE) $(AM_MAKEFLAGS) check
.PHONY: check-under-load

clean-local: clean-local-tests
clean-local-tests:
	-rm -f tests/.serial-lock
.PHONY: clean-local-tests

# The preload that makes waiting MPI ranks sleep instead of spinning
# (tests/progs/idle_sleep.c; tests/lib.sh preloads it in every test).
check_LTLIBRARIES += tests/progs/idle_sleep.la
tests_progs_idle_sleep_la_SOURCES = tests/progs/idle_sleep.c
tests_progs_idle_sleep_la_LDFLAGS = -module -avoid-version -rpath /nowhere -no-undefined
tests_progs_idle_sleep_la_LIBADD = -ldl

# Unit tests of libtrace.
check_PROGRAMS += tests/unit/test_log
TESTS += tests/unit/test_log
# The one indent style (scripts/format.sh check, as make format-check).
TESTS += tests/format.sh
EXTRA_DIST += tests/format.sh
# The rooms of the code (docs/design.md): no include or call goes up or
# between peer rooms, no circle (scripts/layers.py on the sources and this
# build's objects), and a planted fault of each kind is found.
TESTS += tests/layers/layers.sh
EXTRA_DIST += tests/layers/layers.sh scripts/layers.py
# The guard of apply mode, on a model job with known costs.
check_PROGRAMS += tests/unit/test_fuse_guard
TESTS += tests/unit/test_fuse_guard
tests_unit_test_fuse_guard_SOURCES = tests/unit/test_fuse_guard.c tests/unit/check.h interpose/fuse/fuse_guard.c
tests_unit_test_log_SOURCES = tests/unit/test_log.c tests/unit/check.h
tests_unit_test_log_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_unit_test_log_LDADD = $(CS_STORE_LIBS) $(PTHREAD_LIBS)
# A log followed while it is written (libtrace/log_follow.c, collscope top).
check_PROGRAMS += tests/unit/test_log_follow
TESTS += tests/unit/test_log_follow
tests_unit_test_log_follow_SOURCES = tests/unit/test_log_follow.c tests/unit/check.h
tests_unit_test_log_follow_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_unit_test_log_follow_LDADD = $(CS_STORE_LIBS) $(PTHREAD_LIBS)

# Multi-rank tests of the MPI preload.
TESTS += tests/mpi/counts.sh tests/mpi/crash.sh tests/mpi/undisturbed.sh tests/mpi/singleton.sh \
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

# Call sites answered from the preload's cache are the stacks the calls
# were made along (interpose/callsite.c).
TESTS += tests/mpi/callsite_cache.sh
EXTRA_DIST += tests/mpi/callsite_cache.sh tests/mpi/callsite_prog.c
if HAVE_OMPI
check_PROGRAMS += tests/mpi/callsite_prog_ompi
tests_mpi_callsite_prog_ompi_SOURCES = tests/mpi/callsite_prog.c
tests_mpi_callsite_prog_ompi_CFLAGS = $(AM_CFLAGS) $(OMPI_CFLAGS)
tests_mpi_callsite_prog_ompi_LDADD = $(OMPI_LIBS)
endif
if HAVE_MPICH
check_PROGRAMS += tests/mpi/callsite_prog_mpich
tests_mpi_callsite_prog_mpich_SOURCES = tests/mpi/callsite_prog.c
tests_mpi_callsite_prog_mpich_CFLAGS = $(AM_CFLAGS) $(MPICH_CFLAGS)
tests_mpi_callsite_prog_mpich_LDADD = $(MPICH_LIBS)
endif

# Apply mode for MPI (interpose/mpi_fuse.c): what is fused and what is not,
# bit-identical results, the fallbacks, on both MPI implementations.
TESTS += tests/mpi/fuse.sh
EXTRA_DIST += tests/mpi/fuse.sh tests/mpi/fuse_prog.c
if HAVE_OMPI
check_PROGRAMS += tests/mpi/fuse_prog_ompi
tests_mpi_fuse_prog_ompi_SOURCES = tests/mpi/fuse_prog.c
tests_mpi_fuse_prog_ompi_CFLAGS = $(AM_CFLAGS) $(OMPI_CFLAGS)
tests_mpi_fuse_prog_ompi_LDADD = $(OMPI_LIBS)
endif
if HAVE_MPICH
check_PROGRAMS += tests/mpi/fuse_prog_mpich
tests_mpi_fuse_prog_mpich_SOURCES = tests/mpi/fuse_prog.c
tests_mpi_fuse_prog_mpich_CFLAGS = $(AM_CFLAGS) $(MPICH_CFLAGS)
tests_mpi_fuse_prog_mpich_LDADD = $(MPICH_LIBS)
endif

# Apply mode's on-line guard (interpose/fuse/fuse_guard.h): a fusion that
# loses is dropped, one that wins is kept, results bit-identical, on both
# MPI implementations, judged by the program's own timer.
TESTS += tests/mpi/fuse_guard.sh
EXTRA_DIST += tests/mpi/fuse_guard.sh tests/mpi/guard_prog.c
if HAVE_OMPI
check_PROGRAMS += tests/mpi/guard_prog_ompi
tests_mpi_guard_prog_ompi_SOURCES = tests/mpi/guard_prog.c
tests_mpi_guard_prog_ompi_CFLAGS = $(AM_CFLAGS) $(OMPI_CFLAGS)
tests_mpi_guard_prog_ompi_LDADD = $(OMPI_LIBS)
endif
if HAVE_MPICH
check_PROGRAMS += tests/mpi/guard_prog_mpich
tests_mpi_guard_prog_mpich_SOURCES = tests/mpi/guard_prog.c
tests_mpi_guard_prog_mpich_CFLAGS = $(AM_CFLAGS) $(MPICH_CFLAGS)
tests_mpi_guard_prog_mpich_LDADD = $(MPICH_LIBS)
endif

# The guard on many communicators, some of them on a subset of the ranks:
# no hang, every member measures every communicator alike.
TESTS += tests/mpi/fuse_guard_comms.sh
EXTRA_DIST += tests/mpi/fuse_guard_comms.sh tests/mpi/manycomm_prog.c
if HAVE_OMPI
check_PROGRAMS += tests/mpi/manycomm_prog_ompi
tests_mpi_manycomm_prog_ompi_SOURCES = tests/mpi/manycomm_prog.c
tests_mpi_manycomm_prog_ompi_CFLAGS = $(AM_CFLAGS) $(OMPI_CFLAGS)
tests_mpi_manycomm_prog_ompi_LDADD = $(OMPI_LIBS)
endif
if HAVE_MPICH
check_PROGRAMS += tests/mpi/manycomm_prog_mpich
tests_mpi_manycomm_prog_mpich_SOURCES = tests/mpi/manycomm_prog.c
tests_mpi_manycomm_prog_mpich_CFLAGS = $(AM_CFLAGS) $(MPICH_CFLAGS)
tests_mpi_manycomm_prog_mpich_LDADD = $(MPICH_LIBS)
endif

# The store and the commands' handling of bad input.
TESTS += tests/store/schema.sh tests/store/bad_input.sh tests/store/ingest.sh tests/store/readonly.sh \
	tests/store/corrupt.sh tests/store/corrupt_stored.sh
EXTRA_DIST += tests/store/schema.sh tests/store/bad_input.sh tests/store/ingest.sh tests/store/readonly.sh \
	tests/store/corrupt.sh tests/store/corrupt_stored.sh

# Communicators by name in the store and the reports, on both MPIs.
TESTS += tests/store/comm_names.sh
EXTRA_DIST += tests/store/comm_names.sh

# Damaged logs and files that are no logs (bench/log_gen --break), and logs
# of several runs in one folder.
TESTS += tests/store/log_fields.sh tests/store/log_special.sh tests/store/log_truncated.sh tests/store/two_runs.sh tests/store/busy_dir.sh \
	tests/store/nomem.sh tests/store/foreign_rank.sh
EXTRA_DIST += tests/store/log_fields.sh tests/store/log_special.sh tests/store/log_truncated.sh tests/store/two_runs.sh tests/store/busy_dir.sh \
	tests/store/nomem.sh tests/store/foreign_rank.sh

# File names in messages are escaped (a newline or an escape in a name
# forges no line of output).
TESTS += tests/store/name_escape.sh
EXTRA_DIST += tests/store/name_escape.sh
# A full disk is told as one message, never as damage (needs root: mount).
TESTS += tests/store/disk_full.sh
EXTRA_DIST += tests/store/disk_full.sh
# report of a folder a run is replacing says the run is in progress.
TESTS += tests/store/report_busy.sh
EXTRA_DIST += tests/store/report_busy.sh

# File safety of `collscope run` and of the preload, and its numeric settings.
TESTS += tests/mpi/out_symlink.sh tests/mpi/log_symlink.sh tests/mpi/env_numbers.sh
EXTRA_DIST += tests/mpi/out_symlink.sh tests/mpi/log_symlink.sh tests/mpi/env_numbers.sh

# NCCL and CUDA tracing (tests/nccl/): CPU stand-ins for libcudart.so.13 and
# libnccl.so.2 (tests/standins/), with the real sonames, never installed;
# the tests put tests/standins/.libs first on LD_LIBRARY_PATH.
EXTRA_DIST += tests/standins/cudart.c tests/standins/nccl.c tests/standins/cudart.map \
	tests/nccl/nccl_lib.sh tests/nccl/trainer.sh tests/nccl/gpu_fault.sh tests/nccl/straggler.sh \
	tests/nccl/realerr.sh tests/nccl/no_nccl.sh tests/nccl/schema_upgrade.sh tests/nccl/realerr.c \
	tests/standins/cupti.c tests/nccl/cupti.sh tests/nccl/profiler.sh \
	tests/nccl/fuse.sh tests/nccl/fuse_prog.c tests/nccl/ptsz.sh tests/nccl/ptsz.c
EXTRA_DIST += tests/nccl/stall.sh tests/nccl/fuse_guard.sh tests/nccl/fuse_prof.sh
TESTS += tests/nccl/schema_upgrade.sh
if HAVE_NCCL
if HAVE_OMPI
check_LTLIBRARIES += tests/standins/libcudart.la tests/standins/libnccl.la
tests_standins_libcudart_la_SOURCES = tests/standins/cudart.c
tests_standins_libcudart_la_CFLAGS = $(AM_CFLAGS) $(CUDA_CFLAGS) -fvisibility=hidden
tests_standins_libcudart_la_LDFLAGS = -rpath /nowhere -version-info 13:0:0 -no-undefined \
	-Wl,--version-script=$(srcdir)/tests/standins/cudart.map
tests_standins_libcudart_la_LIBADD = -ldl $(PTHREAD_LIBS)
tests_standins_libnccl_la_SOURCES = tests/standins/nccl.c
tests_standins_libnccl_la_CFLAGS = $(AM_CFLAGS) $(CUDA_CFLAGS) $(OMPI_CFLAGS) -fvisibility=hidden
tests_standins_libnccl_la_LDFLAGS = -rpath /nowhere -version-info 2:0:0 -no-undefined
tests_standins_libnccl_la_LIBADD = $(OMPI_LIBS) -ldl
TESTS += tests/nccl/trainer.sh tests/nccl/straggler.sh tests/nccl/gpu_fault.sh tests/nccl/no_nccl.sh \
	tests/nccl/profiler.sh
# A stalled kernel (the stand-ins' CS_STANDIN_STALL_RANK): collscope status,
# live and post mortem, and the ingested GPU work in flight.
TESTS += tests/nccl/stall.sh
# Apply mode's NCCL fusion: bursts of grouped allreduces (tests/gpu/run.sh
# also runs the program on a GPU with the real libraries).
check_PROGRAMS += tests/nccl/fuse_prog
tests_nccl_fuse_prog_SOURCES = tests/nccl/fuse_prog.c
tests_nccl_fuse_prog_CFLAGS = $(AM_CFLAGS) $(CUDA_CFLAGS) $(OMPI_CFLAGS)
tests_nccl_fuse_prog_LDFLAGS = -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/lib
tests_nccl_fuse_prog_LDADD = -lnccl -lcudart $(OMPI_LIBS)
TESTS += tests/nccl/fuse.sh
# Apply mode's NCCL guard: fusing made to lose and to win by the stand-in's
# cost per allreduce (CS_STANDIN_ALLREDUCE_COST).
TESTS += tests/nccl/fuse_guard.sh
# Apply mode with the profiler plugin: collscope's own calls (the guard's
# vote, the fused calls) never credited to a program's call.
TESTS += tests/nccl/fuse_prof.sh
# CUPTI stand-in (soname libcupti.so.13): activity of the cudart stand-in's work.
if HAVE_CUPTI
check_LTLIBRARIES += tests/standins/libcupti.la
tests_standins_libcupti_la_SOURCES = tests/standins/cupti.c
tests_standins_libcupti_la_CFLAGS = $(AM_CFLAGS) $(CUDA_CFLAGS) -fvisibility=hidden
tests_standins_libcupti_la_LDFLAGS = -rpath /nowhere -version-info 13:0:0 -no-undefined
tests_standins_libcupti_la_LIBADD = -ldl $(PTHREAD_LIBS)
TESTS += tests/nccl/cupti.sh
endif
endif
# The real libraries with no GPU: their return codes pass through unchanged.
check_PROGRAMS += tests/nccl/realerr
tests_nccl_realerr_SOURCES = tests/nccl/realerr.c
tests_nccl_realerr_CFLAGS = $(AM_CFLAGS) $(CUDA_CFLAGS)
tests_nccl_realerr_LDFLAGS = -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/lib
tests_nccl_realerr_LDADD = -lnccl -lcudart
TESTS += tests/nccl/realerr.sh
# A program built for the per-thread default stream (_ptsz/_ptds entry points).
check_PROGRAMS += tests/nccl/ptsz
tests_nccl_ptsz_SOURCES = tests/nccl/ptsz.c
tests_nccl_ptsz_CFLAGS = $(AM_CFLAGS) $(CUDA_CFLAGS)
tests_nccl_ptsz_LDFLAGS = -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/lib
tests_nccl_ptsz_LDADD = -lcudart
TESTS += tests/nccl/ptsz.sh
endif
EXTRA_DIST += tests/gpu/run.sh

# nbloop: a training-style loop with nonblocking bucket allreduces, no step
# markers and a rank late in chosen steps, timing itself (tests/progs/).
EXTRA_DIST += tests/progs/nbloop.c
if HAVE_OMPI
check_PROGRAMS += tests/progs/nbloop_ompi
tests_progs_nbloop_ompi_SOURCES = tests/progs/nbloop.c
tests_progs_nbloop_ompi_CFLAGS = $(AM_CFLAGS) $(OMPI_CFLAGS)
tests_progs_nbloop_ompi_LDADD = $(OMPI_LIBS)
endif
if HAVE_MPICH
check_PROGRAMS += tests/progs/nbloop_mpich
tests_progs_nbloop_mpich_SOURCES = tests/progs/nbloop.c
tests_progs_nbloop_mpich_CFLAGS = $(AM_CFLAGS) $(MPICH_CFLAGS)
tests_progs_nbloop_mpich_LDADD = $(MPICH_LIBS)
endif

# live_steps: a loop of sleeps and allreduces whose chosen rank turns slow
# from a chosen step (collscope top's tests, tests/live/).
EXTRA_DIST += tests/progs/live_steps.c
if HAVE_OMPI
check_PROGRAMS += tests/progs/live_steps_ompi
tests_progs_live_steps_ompi_SOURCES = tests/progs/live_steps.c
tests_progs_live_steps_ompi_CFLAGS = $(AM_CFLAGS) $(OMPI_CFLAGS)
tests_progs_live_steps_ompi_LDADD = $(OMPI_LIBS)
endif

# hang: a loop that hangs or fails in a chosen way (tests/status/).
EXTRA_DIST += tests/progs/hang.c
if HAVE_OMPI
check_PROGRAMS += tests/progs/hang_ompi
tests_progs_hang_ompi_SOURCES = tests/progs/hang.c
tests_progs_hang_ompi_CFLAGS = $(AM_CFLAGS) $(OMPI_CFLAGS)
tests_progs_hang_ompi_LDADD = $(OMPI_LIBS)
endif
if HAVE_MPICH
check_PROGRAMS += tests/progs/hang_mpich
tests_progs_hang_mpich_SOURCES = tests/progs/hang.c
tests_progs_hang_mpich_CFLAGS = $(AM_CFLAGS) $(MPICH_CFLAGS)
tests_progs_hang_mpich_LDADD = $(MPICH_LIBS)
endif

# sigchain: its own handler for the watchdog's sampling signal (tests/status/watchdog*).
EXTRA_DIST += tests/progs/sigchain.c
if HAVE_OMPI
check_PROGRAMS += tests/progs/sigchain_ompi
tests_progs_sigchain_ompi_SOURCES = tests/progs/sigchain.c
tests_progs_sigchain_ompi_CFLAGS = $(AM_CFLAGS) $(OMPI_CFLAGS)
tests_progs_sigchain_ompi_LDADD = $(OMPI_LIBS)
endif
if HAVE_MPICH
check_PROGRAMS += tests/progs/sigchain_mpich
tests_progs_sigchain_mpich_SOURCES = tests/progs/sigchain.c
tests_progs_sigchain_mpich_CFLAGS = $(AM_CFLAGS) $(MPICH_CFLAGS)
tests_progs_sigchain_mpich_LDADD = $(MPICH_LIBS)
endif

# names_setget: communicators named with MPI_Comm_set_name (comm_names.sh).
EXTRA_DIST += tests/progs/names_setget.c
if HAVE_OMPI
check_PROGRAMS += tests/progs/names_setget_ompi
tests_progs_names_setget_ompi_SOURCES = tests/progs/names_setget.c
tests_progs_names_setget_ompi_CFLAGS = $(AM_CFLAGS) $(OMPI_CFLAGS)
tests_progs_names_setget_ompi_LDADD = $(OMPI_LIBS)
endif
if HAVE_MPICH
check_PROGRAMS += tests/progs/names_setget_mpich
tests_progs_names_setget_mpich_SOURCES = tests/progs/names_setget.c
tests_progs_names_setget_mpich_CFLAGS = $(AM_CFLAGS) $(MPICH_CFLAGS)
tests_progs_names_setget_mpich_LDADD = $(MPICH_LIBS)
endif
