# analyzer: libcsanalysis (the cross-rank analysis, the report model, its
# writers, gates, diff and the estimate check), linked by collscope and by
# the TUI, and the collscope command (one cmd_*.c per subcommand).
noinst_LTLIBRARIES += analyzer/libcsanalysis.la
analyzer_libcsanalysis_la_SOURCES = analyzer/store_analysis.h analyzer/store_analysis.c analyzer/csanalysis.h analyzer/analysis.h analyzer/analysis.c \
	analyzer/an_run.c analyzer/par.h analyzer/an_par.c analyzer/an_ctx.c analyzer/an_align.c analyzer/an_match.c analyzer/an_p2p.c analyzer/an_msgs.c analyzer/verdict.h analyzer/an_verdict.c \
	analyzer/an_verdict_persistent.c analyzer/an_verdict_transient.c analyzer/an_verdict_recurring.c analyzer/an_verdict_slow_link.c \
	analyzer/an_verdict_slow_link_comm.c analyzer/an_verdict_slow_collective.c \
	analyzer/numarg.h analyzer/numarg.c \
	analyzer/an_tail.c analyzer/an_layout.c analyzer/an_slowdown.c analyzer/whatif_int.h analyzer/whatif.h analyzer/an_model.c analyzer/an_whatif.c
# The report model and one writer per format; gates, diff, check-estimate.
analyzer_libcsanalysis_la_SOURCES += analyzer/report.h analyzer/report.c analyzer/report_text.c \
	analyzer/report_json.c analyzer/report_markdown.c analyzer/report_junit.c analyzer/gates.c \
	analyzer/diff.c analyzer/estimate.c
# The failure model and its diagnosis (status, the report's Failures, the TUI).
analyzer_libcsanalysis_la_SOURCES += analyzer/failure.h analyzer/failure.c analyzer/failure_store.c
# Unit test of its diagnosis on hand-made models.
check_PROGRAMS += tests/unit/test_failure
TESTS += tests/unit/test_failure
tests_unit_test_failure_SOURCES = tests/unit/test_failure.c
tests_unit_test_failure_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_unit_test_failure_LDADD = analyzer/libcsanalysis.la $(CS_STORE_LIBS) $(PTHREAD_LIBS) -lm
analyzer_libcsanalysis_la_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
analyzer_libcsanalysis_la_LIBADD = -lm

bin_PROGRAMS += analyzer/collscope
analyzer_collscope_SOURCES = analyzer/cli.h analyzer/main.c analyzer/cmd_run.c analyzer/cmd_ingest.c \
	analyzer/cmd_analyze.c analyzer/cmd_report.c analyzer/cmd_diff.c analyzer/cmd_check_estimate.c analyzer/cmd_tui.c \
	analyzer/cmd_export.c analyzer/outfile.h analyzer/outfile.c analyzer/export.h analyzer/export.c analyzer/export_chrome.c \
	analyzer/export_io.h analyzer/export_io.c \
	analyzer/run.c analyzer/ingest.c analyzer/symbolize.c
