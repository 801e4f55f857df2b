dnl CS_CHECK_CUDA: the CUDA toolkit (headers, nvcc). Nothing is hard-linked
dnl into the preload; headers give the ABI, the library is found at run time.
AC_DEFUN([CS_CHECK_CUDA], [
  CS_WITH([cuda], [CUDA toolkit (or --with-cuda=PATH)])
  cs_have_cuda=no; cs_have_nvcc=no; CUDA_HOME=
  AS_CASE([$cs_with_cuda],
    [no], [],
    [yes|check], [CUDA_HOME=/usr/local/cuda],
    [CUDA_HOME=$cs_with_cuda])
  AS_IF([test -n "$CUDA_HOME"], [
    AS_IF([test -f "$CUDA_HOME/include/cuda_runtime_api.h"], [cs_have_cuda=yes],
          [CS_NOT_FOUND([cuda], [the CUDA toolkit in $CUDA_HOME])])
  ])
  AS_IF([test $cs_have_cuda = yes], [
    CUDA_CFLAGS="-I$CUDA_HOME/include"
    AC_PATH_PROG([NVCC], [nvcc], [no], [$CUDA_HOME/bin$PATH_SEPARATOR$PATH])
    AS_IF([test "x$NVCC" != xno], [cs_have_nvcc=yes])
  ])
  AC_SUBST([CUDA_HOME]) AC_SUBST([CUDA_CFLAGS])
  AC_ARG_VAR([NVCC], [the CUDA compiler])
  AC_ARG_VAR([NVCC_GENCODE], [nvcc -gencode flags for the kernels])
  AS_IF([test -z "$NVCC_GENCODE"], [NVCC_GENCODE="-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90"])
  AM_CONDITIONAL([HAVE_CUDA], [test $cs_have_cuda = yes])
  AM_CONDITIONAL([HAVE_NVCC], [test $cs_have_nvcc = yes])
])
dnl CS_CHECK_NCCL: nccl.h from the toolkit or the system.
AC_DEFUN([CS_CHECK_NCCL], [
  CS_WITH([nccl], [NCCL headers])
  cs_have_nccl=no
  AS_IF([test "x$cs_with_nccl" != xno && test $cs_have_cuda = yes], [
    save_CPPFLAGS=$CPPFLAGS; CPPFLAGS="$CPPFLAGS $CUDA_CFLAGS"
    AC_CHECK_HEADER([nccl.h], [cs_have_nccl=yes], [CS_NOT_FOUND([nccl], [nccl.h])])
    CPPFLAGS=$save_CPPFLAGS
  ], [test "x$cs_with_nccl" = xyes], [AC_MSG_ERROR([--with-nccl needs the CUDA toolkit])])
  AM_CONDITIONAL([HAVE_NCCL], [test $cs_have_nccl = yes])
])
dnl CS_CHECK_CUPTI: cupti.h (CUPTI itself is dlopen()ed at run time).
AC_DEFUN([CS_CHECK_CUPTI], [
  CS_WITH([cupti], [CUPTI headers])
  cs_have_cupti=no
  AS_IF([test "x$cs_with_cupti" != xno && test $cs_have_cuda = yes], [
    save_CPPFLAGS=$CPPFLAGS; CPPFLAGS="$CPPFLAGS $CUDA_CFLAGS"
    AC_CHECK_HEADER([cupti.h], [cs_have_cupti=yes], [CS_NOT_FOUND([cupti], [cupti.h])])
    CPPFLAGS=$save_CPPFLAGS
  ], [test "x$cs_with_cupti" = xyes], [AC_MSG_ERROR([--with-cupti needs the CUDA toolkit])])
  AM_CONDITIONAL([HAVE_CUPTI], [test $cs_have_cupti = yes])
])
