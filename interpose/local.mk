# interpose: the LD_PRELOAD library, one per MPI implementation (their
# handle ABIs differ) built from the same sources, plus one without MPI.
EXTRA_DIST += interpose/mpi.spec interpose/ops.lst interpose/gen-wrappers.py

# Wrappers: one spec, one generated C file, one rule of the same shape for
# every API family (interpose/gen-wrappers.py). Op ids come from ops.lst.
CS_GEN_DEPS = $(srcdir)/interpose/ops.lst $(CS_GEN)
CS_GEN_WRAP = $(MKDIR_P) interpose && $(PYTHON3) $(CS_GEN) wrap

CS_PRELOAD_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
CS_PRELOAD_LDFLAGS = -module -avoid-version -shared -Wl,-z,defs
CS_PRELOAD_LIBS = $(CS_LOG_LIBS) $(PTHREAD_LIBS) -ldl
# Core and the modules every flavor carries (interpose/modules.c lists them).
CS_CORE_SOURCES = interpose/preload.h interpose/warn.h interpose/warn.c interpose/core.h interpose/core.c interpose/module.h interpose/modules.c \
	interpose/settings.h interpose/settings.c interpose/callsite.h interpose/callsite.c \
	interpose/papi.h interpose/papi.c interpose/fuse/fuse.h interpose/fuse/fuse.c interpose/fuse/fuse_guard.h interpose/fuse/fuse_guard.c \
	interpose/watchdog.h interpose/watchdog.c
# Generated wrappers every flavor carries (NCCL, CUDA runtime; below).
CS_CORE_NODIST =

interpose/mpi_wrappers.gen.c: $(srcdir)/interpose/mpi.spec $(CS_GEN_DEPS)
	$(AM_V_GEN)$(CS_GEN_WRAP) $@ $(srcdir)/interpose/mpi.spec
BUILT_SOURCES += interpose/mpi_wrappers.gen.c
CLEANFILES += interpose/mpi_wrappers.gen.c

pkglib_LTLIBRARIES += interpose/collscope-nompi.la
interpose_collscope_nompi_la_SOURCES = $(CS_CORE_SOURCES)
nodist_interpose_collscope_nompi_la_SOURCES = $(CS_CORE_NODIST)
interpose_collscope_nompi_la_CFLAGS = $(CS_PRELOAD_CFLAGS)
interpose_collscope_nompi_la_LDFLAGS = $(CS_PRELOAD_LDFLAGS)
interpose_collscope_nompi_la_LIBADD = $(CS_PRELOAD_LIBS)

if HAVE_OMPI
pkglib_LTLIBRARIES += interpose/collscope-openmpi.la
interpose_collscope_openmpi_la_SOURCES = $(CS_CORE_SOURCES) interpose/mpi_wrap.h interpose/mpi_wrap.c \
	interpose/fuse/mpi_fuse.h interpose/fuse/mpi_fuse.c
nodist_interpose_collscope_openmpi_la_SOURCES = $(CS_CORE_NODIST) interpose/mpi_wrappers.gen.c
interpose_collscope_openmpi_la_CFLAGS = $(CS_PRELOAD_CFLAGS) -DCS_WITH_MPI=1 $(OMPI_CFLAGS)
interpose_collscope_openmpi_la_LDFLAGS = $(CS_PRELOAD_LDFLAGS)
interpose_collscope_openmpi_la_LIBADD = $(CS_PRELOAD_LIBS)
endif

if HAVE_MPICH
pkglib_LTLIBRARIES += interpose/collscope-mpich.la
interpose_collscope_mpich_la_SOURCES = $(CS_CORE_SOURCES) interpose/mpi_wrap.h interpose/mpi_wrap.c \
	interpose/fuse/mpi_fuse.h interpose/fuse/mpi_fuse.c
nodist_interpose_collscope_mpich_la_SOURCES = $(CS_CORE_NODIST) interpose/mpi_wrappers.gen.c
interpose_collscope_mpich_la_CFLAGS = $(CS_PRELOAD_CFLAGS) -DCS_WITH_MPI=1 $(MPICH_CFLAGS)
interpose_collscope_mpich_la_LDFLAGS = $(CS_PRELOAD_LDFLAGS)
interpose_collscope_mpich_la_LIBADD = $(CS_PRELOAD_LIBS)
endif

