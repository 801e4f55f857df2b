# analyzer/par: the drivers of the parallel analysis, above the library:
# forked workers over socket pairs (par_fork.c, libcspar, which `collscope
# analyze -j K` uses where no MPI is installed) and one MPI program per MPI
# found (par_mpi.c), which `collscope analyze -j K` starts under that MPI's
# mpirun and which `mpirun -np K collscope analyze` execs; collscope finds
# it beside itself, else in pkglibexecdir. Each gives the library's
# cs_analysis_run_par a transport (analyzer/analysis/par.h).
noinst_LTLIBRARIES += analyzer/par/libcspar.la
analyzer_par_libcspar_la_SOURCES = analyzer/par/par_fork.h analyzer/par/par_fork.c
analyzer_par_libcspar_la_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
pkglibexec_PROGRAMS =
# The transports on big messages with a stand-in of the analysis, and the
# parallel analysis end to end under each transport.
check_PROGRAMS += tests/unit/test_par_fork
tests_unit_test_par_fork_SOURCES = tests/unit/test_par_fork.c tests/unit/par_standin.c analyzer/par/par_fork.c
TESTS += tests/store/par_transport.sh tests/store/par_transport_ompi.sh tests/store/par_transport_mpich.sh tests/store/par_analyze.sh
EXTRA_DIST += tests/store/par_transport.sh tests/store/par_transport_ompi.sh tests/store/par_transport_mpich.sh tests/store/par_analyze.sh \
	tests/store/par_transport.inc.sh tests/store/par_transport_mpi.inc.sh analyzer/par/par_mpi.c
if HAVE_OMPI
pkglibexec_PROGRAMS += analyzer/collscope-analyze-openmpi
analyzer_collscope_analyze_openmpi_SOURCES = analyzer/par/par_mpi.c
analyzer_collscope_analyze_openmpi_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(OMPI_CFLAGS)
analyzer_collscope_analyze_openmpi_LDADD = $(CS_ANALYSIS_LIBS) $(OMPI_LIBS)
check_PROGRAMS += tests/unit/test_par_mpi_ompi
tests_unit_test_par_mpi_ompi_SOURCES = analyzer/par/par_mpi.c tests/unit/par_standin.c
tests_unit_test_par_mpi_ompi_CFLAGS = $(AM_CFLAGS) $(OMPI_CFLAGS)
tests_unit_test_par_mpi_ompi_LDADD = common/libcscommon.la $(OMPI_LIBS)
endif
if HAVE_MPICH
pkglibexec_PROGRAMS += analyzer/collscope-analyze-mpich
analyzer_collscope_analyze_mpich_SOURCES = analyzer/par/par_mpi.c
analyzer_collscope_analyze_mpich_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(MPICH_CFLAGS)
analyzer_collscope_analyze_mpich_LDADD = $(CS_ANALYSIS_LIBS) $(MPICH_LIBS)
check_PROGRAMS += tests/unit/test_par_mpi_mpich
tests_unit_test_par_mpi_mpich_SOURCES = analyzer/par/par_mpi.c tests/unit/par_standin.c
tests_unit_test_par_mpi_mpich_CFLAGS = $(AM_CFLAGS) $(MPICH_CFLAGS)
tests_unit_test_par_mpi_mpich_LDADD = common/libcscommon.la $(MPICH_LIBS)
endif
