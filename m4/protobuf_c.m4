dnl CS_CHECK_PROTOBUF_C: protobuf-c (libprotobuf-c-dev) and its compiler
dnl protoc-c (protobuf-c-compiler), for `collscope export --format
dnl perfetto` (the encoder is generated from analyzer/perfetto_trace.proto
dnl at build time). Without them the format is left out of the build and
dnl `collscope export --format perfetto` says so.
AC_DEFUN([CS_CHECK_PROTOBUF_C], [
  CS_WITH([protobuf-c], [protobuf-c and protoc-c, for the Perfetto protobuf export])
  cs_have_protobuf_c=no
  AS_IF([test "x$cs_with_protobuf_c" != xno], [
    AC_PATH_PROG([PROTOC_C], [protoc-c], [no])
    PKG_CHECK_MODULES([PROTOBUF_C], [libprotobuf-c >= 1.0], [cs_protobuf_c_lib=yes], [cs_protobuf_c_lib=no])
    AS_IF([test "x$PROTOC_C" != xno && test $cs_protobuf_c_lib = yes], [cs_have_protobuf_c=yes],
          [CS_NOT_FOUND([protobuf-c], [protobuf-c (libprotobuf-c-dev and protobuf-c-compiler)])])
  ])
  AS_IF([test $cs_have_protobuf_c = yes],
        [AC_DEFINE([HAVE_PROTOBUF_C], [1], [protobuf-c found: the Perfetto protobuf export is built])])
  AM_CONDITIONAL([HAVE_PROTOBUF_C], [test $cs_have_protobuf_c = yes])
])
