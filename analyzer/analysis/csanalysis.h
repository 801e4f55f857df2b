/* csanalysis.h: the public interface of libcsanalysis, the cross-rank
 * analysis of a trace and the reports built on it. The collscope
 * subcommands and the TUI use this header only; the passes' own state is
 * in analyzer/analysis/analysis.h, internal to the library.
 *
 * Nothing in the library exits or prints on its own: each call returns 0
 * (or an object), or -1 (NULL) with a message in the caller's buffer, and
 * writes only to the streams it is given. */
#ifndef CS_CSANALYSIS_H
#define CS_CSANALYSIS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "libtrace/source.h"
#include "libtrace/store.h"
#include "libtrace/store_comms.h"
#include "analyzer/analysis/store_analysis.h"

/* ---- running the analysis ---- */

/* Open the trace source src (libtrace/source.h: a trace, or a job of
 * rank stores) in mode (CS_STORE_READ or CS_STORE_WRITE). NULL with the
 * store's message in err on failure. */
cs_store *cs_analysis_open_trace(const cs_source *src, int mode, char *err, size_t errlen);

/* Make sure the trace source src has a current stored analysis (analysing it
 * when not, or always when force) and return it open for reading. A trace
 * that cannot be written is analysed in a private copy (one note line on
 * log says so), unless save: then that is the failure. A trace with
 * damaged pages is never written: what can be read of it is copied into
 * STEM.recovered.db beside it (cs_store_recover; a private file when the
 * folder cannot be written), one note on log names the damaged file and
 * says what was kept and lost, and that copy is analysed and returned
 * (cs_store_recovered says so). log (may be NULL)
 * also gets the pass times when COLLSCOPE_AN_TIMES is set. Returns NULL
 * with one message in err on failure. */
cs_store *cs_analysis_open(const cs_source *src, int force, int save, FILE *log, char *err, size_t errlen);

/* The same for a reader that only reads a current stored analysis (the
 * report), faster: when src is a trace whose stored analysis is current,
 * the check of the pages it reads runs in a thread beside the caller's
 * reads, and *chk is set; the caller must end it with
 * cs_analysis_check_wait before it shows anything. The pages of the
 * spans and of the analysis tables the report does not read (waits, p2p,
 * instances) are not checked: the analysis was made of the trace after a
 * check of every page (cs_analysis_open), and a damaged page the reader
 * reads among them fails its read. Otherwise (a job, no current
 * analysis, no thread) exactly cs_analysis_open, *chk NULL. */
typedef struct cs_analysis_check cs_analysis_check;
cs_store *cs_analysis_open_checked_later(const cs_source *src, FILE *log, cs_analysis_check **chk, char *err,
                                         size_t errlen);
/* Wait for chk's page check (chk NULL: nothing to wait for, 0); read_ok
 * says whether the caller's reads of *st all succeeded. 0: the pages
 * checked are intact and the reads succeeded, what was read of *st
 * stands. 1: not (damaged pages, a read that failed, or a resource ran
 * out during the check): *st was closed and is now what cs_analysis_open
 * gives for src (every page checked; the recovered copy, with its note on
 * log; NULL with err), and the caller reads it again. */
int cs_analysis_check_wait(cs_analysis_check *chk, int read_ok, cs_store **st, const cs_source *src, FILE *log,
                           char *err, size_t errlen);

/* What `collscope analyze [--force] TRACE` does, in process: analyse the
 * trace source src unless its stored analysis is current (always when force)
 * and store the results in it. The analysis notes (what is missing from
 * the trace, one a line) go to log (may be NULL) after "collscope: ".
 * Returns 0; 1 when the trace was damaged and what could be read of it
 * was analysed instead (the note on log says where); -1 with one message
 * in err (a trace that cannot be read or written, out of memory). */
int cs_analysis_run(const cs_source *src, int force, FILE *log, char *err, size_t errlen);
/* Bound the store pages this process keeps mapped (cs_store_map_bound,
 * COLLSCOPE_MAPPED_MB) for the connections it opens from now on; a bad
 * value is said on log (when not NULL) and the default kept. */
void cs_analysis_map_bound(FILE *log);

/* Analyse a store open for writing and store the results in it (the
 * passes in order; an_run.c). Returns 0, or -1 with a reason in err. */
int cs_an_run(cs_store *st, FILE *log, char *err, size_t errlen);

#endif
