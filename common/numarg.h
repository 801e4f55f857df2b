/* numarg.h: the one parser for numbers given on the command line (every
 * numeric option of every collscope command and of the TUI) and in the
 * environment. It refuses what is not a finite number in range, so a NaN,
 * an infinity, an overflowing or a non-numeric value never reaches a gate
 * or a limit. */
#ifndef CS_NUMARG_H
#define CS_NUMARG_H

#include <stddef.h>

/* Parse the whole of s as a finite decimal number in [lo, hi]. A single
 * trailing '%' is accepted when pct is set. On success 0 and *out; else -1
 * with one message in err naming opt (for example "--tolerance") and s. */
int cs_numarg_double(const char *opt, const char *s, double lo, double hi, int pct, double *out, char *err,
                     size_t errlen);
/* The same for a whole number in [lo, hi] (base 10). */
int cs_numarg_ll(const char *opt, const char *s, long long lo, long long hi, long long *out, char *err, size_t errlen);
/* The environment variable name as a number in [lo, hi]: its value when it
 * parses, else def, with one warning on warn (may be NULL) when it was set
 * but is not valid. Unset gives def silently. */
double cs_numarg_env(const char *name, double lo, double hi, double def, void (*warn)(const char *msg));

#endif
