/* live.h: a running job watched from its growing logs (live.c): per rank
 * its steps, step time and trend, time in communication, the call it is
 * in, a straggler score; change-point alarms per rank, pipeline stage,
 * communicator and point-to-point link, and hangs; the view as text
 * and as Prometheus metrics (docs/live.md). Only reads DIR/logs: nothing
 * it does can hold up a rank. */
#ifndef CS_LIVE_H
#define CS_LIVE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct cs_live cs_live;

typedef struct cs_live_opts {
    double hang_s;        /* every rank in a call this long: a hang (default 10) */
    int base_steps;       /* steps of a rank's baseline (default 16) */
    double cusum_k;       /* the CUSUM's allowance, in baseline deviations (0.5) */
    double cusum_h;       /* its decision threshold, in baseline deviations (20) */
    double poll_budget_s; /* a refresh reads for at most this long (0.5) */
    int comm_alarms;      /* communicators' slow alarms: 1 on, 0 off, -1 (default) on unless this
                           * host runs more followed ranks than it has processors (their calls' time
                           * then measures the scheduler: docs/live.md); COLLSCOPE_COMM_ALARMS=
                           * on|off|auto sets it (cs_live_opts_env) */
    int link_alarms;      /* links' slow alarms, as comm_alarms; COLLSCOPE_LINK_ALARMS */
} cs_live_opts;

/* The defaults above. */
void cs_live_opts_default(cs_live_opts *o);
/* What the environment sets (COLLSCOPE_COMM_ALARMS, COLLSCOPE_LINK_ALARMS)
 * into o: 0, or -1 with a message naming the variable and its value. */
int cs_live_opts_env(cs_live_opts *o, char *err, size_t errlen);

enum cs_live_alarm_kind { CS_LIVE_SLOW = 1, CS_LIVE_HANG = 2 };

typedef struct cs_live_alarm {
    int kind;            /* enum cs_live_alarm_kind */
    char subject[8];     /* what it is about: "rank", "stage", "comm", "link" or "job" (a hang) */
    char name[96];       /* the subject as the report names it: "rank 2", "stage 1 (stage1: ranks 2-3)",
                          * "communicator half1", "link 1-3", "link 1-3 on pp0" */
    int rank;            /* a rank's alarm: the rank; a link's: its lower rank; else -1 */
    int peer;            /* a link's alarm: its higher rank; else -1 */
    uint64_t comm;       /* a communicator's, a stage's or a link's alarm: the job-wide id of the
                          * communicator (the stage's, the one the messages went over); else 0 */
    char comm_label[64]; /* its label, as in the metrics */
    int64_t step;        /* the step where the shift began (slow), -1 */
    int64_t raised;      /* the step at which it was raised */
    double factor;       /* the rank's (the stage's least member's) own time per step, the
                          * communicator's time in calls or the link's transfers per step,
                          * after / before */
    int active;          /* still so at the latest poll */
    int64_t until;       /* the step where it ended, -1 while active */
    char text[1024];     /* one line, as the view shows it */
} cs_live_alarm;

/* Follow the job whose output folder is dir (its logs in dir/logs, which
 * may not exist yet). NULL with a reason in err when out of memory. */
cs_live *cs_live_new(const char *dir, const cs_live_opts *opt, char *err, size_t errlen);
void cs_live_free(cs_live *);

/* Read what the ranks wrote since the last poll (for at most the poll
 * budget; the rest at the next poll) and update the figures.
 * 0, or -1 with a reason in err when dir cannot be read; a log that cannot
 * be read is left out with a note (once). */
int cs_live_poll(cs_live *, char *err, size_t errlen);

/* Processes whose logs are followed, and how many of them closed theirs. */
size_t cs_live_nproc(const cs_live *);
size_t cs_live_nclosed(const cs_live *);
/* Processes of this host that no longer run though their logs are not
 * closed (killed, crashed). */
size_t cs_live_ngone(const cs_live *);
/* The alarms raised so far, oldest first. */
size_t cs_live_alarms(const cs_live *, const cs_live_alarm **out);
/* 1 when the latest poll ran out of its budget before the logs' end. */
int cs_live_behind(const cs_live *);
/* Bytes of the logs read by all polls so far. */
uint64_t cs_live_bytes_read(const cs_live *);

/* Sort orders of the view's rank table. */
enum cs_live_sort { CS_LIVE_BY_RANK, CS_LIVE_BY_STRAGGLER, CS_LIVE_BY_STEP, CS_LIVE_BY_COMM, CS_LIVE_NSORT };
extern const char *const cs_live_sort_name[CS_LIVE_NSORT];
/* Their keys for --sort ("step" for "step time"). */
extern const char *const cs_live_sort_key[CS_LIVE_NSORT];
/* The order whose key is key, or -1. */
int cs_live_sort_find(const char *key);
/* The keys into buf: "a, b or c", or with bar "a|b|c"; returns buf. */
const char *cs_live_sort_keys(char *buf, size_t len, int bar);
/* cs_live_sort_keys with bar: an option table's values_of. */
const char *cs_live_sort_values(char *buf, size_t len);

/* The view as lines of at most cols columns, at most rows lines (0: no
 * limit): the job's lines, the ranks' table, the alarms. */
void cs_live_frame(const cs_live *, FILE *f, int cols, int rows, int sort);

/* The figures in the Prometheus text exposition format (version 0.0.4). */
void cs_live_metrics(const cs_live *, FILE *f);

#endif
