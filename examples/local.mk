# examples: workloads for collscope (see examples/README.md).
# mpi_trainer and pipe_trainer are built once per MPI implementation found, from one source,
# with the implementation's pkg-config flags (no mpicc wrapper).
EXTRA_DIST += examples/README.md examples/fortran_ring.f90 \
	examples/mpi4py_allreduce.py

if HAVE_OMPI
noinst_PROGRAMS += examples/mpi_trainer_ompi
examples_mpi_trainer_ompi_SOURCES = examples/mpi_trainer.c
examples_mpi_trainer_ompi_CFLAGS = $(AM_CFLAGS) $(OMPI_CFLAGS)
examples_mpi_trainer_ompi_LDADD = $(OMPI_LIBS) -lm
noinst_PROGRAMS += examples/pipe_trainer_ompi
examples_pipe_trainer_ompi_SOURCES = examples/pipe_trainer.c
examples_pipe_trainer_ompi_CFLAGS = $(AM_CFLAGS) $(OMPI_CFLAGS)
examples_pipe_trainer_ompi_LDADD = $(OMPI_LIBS)
endif

if HAVE_MPICH
noinst_PROGRAMS += examples/mpi_trainer_mpich
examples_mpi_trainer_mpich_SOURCES = examples/mpi_trainer.c
examples_mpi_trainer_mpich_CFLAGS = $(AM_CFLAGS) $(MPICH_CFLAGS)
examples_mpi_trainer_mpich_LDADD = $(MPICH_LIBS) -lm
noinst_PROGRAMS += examples/pipe_trainer_mpich
examples_pipe_trainer_mpich_SOURCES = examples/pipe_trainer.c
examples_pipe_trainer_mpich_CFLAGS = $(AM_CFLAGS) $(MPICH_CFLAGS)
examples_pipe_trainer_mpich_LDADD = $(MPICH_LIBS)
endif

# Tests that run real applications (LAMMPS, HPCC, mpi4py, Fortran) traced.
TESTS += tests/apps/lammps.sh tests/apps/hpcc.sh tests/apps/mpi4py.sh \
	tests/apps/fortran.sh
EXTRA_DIST += tests/apps/lammps.sh tests/apps/hpcc.sh tests/apps/mpi4py.sh \
	tests/apps/fortran.sh tests/apps/apps.sh tests/apps/lj-melt.in \
	tests/apps/hpccinf.txt

# nccl_trainer: one CUDA C source, built with nvcc against the real CUDA and
# NCCL headers, cudart linked shared (so the preload can interpose it) and
# the host twins of its kernels exported (the cudart stand-in runs them);
# -g: its call sites read nccl_trainer.cu:LINE in the reports (docs/guide.md).
EXTRA_DIST += examples/nccl_trainer.cu
if HAVE_NVCC
if HAVE_NCCL
if HAVE_OMPI
CS_NCCL_TRAINER_FLAGS = -std=c++17 -O2 -g -cudart shared $(NVCC_GENCODE) -ccbin $(CXX) \
	-Xcompiler -Wall,-Wno-unused-function $(OMPI_CFLAGS) -Xlinker --export-dynamic
examples/nccl_trainer$(EXEEXT): examples/nccl_trainer.cu
	@$(MKDIR_P) examples
	$(AM_V_GEN)$(NVCC) $(CS_NCCL_TRAINER_FLAGS) -o $@ $(srcdir)/examples/nccl_trainer.cu \
	  -L$(CUDA_HOME)/lib64 -lnccl $(OMPI_LIBS)
all-local: examples/nccl_trainer$(EXEEXT)
CLEANFILES += examples/nccl_trainer$(EXEEXT)
endif
endif
endif
