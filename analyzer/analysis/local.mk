# analyzer/analysis: libcsanalysis, the analysis library. The entry points
# (analysis.c), the context all passes share (an_ctx.c), the pass table
# (an_run.c) and the passes, one file each; the verdict kinds; tails, the
# cost model, the what-if replay and the slowdown attribution; the analysis
# tables' SQL (store_analysis.c); the analysis of a job kept as rank stores
# by K processes over a transport its caller gives (an_par.c, par.h).
noinst_LTLIBRARIES += analyzer/analysis/libcsanalysis.la
analyzer_analysis_libcsanalysis_la_SOURCES = analyzer/analysis/store_analysis.h analyzer/analysis/store_analysis.c \
	analyzer/analysis/csanalysis.h analyzer/analysis/analysis.h analyzer/analysis/analysis.c analyzer/analysis/an_open.c \
	analyzer/analysis/an_run.c analyzer/analysis/par.h analyzer/analysis/an_par.c analyzer/analysis/an_ctx.c \
	analyzer/analysis/an_align.c analyzer/analysis/an_match.c analyzer/analysis/an_p2p.c analyzer/analysis/an_msgs.c \
	analyzer/analysis/verdict.h analyzer/analysis/an_verdict.c analyzer/analysis/an_verdict_kit.c \
	analyzer/analysis/an_verdict_persistent.c analyzer/analysis/an_verdict_transient.c \
	analyzer/analysis/an_verdict_recurring.c analyzer/analysis/an_verdict_slow_link.c \
	analyzer/analysis/an_verdict_slow_link_comm.c analyzer/analysis/an_verdict_slow_collective.c \
	analyzer/analysis/an_tail.c analyzer/analysis/an_gpu.c analyzer/analysis/an_kernels.c analyzer/analysis/an_figures.c analyzer/analysis/an_layout.c analyzer/analysis/an_slowdown.c \
	analyzer/analysis/gpu_graph.h analyzer/analysis/an_gpu_graph.c \
	analyzer/analysis/whatif_int.h analyzer/analysis/whatif.h analyzer/analysis/an_model.c analyzer/analysis/an_whatif.c
analyzer_analysis_libcsanalysis_la_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
analyzer_analysis_libcsanalysis_la_LIBADD = -lm
# What a program that links libcsanalysis links after it.
CS_ANALYSIS_LIBS = analyzer/analysis/libcsanalysis.la $(CS_STORE_LIBS) $(PTHREAD_LIBS) -lm