# NCCL and CUDA runtime wrappers (interpose/nccl.spec, interpose/cuda.spec),
# in every preload flavor: one library answers MPI, NCCL and CUDA calls.
# Compiled against the headers only (CUDA_CFLAGS); the libraries are found
# at run time. Without the headers they are not built.
EXTRA_DIST += interpose/nccl.spec interpose/cuda.spec
if HAVE_CUDA
CS_PRELOAD_CFLAGS += $(CUDA_CFLAGS) -DCS_WITH_CUDA=1
CS_CORE_SOURCES += interpose/gpu_wrap.h interpose/gpu_wrap.c interpose/cuda_wrap.h interpose/cuda_wrap.c \
	interpose/cupti.h interpose/gputime.h interpose/gputime.c
CS_CORE_NODIST += interpose/cuda_wrappers.gen.c
interpose/cuda_wrappers.gen.c: $(srcdir)/interpose/cuda.spec $(CS_GEN_DEPS)
	$(AM_V_GEN)$(CS_GEN_WRAP) $@ $(srcdir)/interpose/cuda.spec
BUILT_SOURCES += interpose/cuda_wrappers.gen.c
CLEANFILES += interpose/cuda_wrappers.gen.c
if HAVE_NCCL
CS_PRELOAD_CFLAGS += -DCS_WITH_NCCL=1
CS_CORE_SOURCES += interpose/nccl_wrap.h interpose/nccl_wrap.c interpose/ncclprof.h interpose/ncclprof.c
# Apply mode's NCCL fusion; libcskernels is dlopen()ed, never linked.
CS_CORE_SOURCES += interpose/fuse/nccl_fuse.h interpose/fuse/nccl_fuse.c interpose/fuse/fuse_kern.h interpose/fuse/fuse_kern.c
CS_CORE_NODIST += interpose/nccl_wrappers.gen.c
interpose/nccl_wrappers.gen.c: $(srcdir)/interpose/nccl.spec $(CS_GEN_DEPS)
	$(AM_V_GEN)$(CS_GEN_WRAP) $@ $(srcdir)/interpose/nccl.spec
BUILT_SOURCES += interpose/nccl_wrappers.gen.c
CLEANFILES += interpose/nccl_wrappers.gen.c
else
EXTRA_DIST += interpose/nccl_wrap.h interpose/nccl_wrap.c interpose/ncclprof.h interpose/ncclprof.c
EXTRA_DIST += interpose/fuse/nccl_fuse.h interpose/fuse/nccl_fuse.c interpose/fuse/fuse_kern.h interpose/fuse/fuse_kern.c
endif
# The CUPTI subscriber (COLLSCOPE_CUPTI=1): libcupti is dlopen()ed.
if HAVE_CUPTI
CS_PRELOAD_CFLAGS += -DCS_WITH_CUPTI=1
CS_CORE_SOURCES += interpose/cupti.c
else
EXTRA_DIST += interpose/cupti.c
endif
else
EXTRA_DIST += interpose/cupti.c interpose/cupti.h interpose/gputime.h
EXTRA_DIST += interpose/gpu_wrap.h interpose/gpu_wrap.c interpose/cuda_wrap.h interpose/cuda_wrap.c interpose/gputime.c \
	interpose/nccl_wrap.h interpose/nccl_wrap.c interpose/ncclprof.h interpose/ncclprof.c \
	interpose/fuse/nccl_fuse.h interpose/fuse/nccl_fuse.c interpose/fuse/fuse_kern.h interpose/fuse/fuse_kern.c
endif

# The commented template of an optional module: compiled by `make check` so
# that it keeps compiling, linked into no preload.
check_LTLIBRARIES += interpose/libcsmodtemplate.la
interpose_libcsmodtemplate_la_SOURCES = interpose/module_template.c
interpose_libcsmodtemplate_la_CFLAGS = $(CS_PRELOAD_CFLAGS)

# The generator refuses bad specs with their file and line.
TESTS += tests/interpose/gen_wrappers.sh tests/interpose/layers.sh
EXTRA_DIST += tests/interpose/gen_wrappers.sh tests/interpose/layers.sh
