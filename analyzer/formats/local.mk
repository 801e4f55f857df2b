# analyzer/formats: libcsformats, traces in other tools' formats: the
# import driver and its format table (import.c) with one reader per format
# (import_kineto.c), the export format table (export.c) with one writer per
# format (export_<format>.c), the span pass they share (export_io.c) and
# every -o file of the commands (outfile.c: a new file renamed into place,
# never through a link).
noinst_LTLIBRARIES += analyzer/formats/libcsformats.la
analyzer_formats_libcsformats_la_SOURCES = analyzer/formats/import.h analyzer/formats/import.c \
	analyzer/formats/import_kineto.c analyzer/formats/export.h analyzer/formats/export.c \
	analyzer/formats/export_chrome.c analyzer/formats/export_io.h analyzer/formats/export_io.c \
	analyzer/formats/export_kineto.c analyzer/formats/outfile.h analyzer/formats/outfile.c
analyzer_formats_libcsformats_la_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(YAJL_CFLAGS) $(ZLIB_CFLAGS)
CS_FORMATS_LIBS = analyzer/formats/libcsformats.la $(YAJL_LIBS) $(ZLIB_LIBS)
# The Perfetto protobuf export: its encoder generated from our .proto by
# protoc-c at build time (m4/protobuf_c.m4).
EXTRA_DIST += analyzer/formats/perfetto_trace.proto
if HAVE_PROTOBUF_C
analyzer_formats_libcsformats_la_SOURCES += analyzer/formats/export_perfetto.c
nodist_analyzer_formats_libcsformats_la_SOURCES = analyzer/formats/perfetto_trace.pb-c.c \
	analyzer/formats/perfetto_trace.pb-c.h
analyzer_formats_libcsformats_la_CFLAGS += $(PROTOBUF_C_CFLAGS)
CS_FORMATS_LIBS += $(PROTOBUF_C_LIBS)
BUILT_SOURCES += analyzer/formats/perfetto_trace.pb-c.h
CLEANFILES += analyzer/formats/perfetto_trace.pb-c.c analyzer/formats/perfetto_trace.pb-c.h
# One run of protoc-c writes both files; the .c follows the .h (a rule
# with two targets could run twice at once under make -j).
analyzer/formats/perfetto_trace.pb-c.h: $(srcdir)/analyzer/formats/perfetto_trace.proto
	$(AM_V_GEN)$(MKDIR_P) analyzer/formats && $(PROTOC_C) --proto_path=$(srcdir)/analyzer/formats \
	  --c_out=analyzer/formats $(srcdir)/analyzer/formats/perfetto_trace.proto
analyzer/formats/perfetto_trace.pb-c.c: analyzer/formats/perfetto_trace.pb-c.h
	@test -f $@ || { rm -f analyzer/formats/perfetto_trace.pb-c.h && \
	  $(MAKE) $(AM_MAKEFLAGS) analyzer/formats/perfetto_trace.pb-c.h; }
else
EXTRA_DIST += analyzer/formats/export_perfetto.c
endif
# The OTF2 export, when configure found libotf2.
if HAVE_OTF2
analyzer_formats_libcsformats_la_SOURCES += analyzer/formats/export_otf2.c
analyzer_formats_libcsformats_la_CFLAGS += $(OTF2_CFLAGS)
CS_FORMATS_LIBS += $(OTF2_LIBS)
else
EXTRA_DIST += analyzer/formats/export_otf2.c
endif
