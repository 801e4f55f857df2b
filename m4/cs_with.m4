dnl CS_WITH(NAME, HELP) -> sets cs_with_NAME to yes|no|check|<path>
AC_DEFUN([CS_WITH], [
  AC_ARG_WITH([$1], [AS_HELP_STRING([--with-$1@<:@=yes|no|check@:>@], [$2 (default: check)])],
              [cs_with_]m4_translit([$1], [-], [_])[=$withval], [cs_with_]m4_translit([$1], [-], [_])[=check])
])
dnl CS_NOT_FOUND(NAME, WHAT): error when asked for explicitly, else note it.
AC_DEFUN([CS_NOT_FOUND], [
  AS_IF([test "x$cs_with_$1" != xcheck && test "x$cs_with_$1" != xno],
        [AC_MSG_ERROR([--with-$1 was given but $2 was not found])],
        [AC_MSG_NOTICE([$2 not found; building without it])])
])
dnl A tiny pthread check (Linux/glibc).
AC_DEFUN([AX_PTHREAD_CS], [
  PTHREAD_CFLAGS="-pthread"; PTHREAD_LIBS="-pthread"
  AC_SUBST([PTHREAD_CFLAGS]) AC_SUBST([PTHREAD_LIBS])
])
