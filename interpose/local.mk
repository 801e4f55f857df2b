# interpose: the LD_PRELOAD library, one per MPI implementation (their
# handle ABIs differ) built from the same sources, plus one without MPI.
EXTRA_DIST += interpose/mpi.spec interpose/gen-wrappers.py

CS_PRELOAD_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
CS_PRELOAD_LDFLAGS = -module -avoid-version -shared -Wl,-z,defs
CS_PRELOAD_LIBS = $(CS_LOG_LIBS) $(PTHREAD_LIBS) -ldl
CS_CORE_SOURCES = interpose/core.h interpose/core.c interpose/callsite.c interpose/papi.c

interpose/mpi_wrappers.gen.c: $(srcdir)/interpose/mpi.spec $(CS_GEN)
	$(AM_V_GEN)$(MKDIR_P) interpose && $(PYTHON3) $(CS_GEN) mpi $@ $(srcdir)/interpose/mpi.spec
BUILT_SOURCES += interpose/mpi_wrappers.gen.c
CLEANFILES += interpose/mpi_wrappers.gen.c

pkglib_LTLIBRARIES += interpose/collscope-nompi.la
interpose_collscope_nompi_la_SOURCES = $(CS_CORE_SOURCES)
interpose_collscope_nompi_la_CFLAGS = $(CS_PRELOAD_CFLAGS)
interpose_collscope_nompi_la_LDFLAGS = $(CS_PRELOAD_LDFLAGS)
interpose_collscope_nompi_la_LIBADD = $(CS_PRELOAD_LIBS)

if HAVE_OMPI
pkglib_LTLIBRARIES += interpose/collscope-openmpi.la
interpose_collscope_openmpi_la_SOURCES = $(CS_CORE_SOURCES) interpose/mpi_wrap.h interpose/mpi_wrap.c \
	interpose/mpi_fuse.h interpose/mpi_fuse.c
nodist_interpose_collscope_openmpi_la_SOURCES = interpose/mpi_wrappers.gen.c
interpose_collscope_openmpi_la_CFLAGS = $(CS_PRELOAD_CFLAGS) $(OMPI_CFLAGS)
interpose_collscope_openmpi_la_LDFLAGS = $(CS_PRELOAD_LDFLAGS)
interpose_collscope_openmpi_la_LIBADD = $(CS_PRELOAD_LIBS)
endif

if HAVE_MPICH
pkglib_LTLIBRARIES += interpose/collscope-mpich.la
interpose_collscope_mpich_la_SOURCES = $(CS_CORE_SOURCES) interpose/mpi_wrap.h interpose/mpi_wrap.c \
	interpose/mpi_fuse.h interpose/mpi_fuse.c
nodist_interpose_collscope_mpich_la_SOURCES = interpose/mpi_wrappers.gen.c
interpose_collscope_mpich_la_CFLAGS = $(CS_PRELOAD_CFLAGS) $(MPICH_CFLAGS)
interpose_collscope_mpich_la_LDFLAGS = $(CS_PRELOAD_LDFLAGS)
interpose_collscope_mpich_la_LIBADD = $(CS_PRELOAD_LIBS)
endif

# NCCL and CUDA runtime wrappers (interpose/nccl.spec, interpose/cuda.spec),
# in every preload flavor: one library answers MPI, NCCL and CUDA calls.
# Compiled against the headers only (CUDA_CFLAGS); the libraries are found
# at run time. Without the headers they are not built.
EXTRA_DIST += interpose/nccl.spec interpose/cuda.spec
if HAVE_CUDA
CS_PRELOAD_CFLAGS += $(CUDA_CFLAGS)
CS_CORE_SOURCES += interpose/cuda_wrap.h interpose/cuda_wrap.c interpose/gputime.c
interpose/cuda_wrappers.gen.c: $(srcdir)/interpose/cuda.spec $(CS_GEN)
	$(AM_V_GEN)$(MKDIR_P) interpose && $(PYTHON3) $(CS_GEN) gpu $@ $(srcdir)/interpose/cuda.spec
BUILT_SOURCES += interpose/cuda_wrappers.gen.c
CLEANFILES += interpose/cuda_wrappers.gen.c
if HAVE_NCCL
CS_CORE_SOURCES += interpose/nccl_wrap.h interpose/nccl_wrap.c interpose/ncclprof.h interpose/ncclprof.c
# Apply mode's NCCL fusion; libcskernels is dlopen()ed, never linked.
CS_CORE_SOURCES += interpose/nccl_fuse.h interpose/nccl_fuse.c interpose/fuse_kern.h interpose/fuse_kern.c
interpose/nccl_wrappers.gen.c: $(srcdir)/interpose/nccl.spec $(CS_GEN)
	$(AM_V_GEN)$(MKDIR_P) interpose && $(PYTHON3) $(CS_GEN) gpu $@ $(srcdir)/interpose/nccl.spec
BUILT_SOURCES += interpose/nccl_wrappers.gen.c
CLEANFILES += interpose/nccl_wrappers.gen.c
else
EXTRA_DIST += interpose/nccl_wrap.h interpose/nccl_wrap.c interpose/ncclprof.h interpose/ncclprof.c
EXTRA_DIST += interpose/nccl_fuse.h interpose/nccl_fuse.c interpose/fuse_kern.h interpose/fuse_kern.c
endif
# The CUPTI subscriber (COLLSCOPE_CUPTI=1): libcupti is dlopen()ed.
if HAVE_CUPTI
CS_PRELOAD_CFLAGS += -DCS_WITH_CUPTI=1
CS_CORE_SOURCES += interpose/cupti.c
else
EXTRA_DIST += interpose/cupti.c
endif
else
EXTRA_DIST += interpose/cupti.c
EXTRA_DIST += interpose/cuda_wrap.h interpose/cuda_wrap.c interpose/gputime.c \
	interpose/nccl_wrap.h interpose/nccl_wrap.c interpose/ncclprof.h interpose/ncclprof.c \
	interpose/nccl_fuse.h interpose/nccl_fuse.c interpose/fuse_kern.h interpose/fuse_kern.c
endif
