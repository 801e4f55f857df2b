# libtrace: span model, clock, crash-safe log, SQLite store. Built as one
# PIC convenience library, linked into the preload and the commands.
noinst_LTLIBRARIES += libtrace/libcstrace.la
libtrace_libcstrace_la_SOURCES = \
	libtrace/span.h libtrace/clock.h libtrace/clock.c \
	libtrace/log.h libtrace/log.c \
	libtrace/dtypes.h libtrace/dtypes.c \
	libtrace/store.h libtrace/store_schema.h libtrace/store_int.h libtrace/store_sql.h \
	libtrace/store_sql.c libtrace/store_file.c libtrace/store_schema.c libtrace/store_import.c \
	libtrace/store_merge.c libtrace/store_copy.c libtrace/store_read.c libtrace/store_stats.c \
	libtrace/store_bulk.h libtrace/store_bulk.c
nodist_libtrace_libcstrace_la_SOURCES = libtrace/ops.gen.h libtrace/ops.gen.c
libtrace_libcstrace_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden $(SQLITE_CFLAGS)
libtrace_libcstrace_la_LIBADD = common/libcscommon.la $(SQLITE_LIBS)

# The op table comes from every wrapper spec (interpose/*.spec).
CS_SPECS = $(srcdir)/interpose/mpi.spec
CS_GEN = $(srcdir)/interpose/gen-wrappers.py
libtrace/ops.gen.h: libtrace/ops.gen.c
libtrace/ops.gen.c: $(CS_SPECS) $(CS_GEN)
	$(AM_V_GEN)$(MKDIR_P) libtrace && $(PYTHON3) $(CS_GEN) ops libtrace/ops.gen.h libtrace/ops.gen.c $(CS_SPECS)
BUILT_SOURCES += libtrace/ops.gen.h libtrace/ops.gen.c
CLEANFILES += libtrace/ops.gen.h libtrace/ops.gen.c
# NCCL and CUDA ops follow the MPI ones, so existing op ids stay.
CS_SPECS += $(srcdir)/interpose/nccl.spec $(srcdir)/interpose/cuda.spec
