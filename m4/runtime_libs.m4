dnl PAPI and libunwind: only their headers are needed at build time; the
dnl libraries are dlopen()ed with RTLD_LOCAL at run time, so that libunwind
dnl never replaces the application's backtrace() and _Unwind_* symbols.
AC_DEFUN([CS_CHECK_PAPI], [
  CS_WITH([papi], [PAPI hardware counters])
  cs_have_papi=no
  AS_IF([test "x$cs_with_papi" != xno], [
    AC_CHECK_HEADER([papi.h], [cs_have_papi=yes], [CS_NOT_FOUND([papi], [papi.h])])
  ])
  AS_IF([test $cs_have_papi = yes], [AC_DEFINE([HAVE_PAPI], [1], [PAPI headers found])])
  AM_CONDITIONAL([HAVE_PAPI], [test $cs_have_papi = yes])
])
AC_DEFUN([CS_CHECK_LIBUNWIND], [
  CS_WITH([libunwind], [libunwind call sites])
  cs_have_libunwind=no
  AS_IF([test "x$cs_with_libunwind" != xno], [
    AC_CHECK_HEADER([libunwind.h], [cs_have_libunwind=yes], [CS_NOT_FOUND([libunwind], [libunwind.h])])
  ])
  AS_IF([test $cs_have_libunwind = yes], [AC_DEFINE([HAVE_LIBUNWIND], [1], [libunwind headers found])])
  AM_CONDITIONAL([HAVE_LIBUNWIND], [test $cs_have_libunwind = yes])
])
AC_DEFUN([CS_CHECK_NCURSES], [
  CS_WITH([ncurses], [ncursesw terminal UI])
  cs_have_ncurses=no
  AS_IF([test "x$cs_with_ncurses" != xno], [
    PKG_CHECK_MODULES([NCURSES], [ncursesw], [cs_have_ncurses=yes], [CS_NOT_FOUND([ncurses], [ncursesw])])
  ])
  AS_IF([test $cs_have_ncurses = yes], [AC_DEFINE([HAVE_NCURSES], [1], [ncursesw found: the terminal UI is built])])
  AM_CONDITIONAL([HAVE_NCURSES], [test $cs_have_ncurses = yes])
])
