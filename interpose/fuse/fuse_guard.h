/* fuse_guard.h: apply mode's on-line guard, the part that decides (no MPI
 * or NCCL here: mpi_fuse.c and nccl_fuse.c measure and agree, this
 * chooses; fuse.h writes the records).
 *
 * Apply mode never trusts a bucket size it has not seen win. The calls a
 * communicator may fuse are cut into windows (at least CS_GUARD_WINDOW of
 * them, ending at a call where the program may wait, so a window holds
 * whole steps of a program that repeats). Each window runs one setting:
 * unfused, or fused with one of a few buffer sizes around the user's. The
 * figure of a window is the time its ranks spent in the library's calls
 * per fusable call (MPI calls; for NCCL, NCCL and CUDA runtime calls;
 * every rank adds its own; the sums are exact integers, so every rank
 * holds the same figures and takes the same decisions).
 *
 * Settings are compared only on figures taken side by side, as ratios
 * (fused / unfused), so a machine that gets busier or quieter moves both;
 * a pair's ratio is the larger of the ratio of the time in MPI calls and
 * that of the wall time per call (a fusion must win on both: on ranks
 * that share cores, less time in MPI calls can still be a longer step):
 *   trial:   after a warm-up window, CS_GUARD_ROUNDS rounds, each running
 *            every setting once (in a rotated order); each round gives
 *            each fused setting its ratio to that round's unfused window;
 *   choice:  the fused setting whose median ratio is lowest, if it is
 *            below 1 - CS_GUARD_MARGIN; else unfused;
 *   watch:   a check is a small trial: CS_GUARD_ROUNDS pairs of windows,
 *            the chosen setting then the challenger (unfused while a
 *            fused setting is chosen, else the best fused one), each pair
 *            a ratio taken side by side. A fused choice is dropped when
 *            the median of a check's ratios reaches 1 (it no longer
 *            wins). An unfused choice gives way only on more evidence: a
 *            check whose median falls below 1 - CS_GUARD_MARGIN runs as
 *            many pairs again, and all pairs but one must show the win
 *            (a sign test). Checks come every
 *            CS_GUARD_CHECK_EVERY windows while the call is close; when a
 *            check (or the trial) was decisive (a ratio beyond 30 %) the
 *            gap grows 4 times, up to CS_GUARD_CHECK_MAX, so a clearly
 *            losing challenger costs less and less.
 *
 * A window's figure is known CS_GUARD_LAG windows after it ends (its vote,
 * a nonblocking allreduce, completes meanwhile), so the setting of window w
 * depends only on figures of windows <= w - 1 - CS_GUARD_LAG. */
#ifndef CS_FUSE_GUARD_H
#define CS_FUSE_GUARD_H

#include <stddef.h>
#include <stdint.h>

#define CS_GUARD_MAXCFG 4       /* unfused + up to 3 buffer sizes */
#define CS_GUARD_ROUNDS 3       /* trial rounds */
#define CS_GUARD_KEEP 3         /* figures and ratios kept per setting (median of) */
#define CS_GUARD_LAG 2          /* windows between a window's end and its figure */
#define CS_GUARD_CHECK_EVERY 32 /* windows between checks of a close call */
#define CS_GUARD_CHECK_MAX 256  /* ... the gap between checks grows up to this */
#define CS_GUARD_MARGIN 0.03    /* a fused setting must win by this share */
#define CS_GUARD_WINDOW 64      /* fusable calls at least in a window */

/* Why the choice is what it is (decision records, docs/fusion.md). */
enum cs_guard_why {
    CS_GUARD_WHY_TRIAL = 1, /* trial done: the best fused setting wins */
    CS_GUARD_WHY_LOSES,     /* trial done: no fused setting beats unfused */
    CS_GUARD_WHY_CHECK,     /* a challenger's figure changed the choice */
};

typedef struct cs_guard {
    int ncfg;                                   /* settings; 0 is unfused */
    size_t buf[CS_GUARD_MAXCFG];                /* fusion buffer of each (0: unfused) */
    uint32_t next;                              /* index of the window next() plans */
    uint32_t seen;                              /* figures consumed (windows 0..seen-1) */
    uint8_t cfg_ring[CS_GUARD_LAG + 4];         /* setting of recent windows */
    double fig[CS_GUARD_MAXCFG][CS_GUARD_KEEP]; /* ns per call, newest last */
    int nfig[CS_GUARD_MAXCFG];
    double ratio[CS_GUARD_MAXCFG][CS_GUARD_KEEP]; /* fused / unfused, newest last */
    int nratio[CS_GUARD_MAXCFG];
    double round[CS_GUARD_MAXCFG];       /* this trial round's figures (0: none) */
    double wround[CS_GUARD_MAXCFG];      /* ... and its wall times per call */
    int chosen;                          /* -1 until the trial is done */
    uint32_t next_check, check_gap;      /* the next check, the gap to the one after */
    uint8_t role_ring[CS_GUARD_LAG + 4]; /* 0, or a check's chosen (1) / challenger (2) window */
    int check_cfg, check_pos;            /* the check being planned: challenger, windows planned */
    double chk[2][2 * CS_GUARD_ROUNDS];  /* its figures: chosen, challenger */
    double wchk[2][2 * CS_GUARD_ROUNDS]; /* ... and their wall times per call */
    int nchk[2], check_ext;              /* ... its pairs doubled (the first contradicted) */
} cs_guard;

/* A decision, for the trace: what was chosen and on which figures. */
typedef struct cs_guard_decision {
    uint32_t window;              /* the first window it can apply to */
    int why;                      /* cs_guard_why */
    int chosen;                   /* setting */
    size_t buffer;                /* its buffer (0: unfused) */
    double unfused_ns, chosen_ns; /* median ns per call of both */
    double ratio;                 /* the median ratio it rests on (best fused / unfused) */
} cs_guard_decision;

/* Settings around the user's buffer: unfused; buffer/64 and buffer/8
 * where they still hold four calls of min_call bytes; buffer; buffer*8
 * (at most cap) while fewer than CS_GUARD_MAXCFG settings. */
void cs_guard_init(cs_guard *g, size_t buffer, size_t min_call, size_t cap);

/* The setting of the next window (and advance to it). */
int cs_guard_next(cs_guard *g);

/* The setting window w ran (w within the last CS_GUARD_LAG + 4 planned). */
int cs_guard_cfg_of(const cs_guard *g, uint32_t w);

/* The figure of the oldest window without one: the ranks' summed time
 * in MPI calls, fusable calls (calls_sum <= 0: no figure) and wall time
 * (0: unknown). Returns 1 and fills *d when the
 * choice was made or changed, 0 otherwise. */
int cs_guard_figure(cs_guard *g, int64_t ns_sum, int64_t calls_sum, int64_t wall_sum, cs_guard_decision *d);

#endif