# The kineto export (docs/interop.md).
analyzer_collscope_SOURCES += analyzer/export_kineto.c
# collscope import: the format table and driver, one reader per format.
analyzer_collscope_SOURCES += analyzer/cmd_status.c analyzer/status.h analyzer/status.c
analyzer_collscope_SOURCES += analyzer/status_gpu.h analyzer/status_gpu.c
analyzer_collscope_SOURCES += analyzer/status_hang.h analyzer/status_hang.c
analyzer_collscope_SOURCES += analyzer/cmd_import.c analyzer/import.h analyzer/import.c analyzer/import_kineto.c
# collscope merge: a job kept as rank stores into one trace.db.
analyzer_collscope_SOURCES += analyzer/cmd_merge.c
analyzer_collscope_CPPFLAGS = $(AM_CPPFLAGS) -DPKGLIBDIR='"$(pkglibdir)"'
analyzer_collscope_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
analyzer_collscope_LDADD = analyzer/libcsanalysis.la $(CS_STORE_LIBS) $(PTHREAD_LIBS) -lm
analyzer_collscope_LDADD += $(YAJL_LIBS) $(ZLIB_LIBS)
analyzer_collscope_CFLAGS += $(YAJL_CFLAGS) $(ZLIB_CFLAGS)
# The Perfetto protobuf export: its encoder generated from our .proto by
# protoc-c at build time (m4/protobuf_c.m4).
EXTRA_DIST += analyzer/perfetto_trace.proto
if HAVE_PROTOBUF_C
analyzer_collscope_SOURCES += analyzer/export_perfetto.c
nodist_analyzer_collscope_SOURCES = analyzer/perfetto_trace.pb-c.c analyzer/perfetto_trace.pb-c.h
analyzer_collscope_CFLAGS += $(PROTOBUF_C_CFLAGS)
analyzer_collscope_LDADD += $(PROTOBUF_C_LIBS)
BUILT_SOURCES += analyzer/perfetto_trace.pb-c.h
CLEANFILES += analyzer/perfetto_trace.pb-c.c analyzer/perfetto_trace.pb-c.h
# One run of protoc-c writes both files; the .c follows the .h (a rule
# with two targets could run twice at once under make -j).
analyzer/perfetto_trace.pb-c.h: $(srcdir)/analyzer/perfetto_trace.proto
	$(AM_V_GEN)$(MKDIR_P) analyzer && $(PROTOC_C) --proto_path=$(srcdir)/analyzer --c_out=analyzer $(srcdir)/analyzer/perfetto_trace.proto
analyzer/perfetto_trace.pb-c.c: analyzer/perfetto_trace.pb-c.h
	@test -f $@ || { rm -f analyzer/perfetto_trace.pb-c.h && $(MAKE) $(AM_MAKEFLAGS) analyzer/perfetto_trace.pb-c.h; }
else
EXTRA_DIST += analyzer/export_perfetto.c
endif
# `collscope tui` runs the browser in-process when it was built (tui/local.mk
# defines CS_TUI_LIBS, which links the libraries above again after it).
if HAVE_NCURSES
analyzer_collscope_LDADD += $(CS_TUI_LIBS)
endif
# The OTF2 export, when configure found libotf2.
if HAVE_OTF2
analyzer_collscope_SOURCES += analyzer/export_otf2.c
analyzer_collscope_CFLAGS += $(OTF2_CFLAGS)
analyzer_collscope_LDADD += $(OTF2_LIBS)
endif

# align_strict.sh (offsets within 5 us, Open MPI) passed 5 of 5 with two
# busy loops beside it. verdicts_ompi.sh and verdicts_mpich.sh (the four
# straggler cases, 4 ranks, 100 ms delays, 20 steps; about 20 s together)
# each passed 5 of 5 in a row with a busy loop beside them.
TESTS += tests/analysis/synthetic.sh tests/analysis/faults.sh tests/analysis/align_strict.sh \
	tests/analysis/verdicts_ompi.sh tests/analysis/verdicts_mpich.sh
# The cost model on a synthetic trace of known alpha and beta (1 s), the
# what-if replay, proposals and check-estimate on the trainer (about 15 s).
TESTS += tests/analysis/numargs.sh tests/analysis/json_nonfinite.sh tests/analysis/sparse_ranks.sh tests/analysis/bad_traces.sh
TESTS += tests/analysis/sparse_ranks_nb.sh
EXTRA_DIST += tests/analysis/numargs.sh tests/analysis/json_nonfinite.sh tests/analysis/sparse_ranks.sh tests/analysis/bad_traces.sh tests/analysis/badtrace.inc.sh
EXTRA_DIST += tests/analysis/sparse_ranks_nb.sh tests/analysis/sparse_ranks.inc.sh
TESTS += tests/analysis/costmodel.sh tests/analysis/whatif.sh tests/analysis/apply_estimate.sh
# Steps without markers and nonblocking collectives timed to their
# completion, on nbloop under each MPI (six 4-rank runs each, about 20 s).
TESTS += tests/analysis/nb_steps_ompi.sh tests/analysis/nb_steps_mpich.sh
EXTRA_DIST += tests/analysis/nb_steps_ompi.sh tests/analysis/nb_steps_mpich.sh tests/analysis/nb_steps.inc.sh
EXTRA_DIST += tests/analysis/costmodel.sh tests/analysis/whatif.sh tests/analysis/apply_estimate.sh
# Fusion gated on the programs' own step times, nbloop without markers, both
# MPIs (3 pairs of runs of 3 bucket patterns each; 2-4 min together).
TESTS += tests/analysis/nb_fusion_ompi.sh tests/analysis/nb_fusion_mpich.sh
EXTRA_DIST += tests/analysis/nb_fusion_ompi.sh tests/analysis/nb_fusion_mpich.sh tests/analysis/nb_fusion.inc.sh
EXTRA_DIST += tests/analysis/verdicts_ompi.sh tests/analysis/verdicts_mpich.sh tests/analysis/verdicts.inc.sh \
	tests/analysis/synthetic.sh tests/analysis/faults.sh
