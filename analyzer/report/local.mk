# analyzer/report: libcsreport, the report model (the stored analysis read
# back, report.c), one writer per format (report_<format>.c), the CI gates,
# diff and check-estimate.
noinst_LTLIBRARIES += analyzer/report/libcsreport.la
analyzer_report_libcsreport_la_SOURCES = analyzer/report/report.h analyzer/report/report_int.h analyzer/report/report.c analyzer/report/report_format.c analyzer/report/report_units.c analyzer/report/report_answer.c \
	analyzer/report/report_text.c analyzer/report/report_json.c analyzer/report/report_markdown.c \
	analyzer/report/report_junit.c analyzer/report/gates.c analyzer/report/diff.c analyzer/report/estimate.c
analyzer_report_libcsreport_la_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
# What a program that links libcsreport links after it.
CS_REPORT_LIBS = analyzer/report/libcsreport.la analyzer/status/libcsstatus.la $(CS_ANALYSIS_LIBS)
# report_units.c: one unit per column or sentence, names fitted without a
# cut file:line (issue 36).
check_PROGRAMS += tests/unit/test_report_units
TESTS += tests/unit/test_report_units
tests_unit_test_report_units_SOURCES = tests/unit/test_report_units.c tests/unit/check.h
tests_unit_test_report_units_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_unit_test_report_units_LDADD = $(CS_REPORT_LIBS)
