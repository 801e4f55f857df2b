# libtrace: the span model, the clock, the crash-safe log, and the SQLite
# store. Two PIC convenience libraries:
#  - libcslog.la: what runs inside the application (the preload links only
#    this): clock, log, op and datatype tables, and the store parts that
#    convert the process's own log at exit (file, schema, import, SQL
#    helpers);
#  - libcsstore.la: the rest of the store, for the commands and the TUI
#    (merge, copies, reads, statistics, the bulk writer). They link
#    $(CS_STORE_LIBS), which brings both.
noinst_LTLIBRARIES += libtrace/libcslog.la libtrace/libcsstore.la
libtrace_libcslog_la_SOURCES = \
	libtrace/span.h libtrace/clock.h libtrace/clock.c \
	libtrace/log.h libtrace/log.c \
	libtrace/dtypes.h libtrace/dtypes.c \
	libtrace/store.h libtrace/store_tables.h libtrace/store_int.h libtrace/store_sql.h \
	libtrace/store_sql.c libtrace/store_meta.c libtrace/store_file.c libtrace/store_schema.c libtrace/store_import.c
nodist_libtrace_libcslog_la_SOURCES = libtrace/ops.gen.h libtrace/ops.gen.c
libtrace_libcslog_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden $(SQLITE_CFLAGS)
libtrace_libcslog_la_LIBADD = common/libcscommon.la $(SQLITE_LIBS)

libtrace_libcsstore_la_SOURCES = \
	libtrace/store_merge.c libtrace/store_copy.c libtrace/store_read.c libtrace/store_stats.c \
	libtrace/store_comms.h libtrace/store_comms.c libtrace/store_recover.c \
	libtrace/store_bulk.h libtrace/store_bulk.c \
	libtrace/dirlock.h libtrace/dirlock.c
# A job as rank stores and an index (docs/schema.md).
libtrace_libcsstore_la_SOURCES += libtrace/store_index.c libtrace/store_parts.c libtrace/store_map.c
# A log followed while its process writes it (collscope top).
libtrace_libcsstore_la_SOURCES += libtrace/log_follow.h libtrace/log_follow.c
# The alarms raised while the job ran, kept in the trace (live_alarms).
libtrace_libcsstore_la_SOURCES += libtrace/store_live.c
# The trace source: what a path given to a command holds, decided once.
libtrace_libcsstore_la_SOURCES += libtrace/source.h libtrace/source.c
libtrace_libcsstore_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden $(SQLITE_CFLAGS)

# What a program links to use the whole store (libcsstore before libcslog,
# whose functions it calls).
CS_STORE_LIBS = libtrace/libcsstore.la libtrace/libcslog.la $(SQLITE_LIBS)
# What the preload links: the log and the conversion of its own log.
CS_LOG_LIBS = libtrace/libcslog.la $(SQLITE_LIBS)

# The op table comes from every wrapper spec (interpose/*.spec).
CS_SPECS = $(srcdir)/interpose/mpi.spec
CS_GEN = $(srcdir)/interpose/gen-wrappers.py
libtrace/ops.gen.h: libtrace/ops.gen.c
libtrace/ops.gen.c: $(CS_SPECS) $(CS_GEN) $(srcdir)/interpose/ops.lst
	$(AM_V_GEN)$(MKDIR_P) libtrace && $(PYTHON3) $(CS_GEN) ops libtrace/ops.gen.h libtrace/ops.gen.c $(CS_SPECS)
BUILT_SOURCES += libtrace/ops.gen.h libtrace/ops.gen.c
CLEANFILES += libtrace/ops.gen.h libtrace/ops.gen.c
# NCCL and CUDA ops follow the MPI ones, so existing op ids stay.
CS_SPECS += $(srcdir)/interpose/nccl.spec $(srcdir)/interpose/cuda.spec
# Ops of imported traces (collscope import) follow; they are never wrapped.
CS_SPECS += $(srcdir)/interpose/import.spec
EXTRA_DIST += interpose/import.spec
# A job as rank stores and an index, read as its merged trace is.
TESTS += tests/store/scale_synth.sh
EXTRA_DIST += tests/store/scale_synth.sh
TESTS += tests/store/scale_mpi.sh tests/store/scale_tui.sh
EXTRA_DIST += tests/store/scale_mpi.sh tests/store/scale_tui.sh
