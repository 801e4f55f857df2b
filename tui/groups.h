/* groups.h: ranks that behave alike, for drawing thousands of ranks as a
 * few lanes: from one or more figures per rank (the analysis's imposed
 * wait and median lateness, else the share of time in calls), the ranks
 * that stand out get a group of their own and the others are grouped by
 * where their figures fall. No curses, no store: numbers in, groups out. */
#ifndef CS_TUI_GROUPS_H
#define CS_TUI_GROUPS_H

/* A rank stands out when a figure lies beyond the bulk's 10-90 % range by
 * more than TUI_GROUPS_FAR times that range (or the figure's floor); the
 * bulk splits where two neighbouring values (sorted) lie more than
 * TUI_GROUPS_GAP times that range apart. */
#define TUI_GROUPS_FAR 3.0
#define TUI_GROUPS_GAP 0.5

/* Group n items (ranks) by nf figures: fig[f * n + i] is figure f of item
 * i, floor[f] the smallest spread of figure f that counts (what is closer
 * is alike). At most budget groups (budget >= 2): items that stand out
 * come first (each alone, the farthest first, at most budget / 2 of them),
 * then the bulk, split at its gaps while the groups fit. Writes grp[i],
 * the group of item i, numbered in order of each group's first item, and
 * alone[g] (1: a group made of one item that stands out) and rep[g], the
 * item that represents group g: its median by figure 0. Returns the
 * number of groups, -1 when out of memory. */
int tui_groups_make(const double *fig, const double *floor, int nf, int n, int budget, int *grp, int *rep,
                    unsigned char *alone);

#endif