dist_doc_DATA += docs/report-json.md docs/interop.md
EXTRA_DIST += bench/analysis_bench.sh tests/analysis/align_strict.sh bench/export_bench.sh
# The recurring straggler verdict on nbloop (every 2nd, 3rd, 10th and
# random steps, with and without markers, blocking and nonblocking, and a
# clean run), under each MPI.
TESTS += tests/analysis/recurring_ompi.sh tests/analysis/recurring_mpich.sh
EXTRA_DIST += tests/analysis/recurring_ompi.sh tests/analysis/recurring_mpich.sh tests/analysis/recurring.inc.sh
# The same verdict on synthetic traces of known answers (bench/gen_trace
# --recurring; 1 s, no MPI).
TESTS += tests/analysis/recurring_synth.sh
EXTRA_DIST += tests/analysis/recurring_synth.sh
# ... and on a recorded MPICH trace where transient windows once hid it.
TESTS += tests/analysis/recurring_trace.sh
EXTRA_DIST += tests/analysis/recurring_trace.sh tests/analysis/data/mpich_recurring_random.db.gz
# The straggler cases of verdicts_*.sh on the trainer with nonblocking
# buckets, with and without step markers.
TESTS += tests/analysis/verdicts_nb_ompi.sh tests/analysis/verdicts_nb_mpich.sh
EXTRA_DIST += tests/analysis/verdicts_nb_ompi.sh tests/analysis/verdicts_nb_mpich.sh tests/analysis/verdicts_nb.inc.sh
# The Chrome trace-event export of a traced 4-rank run, checked with
# Python's json, and its bad input (about 5 s); the GPU stream tracks of the
# NCCL trainer under the CPU stand-ins (about 3 s).
TESTS += tests/analysis/export_chrome.sh tests/analysis/export_chrome_gpu.sh
EXTRA_DIST += tests/analysis/export_chrome.sh tests/analysis/export_chrome_gpu.sh
# The OTF2 export of two traced 4-rank runs, read back with otf2-print
# (skips, after checking the refusal, in a build without libotf2; about
# 5 s), and the GPU stream locations of the NCCL trainer under the CPU
# stand-ins (about 3 s).
TESTS += tests/analysis/export_otf2.sh tests/analysis/export_otf2_gpu.sh
EXTRA_DIST += tests/analysis/export_otf2.sh tests/analysis/export_otf2_gpu.sh
# The kineto export: its files against the store, HTA on an NCCL job, and
# the round trip through `collscope import`.
TESTS += tests/analysis/export_kineto.sh tests/analysis/export_kineto_hta.sh tests/analysis/roundtrip_kineto.sh
EXTRA_DIST += tests/analysis/export_kineto.sh tests/analysis/export_kineto_hta.sh tests/analysis/roundtrip_kineto.sh
# The Perfetto protobuf export of the same run and of the NCCL trainer under
# the stand-ins, decoded with Python's protobuf from our .proto (about 8 s).
TESTS += tests/analysis/export_perfetto.sh
EXTRA_DIST += tests/analysis/export_perfetto.sh
# The commands' -o files: never through a symlink, never half-written.
TESTS += tests/analysis/outfile.sh
EXTRA_DIST += tests/analysis/outfile.sh
# the parallel layout (an_layout.c) on examples/pipe_trainer and nbloop
TESTS += tests/analysis/layout.sh
EXTRA_DIST += tests/analysis/layout.sh
# collscope status (status.c) on jobs of tests/progs/hang that hang or fail
TESTS += tests/status/status_ompi.sh tests/status/status_mpich.sh
EXTRA_DIST += tests/status/status_ompi.sh tests/status/status_mpich.sh tests/status/status.inc.sh
# the hang watchdog (interpose/watchdog.c) on tests/progs/hang, sigchain and the example trainer
TESTS += tests/status/watchdog_ompi.sh tests/status/watchdog_mpich.sh
EXTRA_DIST += tests/status/watchdog_ompi.sh tests/status/watchdog_mpich.sh tests/status/watchdog.inc.sh
# the slowdown attribution (an_slowdown.c) on examples/pipe_trainer
TESTS += tests/analysis/slowdown_ompi.sh tests/analysis/slowdown_mpich.sh
EXTRA_DIST += tests/analysis/slowdown_ompi.sh tests/analysis/slowdown_mpich.sh tests/analysis/slowdown.inc.sh

