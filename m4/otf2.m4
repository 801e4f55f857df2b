dnl CS_CHECK_OTF2: libotf2 (Debian libotf2-trace-dev) for `collscope export
dnl --format otf2`. Without it that format is left out of the build and the
dnl command says so.
AC_DEFUN([CS_CHECK_OTF2], [
  CS_WITH([otf2], [OTF2 export through libotf2 (Debian libotf2-trace-dev)])
  cs_have_otf2=no
  AS_IF([test "x$cs_with_otf2" != xno], [
    PKG_CHECK_MODULES([OTF2], [otf2 >= 2.0], [cs_have_otf2=yes],
      [CS_NOT_FOUND([otf2], [libotf2 (package libotf2-trace-dev)])
       AC_MSG_NOTICE([`collscope export --format otf2' is left out of this build])])
  ])
  AS_IF([test $cs_have_otf2 = yes], [AC_DEFINE([HAVE_OTF2], [1], [libotf2 found: the OTF2 export is built])])
  AM_CONDITIONAL([HAVE_OTF2], [test $cs_have_otf2 = yes])
])
