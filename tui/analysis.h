/* analysis.h: the analysis as the terminal browser uses it: stepping
 * through the worst collective instances and the straggler steps of the
 * stored analysis, and running the analysis of the open trace. No curses. */
#ifndef CS_TUI_ANALYSIS_H
#define CS_TUI_ANALYSIS_H

#include <stddef.h>

#include "tui/model.h"

/* Where the user is in the analysis results; read on first use. A zeroed
 * tui_analysis is empty. */
typedef struct tui_analysis {
    cs_instance *aWorst; /* by arrival skew, under the op and comm filters */
    int nWorst, iWorst, worst_loaded;
    size_t capWorst;
    cs_step_row *aStep; /* steps with a late rank */
    int nStep, iStep, steps_loaded;
    size_t capStep;
} tui_analysis;

/* Move to the next (dir 1) or previous (dir -1) worst instance: centre the
 * view on it, select its last arrival, say which on the status line.
 * 0, or -1 when there is none (the status line says why). */
int tui_analysis_next_worst(tui_analysis *a, tui_model *m, int dir);
/* The same for straggler steps: the step in view, its slowest rank's lane. */
int tui_analysis_next_step(tui_analysis *a, tui_model *m, int dir);
/* The filters changed: the worst instances are read again on next use. */
void tui_analysis_forget_worst(tui_analysis *a);
/* Free everything; a is empty again. */
void tui_analysis_free(tui_analysis *a);

/* Run the analysis of m's trace (what `collscope analyze DIR` does), storing
 * its results in the trace; its messages go to stderr, so the caller leaves
 * the screen first. The model is not changed: tui_model_reopen shows the
 * results. 0, or -1 with one line in err. */
int tui_analyze(tui_model *m, char *err, size_t errlen);

#endif