# The processes of a parallel analysis (par.h): forked workers (par_fork.c)
# and one MPI program per MPI found (par_mpi.c), which `collscope analyze
# -j K` starts under that MPI's mpirun, and which `mpirun -np K collscope
# analyze` execs; collscope finds it beside itself, else in pkglibexecdir.
analyzer_libcsanalysis_la_SOURCES += analyzer/par_fork.c
analyzer_collscope_CPPFLAGS += -DPKGLIBEXECDIR='"$(pkglibexecdir)"' -DMPIRUN_OMPI='"$(MPIRUN_OMPI)"' \
	-DMPIRUN_MPICH='"$(MPIRUN_MPICH)"'
pkglibexec_PROGRAMS =
# The transports on big messages with a stand-in of the analysis, and the
# parallel analysis end to end under each transport.
check_PROGRAMS += tests/unit/test_par_fork
tests_unit_test_par_fork_SOURCES = tests/unit/test_par_fork.c tests/unit/par_standin.c analyzer/par_fork.c
TESTS += tests/store/par_transport.sh tests/store/par_transport_ompi.sh tests/store/par_transport_mpich.sh tests/store/par_analyze.sh
EXTRA_DIST += tests/store/par_transport.sh tests/store/par_transport_ompi.sh tests/store/par_transport_mpich.sh tests/store/par_analyze.sh \
	tests/store/par_transport.inc.sh tests/store/par_transport_mpi.inc.sh analyzer/par_mpi.c
if HAVE_OMPI
pkglibexec_PROGRAMS += analyzer/collscope-analyze-openmpi
analyzer_collscope_analyze_openmpi_SOURCES = analyzer/par_mpi.c
analyzer_collscope_analyze_openmpi_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(OMPI_CFLAGS)
analyzer_collscope_analyze_openmpi_LDADD = analyzer/libcsanalysis.la $(CS_STORE_LIBS) $(PTHREAD_LIBS) -lm $(OMPI_LIBS)
check_PROGRAMS += tests/unit/test_par_mpi_ompi
tests_unit_test_par_mpi_ompi_SOURCES = analyzer/par_mpi.c tests/unit/par_standin.c
tests_unit_test_par_mpi_ompi_CFLAGS = $(AM_CFLAGS) $(OMPI_CFLAGS)
tests_unit_test_par_mpi_ompi_LDADD = $(OMPI_LIBS)
endif
if HAVE_MPICH
pkglibexec_PROGRAMS += analyzer/collscope-analyze-mpich
analyzer_collscope_analyze_mpich_SOURCES = analyzer/par_mpi.c
analyzer_collscope_analyze_mpich_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(MPICH_CFLAGS)
analyzer_collscope_analyze_mpich_LDADD = analyzer/libcsanalysis.la $(CS_STORE_LIBS) $(PTHREAD_LIBS) -lm $(MPICH_LIBS)
check_PROGRAMS += tests/unit/test_par_mpi_mpich
tests_unit_test_par_mpi_mpich_SOURCES = analyzer/par_mpi.c tests/unit/par_standin.c
tests_unit_test_par_mpi_mpich_CFLAGS = $(AM_CFLAGS) $(MPICH_CFLAGS)
tests_unit_test_par_mpi_mpich_LDADD = $(MPICH_LIBS)
endif
