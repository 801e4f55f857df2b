# analyzer/cmd: the collscope command, on top of every room: main.c (the
# command table), one cmd_<name>.c per subcommand (its usage, options and
# calls into the libraries), launching a job (run.c), building its trace
# from the logs (ingest.c), naming its call sites (symbolize.c) and taking
# an output folder's lock (cli_lock.c).
bin_PROGRAMS += analyzer/collscope
analyzer_collscope_SOURCES = analyzer/cmd/cli.h analyzer/cmd/main.c analyzer/cmd/cmd_run.c analyzer/cmd/cmd_ingest.c \
	analyzer/cmd/cmd_analyze.c analyzer/cmd/cmd_report.c analyzer/cmd/cmd_diff.c analyzer/cmd/cmd_check_estimate.c \
	analyzer/cmd/cmd_tui.c analyzer/cmd/cmd_export.c analyzer/cmd/cmd_import.c analyzer/cmd/cmd_status.c analyzer/cmd/cmd_top.c \
	analyzer/cmd/cmd_merge.c analyzer/cmd/run.c analyzer/cmd/ingest.c analyzer/cmd/symbolize.c analyzer/cmd/cli_lock.c
analyzer_collscope_CPPFLAGS = $(AM_CPPFLAGS) -DPKGLIBDIR='"$(pkglibdir)"' -DPKGLIBEXECDIR='"$(pkglibexecdir)"' \
	-DMPIRUN_OMPI='"$(MPIRUN_OMPI)"' -DMPIRUN_MPICH='"$(MPIRUN_MPICH)"'
analyzer_collscope_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
analyzer_collscope_LDADD = analyzer/par/libcspar.la $(CS_FORMATS_LIBS) analyzer/live/libcslive.la $(CS_REPORT_LIBS)
# `collscope tui` runs the browser in-process when it was built (tui/local.mk
# defines CS_TUI_LIBS, which links the libraries above again after it).
if HAVE_NCURSES
analyzer_collscope_LDADD += $(CS_TUI_LIBS)
endif
