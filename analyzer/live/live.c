/* live.c: a running job watched from its growing logs (live.h).
 *
 * Each process's log is followed (libtrace/log_follow.h): each poll hands
 * over only the records written since the last one. A rank's steps are
 * the intervals between its MPI_Pcontrol markers, or where it has none,
 * between the calls of one collective chosen after a warm-up (the step
 * proxy, lv_proxy_choose). Per step the rank's own time is the
 * step's time less its time inside traced calls: a rank that turns slow
 * has more of it, while the ranks that wait for it wait in their calls.
 * An upper CUSUM per rank on its own time per step, against the median
 * and MAD of a baseline of its first steps, raises the alarms
 * (docs/live.md gives the threshold's false-alarm rate). The same CUSUM
 * (lv_cusum_unit) watches each communicator's collective calls: matched
 * across its members by number, their time from the last member's start
 * to the last one's end, per step (lv_match); each pipeline stage's
 * least member's own time (lv_stages finds the stages); and each link's
 * point-to-point transfers, matched by number each way (lv_link_match). */
#include "config.h"
#include "analyzer/live/live.h"
#include "analyzer/status/status.h"
#include "common/fmt.h"
#include "common/map.h"
#include "common/msg.h"
#include "common/stats.h"
#include "common/vec.h"
#include "libtrace/log_follow.h"
#include "libtrace/ops.gen.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LV_RING 256             /* steps kept per rank */
#define LV_PROXY_BLOCK 12       /* proxy steps a unit of the CUSUM (divisible by 1, 2, 3, 4, 6) */
#define LV_BATCH 256            /* records read from each log in turn, so the ranks' steps keep in line */
#define LV_WARMUP 2             /* first steps left out of the baseline */
#define LV_MIN_SHIFT 0.25       /* the smallest shift that matters: 25 % more own time */
#define LV_SIGMA_FLOOR 0.05     /* the deviation is at least this share of the median */
#define LV_STRAGGLER_MADS 5.0   /* as the analysis's recurring-straggler rule */
#define LV_COMM_WATCH 16        /* communicators watched per rank (the first it calls on) */
#define LV_COMM_STEP_SHARE 0.05 /* a communicator's deviation is at least this share of the step */
#define LV_CALLS 256            /* a rank's collective calls kept until its communicator's members made them too */
#define LV_P2P 256              /* a rank's messages to (from) one peer kept until the peer's side is read */
#define LV_AHEAD 16             /* steps a rank is read ahead of the others at most (cs_live_poll) */
#define LV_PEERS 8              /* point-to-point peers (communicator and rank) watched per rank */
#define LV_LINKS 1024           /* links watched in a job */
#define LV_PENDING 64           /* a rank's nonblocking receives awaiting their completion */
#define LV_PROXY_WARM 32        /* collective calls read before the step proxy is chosen */
#define LV_HOLD_MAX 1024        /* records held until then, at most (64 KiB a rank) */
#define LV_WORLD_OF (1u << 22)  /* communicators' members' ranks kept, in all (16 MiB) */
#define LV_PROXY_RARE 6         /* the proxy's call is made at least 1/6 as often as its communicator's most frequent */

const char *const cs_live_sort_name[CS_LIVE_NSORT] = { "rank", "straggler", "step time", "comm" };
const char *const cs_live_sort_key[CS_LIVE_NSORT] = { "rank", "straggler", "step", "comm" };

int cs_live_sort_find(const char *key)
{
    for (int i = 0; i < CS_LIVE_NSORT; i++)
        if (strcmp(key, cs_live_sort_key[i]) == 0)
            return i;
    return -1;
}

static const char *lv_sort_key_at(size_t i, const void *arg)
{
    (void)arg;
    return cs_live_sort_key[i];
}

const char *cs_live_sort_keys(char *buf, size_t len, int bar)
{
    return cs_fmt_names(buf, len, CS_LIVE_NSORT, lv_sort_key_at, NULL, bar);
}

const char *cs_live_sort_values(char *buf, size_t len)
{
    return cs_live_sort_keys(buf, len, 1);
}

typedef struct lv_count {
    uint64_t comm; /* job-wide id, 0 = none */
    uint16_t op;
    uint64_t n, bytes;
    int64_t ns;
} lv_count;

/* A change-point detector on one value per unit (lv_cusum_unit): a
 * rank's own time, a communicator's time in calls. */
typedef struct lv_cusum {
    int64_t ring_val[LV_RING], ring_step[LV_RING], ring_d[LV_RING]; /* by unit */
    int64_t *aBase;                                                 /* the baseline units: (d, value, time) */
    size_t nBase, capBase;
    double mu, mu_d, sigma, mu_step; /* the baseline: median value and d, d's deviation, median unit time */
    int ready;
    double S;      /* the sum */
    int64_t cand;  /* the unit after its last zero */
    int alarm;     /* index + 1 of its alarm */
    int64_t nunit; /* units taken, */
    int unit;      /* of this many steps each */
} lv_cusum;

/* A collective call: its start and end (real ns) and the step it was
 * made in. */
typedef struct lv_call {
    int64_t t0, t1, step;
} lv_call;

/* A rank's collective calls on one communicator, the latest LV_CALLS by
 * their number (collectives on a communicator are made in the same order
 * by every member: call k of each member is the same collective). */
typedef struct lv_rcomm {
    uint64_t id;            /* the communicator's job-wide id */
    size_t ci;              /* its index in the job's aComm */
    uint64_t ncall;         /* collective calls so far */
    lv_call ring[LV_CALLS]; /* call k at k % LV_CALLS */
} lv_rcomm;

/* A rank's point-to-point messages with one peer on one communicator,
 * the latest LV_P2P each way by their number: messages from one rank to
 * another are received in the order sent (MPI's non-overtaking rule),
 * so send k of one side and receive k of the other are one message. */
typedef struct lv_rp {
    uint64_t comm;  /* the communicator's job-wide id */
    int lpeer;      /* the peer's rank in it */
    size_t li;      /* index + 1 of its link in the job's aLink, 0 = none yet */
    uint64_t tried; /* the job's gen when its link was last looked for */
    uint64_t nsend, nrecv;
    lv_call send[LV_P2P]; /* t0: its start */
    lv_call recv[LV_P2P]; /* t0: the later of its start and its completion call's; t1: its end, 0 while
                           * pending, -1 lost */
} lv_rp;

/* A nonblocking receive awaiting its completion (REQDONE). */
typedef struct lv_pend {
    uint32_t req;
    uint32_t rp; /* its slot in aRp */
    uint64_t k;  /* its number there */
} lv_pend;

typedef struct lv_rank lv_rank;
struct lv_rank {
    cs_logf *f;
    char path[1100];
    int rank, pid, closed, bad;
    int gone; /* a process of this host that no longer runs, its log not closed */
    char host[64];
    cs_log_clock clock;
    int64_t toff;
    uint64_t *aLocal; /* local communicator index -> job-wide id */
    size_t nLocal, capLocal;
    lv_count *aCnt;
    size_t nCnt, capCnt;
    int64_t first, last; /* real ns of the first call's start, the latest time seen */
    int64_t comm_ns;     /* inside traced calls (markers left out) */
    /* steps */
    int markers;       /* 1 once a step marker was seen */
    uint64_t key_comm; /* the step proxy: its communicator and op */
    int key_op;
    int64_t nstep;                                 /* steps completed */
    int64_t step_t0;                               /* the current step's start, 0 = none yet */
    int64_t step_comm;                             /* its time inside calls so far */
    int64_t ring_step[LV_RING], ring_own[LV_RING]; /* by step */
    lv_cusum cs;                                   /* on its excess own time, by unit (lv_detect) */
    lv_rcomm *aRc;                                 /* its time in each communicator's calls */
    size_t nRc, capRc;
    /* the call it is in */
    int fly_op, fly_tid;
    int64_t fly_t0;
    lv_rp *aRp; /* its point-to-point peers */
    size_t nRp, capRp;
    lv_pend *aPend; /* its nonblocking receives not yet completed */
    size_t nPend, capPend;
    size_t stage; /* index + 1 of its pipeline stage in aStage, 0 = none */
    double u_own; /* its own time in the unit lv_detect takes (-1: not complete) */
    int drained;  /* this poll read its log to its end */
    /* this poll's spans (and completions), to be taken in order of start */
    cs_rec *aNew;
    size_t nNew, capNew;
    /* until the step proxy is chosen (lv_take_spans), what was read */
    int decided;
    cs_rec *aHold;
    size_t nHold, capHold;
    /* the view's figures */
    double own_recent, score; /* recent own time per step; its straggler score */
};

typedef struct lv_member {
    struct lv_rank *r;
    size_t j; /* its slot (aRc) of the communicator */
} lv_member;

typedef struct lv_comm {
    uint64_t id;
    int size;
    char name[64];
    int32_t *world_of; /* its members' ranks in the job by their rank in it (-1: not yet known) */
    /* its calls' time (lv_match) */
    lv_member *aMem; /* the followed ranks that made a collective call on it */
    size_t nMem, capMem;
    uint64_t kdone;           /* its calls matched across its members */
    int64_t step_hi;          /* the latest step in ring_in (-1: none) */
    int64_t ring_in[LV_RING]; /* by step: its calls' time from the last member's start to the last one's end */
    lv_cusum cs;              /* on that time, by unit (lv_cusum_comm) */
} lv_comm;

/* A link: two ranks exchanging point-to-point messages on a communicator
 * (lv_link_match). */
typedef struct lv_link {
    uint64_t comm;
    lv_rank *ra, *rb;         /* the lower rank and the higher */
    size_t ja, jb;            /* their slots (aRp) */
    uint64_t kab, kba;        /* messages matched each way */
    int64_t step_hi;          /* the latest step in ring_in (-1: none) */
    int64_t ring_in[LV_RING]; /* by step: its transfers' time once both ends were in */
    lv_cusum cs;
} lv_link;

/* A pipeline stage: the members of one communicator of the partition
 * lv_stages found. */
typedef struct lv_stage {
    size_t ci; /* its communicator in aComm */
    lv_rank **aMem;
    size_t nMem;
    lv_cusum cs; /* on its least member's own time against the other stages' */
} lv_stage;

struct cs_live {
    char dir[1024];
    cs_live_opts opt;
    lv_rank **aRank;
    size_t nRank, capRank;
    cs_map byName; /* hash of a log's name -> index + 1 */
    lv_comm *aComm;
    size_t nComm, capComm;
    cs_live_alarm *aAlarm;
    size_t nAlarm, capAlarm;
    lv_link *aLink;
    size_t nLink, capLink;
    lv_stage *aStage; /* found once (lv_stages) */
    size_t nStage;
    uint64_t gen;       /* counts what links and stages are found from: communicators' members, peers */
    size_t nWorldOf;    /* communicators' members' ranks kept (world_of), in all */
    uint64_t stage_gen; /* gen when stages were last looked for */
    int hang_on;        /* a hang alarm is active */
    int64_t now;        /* real ns of the latest poll */
    int64_t t_first;    /* the job's steps: first and latest poll with steps, and their count */
    int64_t steps_first, steps_now, t_steps_first;
    int64_t u_next; /* the next unit to take into the CUSUMs (lv_detect) */
    double rate;
    size_t nclosed, ngone;
    int behind; /* the latest refresh ran out of its budget before the logs' end */
    int world;
    char host[64]; /* this host's name: its processes can be asked whether they run */
};

void cs_live_opts_default(cs_live_opts *o)
{
    o->hang_s = 10;
    o->base_steps = 16;
    o->cusum_k = 0.5;
    o->cusum_h = 20;
    o->poll_budget_s = 0.5;
    o->comm_alarms = -1;
    o->link_alarms = -1;
}

/* The environment variable var (auto|on|off) into *v: -1, 1, 0. */
static int lv_env_switch(const char *var, int *v, char *err, size_t errlen)
{
    const char *ca = getenv(var);
    if (!ca || !*ca || strcmp(ca, "auto") == 0)
        *v = -1;
    else if (strcmp(ca, "on") == 0)
        *v = 1;
    else if (strcmp(ca, "off") == 0)
        *v = 0;
    else {
        snprintf(err, errlen, "%s=%s: want auto, on or off", var, ca);
        return -1;
    }
    return 0;
}

int cs_live_opts_env(cs_live_opts *o, char *err, size_t errlen)
{
    if (lv_env_switch("COLLSCOPE_COMM_ALARMS", &o->comm_alarms, err, errlen) != 0 ||
        lv_env_switch("COLLSCOPE_LINK_ALARMS", &o->link_alarms, err, errlen) != 0)
        return -1;
    return 0;
}

/* Are communicators' (links') slow alarms raised, as set (opt: 1, 0)?
 * Auto (-1): not while this host runs more of the followed ranks than it
 * has processors online. */
static int lv_calls_alarms(const cs_live *l, int opt)
{
    if (opt >= 0)
        return opt;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t here = 0;
    for (size_t i = 0; i < l->nRank; i++)
        here += strcmp(l->aRank[i]->host, l->host) == 0;
    return cpus <= 0 || here <= (size_t)cpus;
}

cs_live *cs_live_new(const char *dir, const cs_live_opts *opt, char *err, size_t errlen)
{
    cs_live *l = calloc(1, sizeof *l);
    if (!l) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(l->dir, sizeof l->dir, "%s", dir);
    if (opt)
        l->opt = *opt;
    else
        cs_live_opts_default(&l->opt);
    if (l->opt.base_steps < 4)
        l->opt.base_steps = 4;
    if (l->opt.poll_budget_s <= 0)
        l->opt.poll_budget_s = 0.5;
    gethostname(l->host, sizeof l->host - 1);
    return l;
}

void cs_live_free(cs_live *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->nRank; i++) {
        lv_rank *r = l->aRank[i];
        cs_logf_close(r->f);
        free(r->aLocal);
        free(r->aCnt);
        free(r->cs.aBase);
        free(r->aRc);
        free(r->aRp);
        free(r->aPend);
        free(r->aNew);
        free(r->aHold);
        free(r);
    }
    free(l->aRank);
    cs_map_free(&l->byName);
    for (size_t i = 0; i < l->nComm; i++) {
        free(l->aComm[i].cs.aBase);
        free(l->aComm[i].aMem);
        free(l->aComm[i].world_of);
    }
    free(l->aComm);
    for (size_t i = 0; i < l->nLink; i++)
        free(l->aLink[i].cs.aBase);
    free(l->aLink);
    for (size_t i = 0; i < l->nStage; i++) {
        free(l->aStage[i].cs.aBase);
        free(l->aStage[i].aMem);
    }
    free(l->aStage);
    free(l->aAlarm);
    free(l);
}

size_t cs_live_nproc(const cs_live *l)
{
    return l->nRank;
}
size_t cs_live_nclosed(const cs_live *l)
{
    return l->nclosed;
}
size_t cs_live_ngone(const cs_live *l)
{
    return l->ngone;
}
size_t cs_live_alarms(const cs_live *l, const cs_live_alarm **out)
{
    *out = l->aAlarm;
    return l->nAlarm;
}
int cs_live_behind(const cs_live *l)
{
    return l->behind;
}

uint64_t cs_live_bytes_read(const cs_live *l)
{
    uint64_t b = 0;
    for (size_t i = 0; i < l->nRank; i++)
        if (l->aRank[i]->f)
            b += cs_logf_bytes_read(l->aRank[i]->f);
    return b;
}

static int64_t lv_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static lv_comm *lv_comm_get(cs_live *l, uint64_t id)
{
    for (size_t i = 0; i < l->nComm; i++)
        if (l->aComm[i].id == id)
            return &l->aComm[i];
    if (CS_VEC_RESERVE(l->aComm, l->capComm, l->nComm + 1) != 0)
        return NULL;
    lv_comm *c = &l->aComm[l->nComm++];
    memset(c, 0, sizeof *c);
    c->id = id;
    c->step_hi = -1;
    return c;
}

/* The communicator's label: its name when set, "world" when it spans the
 * job, else its id. */
static const char *lv_comm_label(const cs_live *l, uint64_t id, char *buf, size_t len)
{
    if (!id)
        return "";
    for (size_t i = 0; i < l->nComm; i++)
        if (l->aComm[i].id == id) {
            if (l->aComm[i].name[0])
                return l->aComm[i].name;
            if (l->world > 0 && l->aComm[i].size == l->world)
                return "world";
        }
    snprintf(buf, len, "comm-%llx", (unsigned long long)id);
    return buf;
}

/* The label of communicator aComm[i] for a series or alarm of its own:
 * lv_comm_label, with its id added when another communicator has the
 * same label (two groups of one name, a duplicate of the world). */
static const char *lv_comm_label1(const cs_live *l, size_t i, char *buf, size_t len)
{
    char ob[64];
    const char *own = lv_comm_label(l, l->aComm[i].id, buf, len);
    for (size_t j = 0; j < l->nComm; j++)
        if (j != i && l->aComm[j].cs.nunit && strcmp(lv_comm_label(l, l->aComm[j].id, ob, sizeof ob), own) == 0) {
            char tmp[64];
            snprintf(tmp, sizeof tmp, "%.40s-%llx", own, (unsigned long long)l->aComm[i].id);
            snprintf(buf, len, "%s", tmp);
            return buf;
        }
    return own;
}

static const char *lv_op_name(int op)
{
    return op > 0 && op < CS_OP_COUNT ? cs_ops[op].name : "?";
}

static int lv_is_coll(int op)
{
    return op > 0 && op < CS_OP_COUNT && (cs_ops[op].kind == CS_KIND_COLL || cs_ops[op].kind == CS_KIND_ROOTED);
}

/* ---- the alarms ---- */

static cs_live_alarm *lv_alarm_add(cs_live *l)
{
    if (CS_VEC_RESERVE(l->aAlarm, l->capAlarm, l->nAlarm + 1) != 0)
        return NULL;
    cs_live_alarm *a = &l->aAlarm[l->nAlarm++];
    memset(a, 0, sizeof *a);
    return a;
}

/* A call longer than this is a damaged record's (a week). */
#define LV_SPAN_MAX_NS (INT64_C(7) * 24 * 3600 * 1000000000)

static double lv_median_dbl(const int64_t *v, size_t n)
{
    double b[LV_RING];
    if (n > LV_RING)
        n = LV_RING;
    for (size_t i = 0; i < n; i++)
        b[i] = (double)v[i];
    return cs_stats_median_dbl(b, n);
}

/* The rank's own times of the steps [from, nstep) still in its ring. */
static size_t lv_ring_since(const lv_rank *r, int64_t from, int64_t *own, int64_t *step)
{
    size_t n = 0;
    int64_t s0 = from < r->nstep - LV_RING ? r->nstep - LV_RING : from;
    for (int64_t s = s0 < 0 ? 0 : s0; s < r->nstep; s++) {
        own[n] = r->ring_own[s % LV_RING];
        step[n++] = r->ring_step[s % LV_RING];
    }
    return n;
}

/* Step s of rank r took step_ns, own_ns of it outside calls. */
static void lv_step_done(lv_rank *r, int64_t s, int64_t step_ns, int64_t own_ns)
{
    r->ring_step[s % LV_RING] = step_ns;
    r->ring_own[s % LV_RING] = own_ns;
}

/* One CUSUM's unit u (a step, or with the step proxy a block of B proxy
 * steps): the watched value of the unit (a rank's own time; a
 * communicator's time in calls, docs/live.md), the unit's time, and d,
 * what the sum is taken on (the rank's excess over the ranks' median; the
 * communicator's value itself). The first units make the baseline (begun
 * again while its median value is 0: nothing measured yet), then the
 * upper CUSUM on d. The deviation is at least floor (per unit) and
 * step_share of the baseline's unit time; a shift must be at least
 * step_share of the unit's time since it began. Returns 1 when a shift is
 * confirmed and no alarm was raised yet: *val and *step are then the
 * medians of the value and of the unit time since the shift began (at
 * unit c->cand); the caller raises the alarm and sets c->alarm. */
/* Unit u's figures kept in c's ring (the medians since a change read
 * them), whether or not the unit goes into the sum. */
static void lv_cusum_keep(lv_cusum *c, int64_t u, int B, double val, double step, double d)
{
    c->nunit = u + 1;
    c->unit = B;
    c->ring_d[u % LV_RING] = (int64_t)d;
    c->ring_val[u % LV_RING] = (int64_t)val;
    c->ring_step[u % LV_RING] = (int64_t)step;
}

static int lv_cusum_unit(const cs_live *l, lv_cusum *c, int64_t u, int B, double val, double step, double d,
                         double floor, double step_share, double *mval, double *mstep)
{
    lv_cusum_keep(c, u, B, val, step, d);
    if (!c->ready) {
        if (CS_VEC_RESERVE(c->aBase, c->capBase, c->nBase + 3) != 0)
            return 0;
        c->aBase[c->nBase++] = (int64_t)d;
        c->aBase[c->nBase++] = (int64_t)val;
        c->aBase[c->nBase++] = (int64_t)step;
        if (c->nBase < 3 * (size_t)l->opt.base_steps)
            return 0;
        size_t n = c->nBase / 3;
        double *v = malloc(n * sizeof *v);
        if (!v)
            return 0;
        for (size_t i = 0; i < n; i++)
            v[i] = (double)c->aBase[3 * i + 2];
        c->mu_step = cs_stats_median_dbl(v, n);
        for (size_t i = 0; i < n; i++)
            v[i] = (double)c->aBase[3 * i + 1];
        c->mu = cs_stats_median_dbl(v, n);
        for (size_t i = 0; i < n; i++)
            v[i] = (double)c->aBase[3 * i];
        c->mu_d = cs_stats_median_dbl(v, n);
        for (size_t i = 0; i < n; i++)
            v[i] = fabs(v[i] - c->mu_d);
        c->sigma = 1.4826 * cs_stats_median_dbl(v, n);
        free(v);
        if (c->mu <= 0) {
            c->nBase = 0; /* nothing measured: a baseline of later units */
            return 0;
        }
        double lo = LV_SIGMA_FLOOR * c->mu;
        if (lo < floor)
            lo = floor;
        if (lo < step_share * c->mu_step)
            lo = step_share * c->mu_step;
        if (c->sigma < lo)
            c->sigma = lo;
        c->ready = 1;
        c->S = 0;
        c->cand = u + 1;
        return 0;
    }
    /* the allowance: half the smallest shift that matters (LV_MIN_SHIFT of
     * the value), at least cusum_k deviations; one unit adds at most 1 to
     * the sum, so an alarm needs cusum_h units of a shift */
    double k = LV_MIN_SHIFT * c->mu / 2 / c->sigma;
    if (k < l->opt.cusum_k)
        k = l->opt.cusum_k;
    double z = (d - c->mu_d) / c->sigma;
    if (z > k + 1)
        z = k + 1;
    c->S += z - k;
    if (c->S <= 0) {
        c->S = 0;
        c->cand = u + 1;
    }
    if (c->S <= l->opt.cusum_h || c->alarm)
        return 0;
    int64_t va[LV_RING], st[LV_RING], dd[LV_RING];
    size_t n = 0;
    for (int64_t q = c->cand < u - LV_RING + 1 ? u - LV_RING + 1 : c->cand; q <= u; q++) {
        va[n] = c->ring_val[q % LV_RING];
        st[n] = c->ring_step[q % LV_RING];
        dd[n++] = c->ring_d[q % LV_RING];
    }
    double mv = lv_median_dbl(va, n), md = lv_median_dbl(dd, n), ms = lv_median_dbl(st, n);
    /* the median since the change must be past the allowance (half the
     * shift that matters, at least cusum_k deviations), and past
     * step_share of the unit's time since */
    if (mv < c->mu * (1 + LV_MIN_SHIFT / 2) || md < c->mu_d + k * c->sigma || mv - c->mu < step_share * ms) {
        /* spikes, not a new level: start over */
        c->S = 0;
        c->cand = u + 1;
        return 0;
    }
    *mval = mv;
    *mstep = ms;
    return 1;
}

/* A slow alarm of a CUSUM that confirmed its shift (lv_cusum_unit): its
 * steps and factor; the caller writes its text. NULL when out of memory. */
static cs_live_alarm *lv_cusum_alarm(cs_live *l, lv_cusum *c, int64_t u, double mval)
{
    cs_live_alarm *a = lv_alarm_add(l);
    if (!a)
        return NULL;
    a->kind = CS_LIVE_SLOW;
    a->rank = -1;
    a->peer = -1;
    a->step = c->cand * c->unit;
    a->raised = u * c->unit + c->unit - 1;
    a->factor = c->mu > 0 ? mval / c->mu : 0;
    a->active = 1;
    a->until = -1;
    c->alarm = (int)l->nAlarm;
    return a;
}

/* The median value of the CUSUM's last 8 units (0: none yet). */
static double lv_cusum_recent(const lv_cusum *c)
{
    int64_t va[8];
    size_t k = 0;
    for (int64_t u = c->nunit > 8 ? c->nunit - 8 : 0; u < c->nunit; u++)
        va[k++] = c->ring_val[u % LV_RING];
    return k ? lv_median_dbl(va, k) : 0;
}

/* A slow alarm stays on while the value is still above halfway between
 * its baseline and its level when raised, halfway as a ratio (the
 * geometric mean: a shift is a factor, and a link's transfers 3,589x
 * their baseline that settled at 1,000x had fallen below the arithmetic
 * halfway and ended their alarm); step: where it ended. */
static void lv_cusum_hold(cs_live *l, const lv_cusum *c, int64_t step)
{
    if (!c->alarm)
        return;
    cs_live_alarm *a = &l->aAlarm[c->alarm - 1];
    int on = lv_cusum_recent(c) >= c->mu * (a->factor > 1 ? sqrt(a->factor) : 1);
    if (a->active && !on)
        a->until = step;
    else if (on)
        a->until = -1;
    a->active = on;
}

/* Has the CUSUM c's value shifted: its alarm active, or its sum past
 * half the threshold? */
static int lv_shifting(const cs_live *l, const lv_cusum *c)
{
    return (c->alarm && l->aAlarm[c->alarm - 1].active) || (c->ready && c->S > l->opt.cusum_h / 2);
}

/* Has rank r's own time shifted: its own CUSUM's, or its stage's? */
static int lv_rank_shifting(const cs_live *l, const lv_rank *r)
{
    return lv_shifting(l, &r->cs) || (r->stage && lv_shifting(l, &l->aStage[r->stage - 1].cs));
}

/* Rank r's unit u: its own time and time, and its excess d of own time
 * over the ranks' median for that unit (a slowdown every rank shares, the
 * machine's or the job's, cancels out), into its CUSUM. */
static void lv_cusum_rank(cs_live *l, lv_rank *r, int64_t u, int B, double own, double step, double d)
{
    double mown, mstep;
    if (!lv_cusum_unit(l, &r->cs, u, B, own, step, d, 20000.0 * B /* 20 us a step */, 0, &mown, &mstep))
        return;
    if (r->stage && lv_shifting(l, &l->aStage[r->stage - 1].cs)) {
        r->cs.S = 0; /* its stage's shift explains it: start over, as for spikes */
        r->cs.cand = u + 1;
        return;
    }
    cs_live_alarm *a = lv_cusum_alarm(l, &r->cs, u, mown);
    if (!a)
        return;
    a->rank = r->rank;
    snprintf(a->subject, sizeof a->subject, "rank");
    snprintf(a->name, sizeof a->name, "rank %d", r->rank);
    snprintf(a->text, sizeof a->text,
             "rank %d turned slow at step %lld, %.1fx (own time/step %.2f -> %.2f ms; step %.2f -> %.2f ms)", r->rank,
             (long long)a->step, a->factor, r->cs.mu / B / 1e6, mown / B / 1e6, r->cs.mu_step / B / 1e6,
             mstep / B / 1e6);
}

/* The rank's time in calls on communicator id per step (its slot, made
 * at its first call there; NULL when it has too many to watch). */
static lv_rcomm *lv_rcomm_get(cs_live *l, lv_rank *r, uint64_t id)
{
    for (size_t i = 0; i < r->nRc; i++)
        if (r->aRc[i].id == id)
            return &r->aRc[i];
    const lv_comm *m;
    if (!id || r->nRc >= LV_COMM_WATCH || !(m = lv_comm_get(l, id)) ||
        CS_VEC_RESERVE(r->aRc, r->capRc, r->nRc + 1) != 0)
        return NULL;
    size_t ci = (size_t)(m - l->aComm);
    if (CS_VEC_RESERVE(l->aComm[ci].aMem, l->aComm[ci].capMem, l->aComm[ci].nMem + 1) != 0)
        return NULL;
    lv_rcomm *c = &r->aRc[r->nRc];
    memset(c, 0, sizeof *c);
    c->id = id;
    c->ci = ci;
    l->aComm[ci].aMem[l->aComm[ci].nMem++] = (lv_member){ r, r->nRc++ };
    return c;
}

/* A communicator's or a link's time by step: the time of step s in
 * ring (0 when none), of which hi is the latest step. */
static int64_t lv_ring_at(const int64_t *ring, int64_t hi, int64_t s)
{
    return s > hi || s <= hi - LV_RING ? 0 : ring[s % LV_RING];
}

/* Add ns to step s of ring (the steps after *hi begun at 0); a step that
 * fell out of the ring is lost. */
static void lv_ring_add(int64_t *ring, int64_t *hi, int64_t s, int64_t ns)
{
    if (s <= *hi - LV_RING)
        return;
    for (int64_t q = *hi + 1 > s - LV_RING ? *hi + 1 : s - LV_RING; q <= s; q++)
        ring[q % LV_RING] = 0; /* steps begun */
    if (s > *hi)
        *hi = s;
    if (ns > 0)
        ring[s % LV_RING] += ns;
}

/* Communicator m's time in its calls in step s (0 when none). */
static int64_t lv_comm_in(const lv_comm *m, int64_t s)
{
    return lv_ring_at(m->ring_in, m->step_hi, s);
}

/* The collective calls every member of a communicator has made since the
 * last look, matched by number: each call's time from the last member's
 * start to the last member's end (what it cost once all were there; the
 * wait for a late member is left out), added to the step the last member
 * made it in. A call a member's ring no longer holds is lost. */
static void lv_match(cs_live *l)
{
    for (size_t ci = 0; ci < l->nComm; ci++) {
        lv_comm *m = &l->aComm[ci];
        if (m->size < 2 || m->nMem != (size_t)m->size)
            continue;
        for (;;) {
            int64_t t0 = 0, t1 = 0, step = 0;
            int ready = 1, lost = 0;
            for (size_t i = 0; i < m->nMem && ready; i++) {
                const lv_rcomm *c = &m->aMem[i].r->aRc[m->aMem[i].j];
                if (c->ncall <= m->kdone) {
                    ready = 0;
                    break;
                }
                if (c->ncall - m->kdone > LV_CALLS) {
                    lost = 1;
                    continue;
                }
                const lv_call *x = &c->ring[m->kdone % LV_CALLS];
                if (i == 0 || x->t0 > t0)
                    t0 = x->t0, step = x->step;
                if (i == 0 || x->t1 > t1)
                    t1 = x->t1;
            }
            if (!ready)
                break;
            m->kdone++;
            if (!lost)
                lv_ring_add(m->ring_in, &m->step_hi, step, t1 - t0);
        }
    }
}

/* Is a cause of communicator ci's shift already being watched: a member
 * rank whose own time shifted (an alarm active, or its sum past half
 * the threshold; its own or its stage's), a communicator of fewer
 * members, all of them its members, whose calls did, or a link with an
 * end among its members whose transfers did? Its members' waits for the slow one can
 * make its calls look slow (with more ranks than cores, ranks that
 * spin-wait long lose the CPU: docs/live.md); its alarm is held back
 * while so. */
static int lv_comm_held(const cs_live *l, size_t ci)
{
    const lv_comm *m = &l->aComm[ci];
#define LV_SHIFTING(c) lv_shifting(l, c)
    for (size_t i = 0; i < m->nMem; i++)
        if (lv_rank_shifting(l, m->aMem[i].r))
            return 1;
    for (size_t j = 0; j < l->nComm; j++) {
        const lv_comm *d = &l->aComm[j];
        if (j == ci || !d->nMem || d->nMem >= m->nMem || !LV_SHIFTING(&d->cs))
            continue;
        size_t in = 0;
        for (size_t a = 0; a < d->nMem; a++)
            for (size_t b = 0; b < m->nMem; b++)
                if (d->aMem[a].r == m->aMem[b].r) {
                    in++;
                    break;
                }
        if (in == d->nMem)
            return 1;
    }
    for (size_t j = 0; j < l->nLink; j++) {
        const lv_link *k = &l->aLink[j];
        if (!LV_SHIFTING(&k->cs))
            continue;
        for (size_t i = 0; i < m->nMem; i++)
            if (m->aMem[i].r == k->ra || m->aMem[i].r == k->rb)
                return 1;
    }
#undef LV_SHIFTING
    return 0;
}

/* Communicator ci's unit u: its calls' time once every member was in
 * them (lv_match: the wait for a late member is left out, so that a slow
 * rank, or a slow communicator of some members, does not make the others'
 * communicators look slow; docs/live.md), and the job's median time of
 * the unit, into its CUSUM. */
static void lv_cusum_comm(cs_live *l, size_t ci, int64_t u, int B, double in, double step)
{
    double val, mstep;
    lv_cusum *c = &l->aComm[ci].cs;
    if (!lv_cusum_unit(l, c, u, B, in, step, in, 20000.0 * B, LV_COMM_STEP_SHARE, &val, &mstep))
        return;
    if (lv_comm_held(l, ci)) {
        l->aComm[ci].cs.S = 0; /* start over, as for spikes */
        l->aComm[ci].cs.cand = u + 1;
        return;
    }
    cs_live_alarm *a = lv_cusum_alarm(l, &l->aComm[ci].cs, u, val);
    if (!a)
        return;
    const lv_comm *m = &l->aComm[ci];
    char cb[64];
    const char *label = lv_comm_label1(l, ci, cb, sizeof cb);
    a->comm = m->id;
    snprintf(a->comm_label, sizeof a->comm_label, "%s", label);
    snprintf(a->subject, sizeof a->subject, "comm");
    snprintf(a->name, sizeof a->name, "communicator %s", label);
    snprintf(a->text, sizeof a->text,
             "communicator %s turned slow at step %lld, %.1fx (its calls/step, all members in: %.2f -> %.2f ms; "
             "step %.2f -> %.2f ms)",
             label, (long long)a->step, a->factor, m->cs.mu / B / 1e6, val / B / 1e6, m->cs.mu_step / B / 1e6,
             mstep / B / 1e6);
}

/* The followed process of job rank `rank`, or NULL. */
static lv_rank *lv_rank_of(const cs_live *l, int rank)
{
    for (size_t i = 0; i < l->nRank; i++)
        if (l->aRank[i]->rank == rank && !l->aRank[i]->bad)
            return l->aRank[i];
    return NULL;
}

/* The job rank of member `lrank` of communicator id (-1: not known yet:
 * its COMMDEF not read). */
static int lv_world_rank(const cs_live *l, uint64_t id, int lrank)
{
    for (size_t i = 0; i < l->nComm; i++)
        if (l->aComm[i].id == id)
            return l->aComm[i].world_of && lrank >= 0 && lrank < l->aComm[i].size ? l->aComm[i].world_of[lrank] : -1;
    return -1;
}

/* Rank r's slot j's peer, once both ends' slots are known: its link (made
 * at most LV_LINKS a job). */
static void lv_link_find(cs_live *l, lv_rank *r, size_t j)
{
    lv_rp *s = &r->aRp[j];
    int w = lv_world_rank(l, s->comm, s->lpeer);
    lv_rank *p = w >= 0 && w != r->rank ? lv_rank_of(l, w) : NULL;
    if (!p || l->nLink >= LV_LINKS)
        return;
    for (size_t k = 0; k < p->nRp; k++) {
        lv_rp *t = &p->aRp[k];
        if (t->li || t->comm != s->comm || lv_world_rank(l, t->comm, t->lpeer) != r->rank)
            continue;
        if (CS_VEC_RESERVE(l->aLink, l->capLink, l->nLink + 1) != 0)
            return;
        lv_link *k2 = &l->aLink[l->nLink++];
        memset(k2, 0, sizeof *k2);
        k2->comm = s->comm;
        k2->step_hi = -1;
        int lo = r->rank < p->rank;
        k2->ra = lo ? r : p, k2->rb = lo ? p : r;
        k2->ja = lo ? j : k, k2->jb = lo ? k : j;
        s->li = t->li = l->nLink;
        return;
    }
}

/* One way of link k: send n of `from` (slot sf) and receive n of `to`
 * (slot st) are one message; its transfer time, from when both ends were
 * in it (the later of the send's start and the receive's, or its
 * completion call's) to the receive's end, is added to the step the
 * receiver completed it in. A message a ring no longer holds is lost. */
static void lv_link_way(lv_link *k, const lv_rp *sf, const lv_rp *st, uint64_t *n)
{
    while (*n < sf->nsend && *n < st->nrecv) {
        int lost = sf->nsend - *n > LV_P2P || st->nrecv - *n > LV_P2P;
        const lv_call *x = &sf->send[*n % LV_P2P], *y = &st->recv[*n % LV_P2P];
        if (!lost && y->t1 == 0)
            return; /* its receive is not complete yet */
        (*n)++;
        if (lost || y->t1 < 0)
            continue;
        int64_t from = x->t0 > y->t0 ? x->t0 : y->t0;
        lv_ring_add(k->ring_in, &k->step_hi, y->step, y->t1 - from);
    }
}

/* The point-to-point messages both ends of each link have read since the
 * last look, matched by number each way (lv_link_way); links made for
 * the peers seen since. */
static void lv_link_match(cs_live *l)
{
    for (size_t i = 0; i < l->nRank; i++)
        for (size_t j = 0; j < l->aRank[i]->nRp; j++)
            if (!l->aRank[i]->aRp[j].li && l->aRank[i]->aRp[j].tried != l->gen) {
                l->aRank[i]->aRp[j].tried = l->gen; /* again once something new is known */
                lv_link_find(l, l->aRank[i], j);
            }
    for (size_t i = 0; i < l->nLink; i++) {
        lv_link *k = &l->aLink[i];
        const lv_rp *a = &k->ra->aRp[k->ja], *b = &k->rb->aRp[k->jb];
        lv_link_way(k, a, b, &k->kab);
        lv_link_way(k, b, a, &k->kba);
    }
}

/* The ranks of a stage as text: "2-3" when consecutive, else a list. */
static void lv_stage_ranks(const lv_stage *g, char *buf, size_t len)
{
    int lo = g->aMem[0]->rank, hi = g->aMem[g->nMem - 1]->rank;
    if (hi - lo + 1 == (int)g->nMem) {
        snprintf(buf, len, "%d-%d", lo, hi);
        return;
    }
    size_t w = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < g->nMem && w + 12 < len; i++)
        w += (size_t)snprintf(buf + w, len - w, "%s%d", i ? "," : "", g->aMem[i]->rank);
}

static int lv_cmp_stage(const void *x, const void *y)
{
    const lv_stage *a = x, *b = y;
    return a->aMem[0]->rank < b->aMem[0]->rank ? -1 : a->aMem[0]->rank > b->aMem[0]->rank;
}

static int lv_cmp_rankp(const void *x, const void *y)
{
    const lv_rank *a = *(lv_rank *const *)x, *b = *(lv_rank *const *)y;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* The pipeline stages (docs/live.md), looked for until found: the
 * communicators of one size (2 or more members, fewer than the job) that
 * split the job's ranks into disjoint groups, where ranks of different
 * groups exchange point-to-point messages and ranks of one group none;
 * of several such splits, the one of the largest groups. Numbered by
 * their lowest rank. Every rank of the job must be followed. */
static void lv_stages(cs_live *l)
{
    if (l->nStage || !l->nLink || l->world < 4 || l->nRank < (size_t)l->world || l->stage_gen == l->gen)
        return;
    l->stage_gen = l->gen; /* again once something new is known */
    int *own = malloc((size_t)l->world * sizeof *own);
    if (!own)
        return;
    int best = 0;
    for (size_t ci = 0; ci < l->nComm; ci++) {
        int s = l->aComm[ci].size;
        if (s < 2 || s >= l->world || s <= best || l->world % s || !l->aComm[ci].world_of)
            continue;
        /* the communicators of size s: a split of the job? */
        for (int w = 0; w < l->world; w++)
            own[w] = -1;
        int ok = 1;
        for (size_t cj = 0; cj < l->nComm && ok; cj++) {
            const lv_comm *c = &l->aComm[cj];
            if (c->size != s)
                continue;
            if (!c->world_of)
                ok = 0;
            int first = -1; /* a duplicate of a group seen: the same members */
            for (int m = 0; m < s && ok; m++) {
                int w = c->world_of[m];
                if (w < 0 || w >= l->world) {
                    ok = 0;
                    break;
                }
                if (m == 0)
                    first = own[w];
                if (own[w] != first)
                    ok = 0;
                else if (own[w] < 0)
                    own[w] = (int)cj;
            }
        }
        for (int w = 0; w < l->world && ok; w++)
            ok = own[w] >= 0;
        /* messages between groups, none inside one */
        size_t across = 0;
        for (size_t i = 0; i < l->nLink && ok; i++) {
            int a = l->aLink[i].ra->rank, b = l->aLink[i].rb->rank;
            if (a < 0 || b < 0 || a >= l->world || b >= l->world || own[a] == own[b])
                ok = 0;
            else
                across++;
        }
        if (ok && across)
            best = s;
    }
    if (!best) {
        free(own);
        return;
    }
    /* the groups of size best, as found above */
    size_t ng = (size_t)(l->world / best);
    lv_stage *g = calloc(ng, sizeof *g);
    size_t n = 0;
    for (size_t ci = 0; g && ci < l->nComm && n < ng; ci++) {
        const lv_comm *c = &l->aComm[ci];
        int dup = 0;
        if (c->size != best)
            continue;
        for (size_t k = 0; k < n && !dup; k++) /* a duplicate of a group taken: the same members */
            for (size_t m = 0; m < g[k].nMem && !dup; m++)
                dup = g[k].aMem[m]->rank == c->world_of[0];
        if (dup)
            continue;
        g[n].ci = ci;
        g[n].aMem = calloc((size_t)best, sizeof *g[n].aMem);
        for (int m = 0; g[n].aMem && m < best; m++) {
            lv_rank *r = lv_rank_of(l, c->world_of[m]);
            if (r)
                g[n].aMem[g[n].nMem++] = r;
        }
        n++;
    }
    int whole = g && n == ng;
    for (size_t k = 0; k < n && whole; k++)
        whole = g[k].aMem && g[k].nMem == (size_t)best;
    if (!whole) {
        for (size_t k = 0; g && k < n; k++)
            free(g[k].aMem);
        free(g);
        free(own);
        return;
    }
    for (size_t k = 0; k < n; k++)
        qsort(g[k].aMem, g[k].nMem, sizeof *g[k].aMem, lv_cmp_rankp);
    qsort(g, n, sizeof *g, lv_cmp_stage);
    for (size_t k = 0; k < n; k++)
        for (size_t m = 0; m < g[k].nMem; m++)
            g[k].aMem[m]->stage = k + 1;
    l->aStage = g;
    l->nStage = n;
    free(own);
}

/* Stage j's unit u: its least member's own time (all of its members
 * must be slower for it to rise: one slow rank is the rank's alarm) and
 * d, that over the median of the other stages', into its CUSUM. */
static void lv_cusum_stage(cs_live *l, size_t j, int64_t u, int B, double own, double step, double d)
{
    double mown, mstep;
    lv_stage *g = &l->aStage[j];
    if (!lv_cusum_unit(l, &g->cs, u, B, own, step, d, 20000.0 * B, 0, &mown, &mstep))
        return;
    cs_live_alarm *a = lv_cusum_alarm(l, &g->cs, u, mown);
    if (!a)
        return;
    char cb[64], rb[64];
    const char *label = lv_comm_label1(l, g->ci, cb, sizeof cb);
    lv_stage_ranks(g, rb, sizeof rb);
    a->comm = l->aComm[g->ci].id;
    snprintf(a->comm_label, sizeof a->comm_label, "%s", label);
    snprintf(a->subject, sizeof a->subject, "stage");
    snprintf(a->name, sizeof a->name, "stage %zu (%.40s: ranks %.40s)", j, label, rb);
    snprintf(a->text, sizeof a->text,
             "%s turned slow at step %lld, %.1fx (own time/step, least member: %.2f -> %.2f ms; step %.2f -> "
             "%.2f ms)",
             a->name, (long long)a->step, a->factor, g->cs.mu / B / 1e6, mown / B / 1e6, g->cs.mu_step / B / 1e6,
             mstep / B / 1e6);
}

/* Link i's name: "link A-B", with " on LABEL" for a communicator other
 * than the world. */
static const char *lv_link_name(const cs_live *l, const lv_link *k, char *buf, size_t len)
{
    char cb[64];
    const char *label = lv_comm_label(l, k->comm, cb, sizeof cb);
    if (strcmp(label, "world") == 0)
        snprintf(buf, len, "link %d-%d", k->ra->rank, k->rb->rank);
    else
        snprintf(buf, len, "link %d-%d on %.60s", k->ra->rank, k->rb->rank, label);
    return buf;
}

/* Link i's unit u: its transfers' time once both ends were in them
 * (lv_link_way: a late partner's wait is left out), into its CUSUM; held
 * back while an end's own time (or its stage's) shifted, as a
 * communicator's is. */
static void lv_cusum_link(cs_live *l, size_t i, int64_t u, int B, double in, double step)
{
    double val, mstep;
    lv_link *k = &l->aLink[i];
    if (!lv_cusum_unit(l, &k->cs, u, B, in, step, in, 20000.0 * B, LV_COMM_STEP_SHARE, &val, &mstep))
        return;
    if (lv_rank_shifting(l, k->ra) || lv_rank_shifting(l, k->rb)) {
        k->cs.S = 0; /* start over, as for spikes */
        k->cs.cand = u + 1;
        return;
    }
    cs_live_alarm *a = lv_cusum_alarm(l, &k->cs, u, val);
    if (!a)
        return;
    char cb[64];
    a->rank = k->ra->rank;
    a->peer = k->rb->rank;
    a->comm = k->comm;
    snprintf(a->comm_label, sizeof a->comm_label, "%s", lv_comm_label(l, k->comm, cb, sizeof cb));
    snprintf(a->subject, sizeof a->subject, "link");
    lv_link_name(l, k, a->name, sizeof a->name);
    snprintf(a->text, sizeof a->text,
             "%s turned slow at step %lld, %.1fx (its transfers/step, both ends in: %.2f -> %.2f ms; step %.2f -> "
             "%.2f ms)",
             a->name, (long long)a->step, a->factor, k->cs.mu / B / 1e6, val / B / 1e6, k->cs.mu_step / B / 1e6,
             mstep / B / 1e6);
}

/* The units every rank followed has completed since the last look, in
 * order: each rank's excess over the median into its CUSUM, and each
 * communicator's time in calls into its own. A unit is a step, or with
 * the step proxy LV_PROXY_BLOCK proxy steps (a step of several calls of
 * the proxy's collective would otherwise be cut in parts of which only
 * one holds the step's compute). */
static void lv_detect(cs_live *l)
{
    int64_t done = -1;
    size_t n = 0, open = 0;
    int markers = 0;
    for (size_t i = 0; i < l->nRank; i++) {
        open += !l->aRank[i]->bad && !l->aRank[i]->closed;
        markers |= l->aRank[i]->markers;
    }
    int B = markers ? 1 : LV_PROXY_BLOCK;
    for (size_t i = 0; i < l->nRank; i++) {
        const lv_rank *r = l->aRank[i];
        if (r->bad || (open && r->closed))
            continue;
        if (done < 0 || r->nstep < done)
            done = r->nstep;
        n++;
    }
    int64_t units = done / B;
    if (!n || units <= l->u_next)
        return;
    int comm_alarms = lv_calls_alarms(l, l->opt.comm_alarms), link_alarms = lv_calls_alarms(l, l->opt.link_alarms);
    if (l->u_next * B < done - LV_RING + B)
        l->u_next = (done - LV_RING + B) / B; /* what fell out of the rings is lost */
    if (l->u_next * B < LV_WARMUP)
        l->u_next = (LV_WARMUP + B - 1) / B;
    lv_stages(l);
    size_t nr = l->nRank, ns = l->nStage;
    double *v = malloc((4 * nr + 2 * ns + 1) * sizeof *v);
    if (!v)
        return;
    double *vs = v + nr, *own_i = vs + nr, *step_i = own_i + nr, *sv = step_i + nr, *so = sv + ns;
    for (int64_t u = l->u_next; u < units; u++) {
        /* each rank's own time and time in the unit (-1: not complete) */
        size_t k = 0;
        for (size_t i = 0; i < nr; i++) {
            lv_rank *r = l->aRank[i];
            own_i[i] = step_i[i] = r->u_own = -1;
            if (r->bad || (u + 1) * B > r->nstep || u * B < r->nstep - LV_RING)
                continue;
            double own = 0, step = 0;
            for (int64_t s = u * B; s < (u + 1) * B; s++) {
                own += (double)r->ring_own[s % LV_RING];
                step += (double)r->ring_step[s % LV_RING];
            }
            vs[k] = step_i[i] = step;
            v[k++] = own_i[i] = r->u_own = own;
        }
        double med = k > 1 ? cs_stats_median_dbl(v, k) : 0, med_step = cs_stats_median_dbl(vs, k);
        /* the stages first: a stage whose shift explains its ranks' holds
         * their alarms back (lv_cusum_rank). A stage's value: its least
         * member's own time; d: that above the other stages' median */
        for (size_t j = 0; j < ns; j++) {
            const lv_stage *g = &l->aStage[j];
            sv[j] = -1;
            for (size_t m = 0; m < g->nMem; m++) {
                double o = g->aMem[m]->u_own;
                if (o < 0) {
                    sv[j] = -1;
                    break;
                }
                if (sv[j] < 0 || o < sv[j])
                    sv[j] = o;
            }
        }
        for (size_t j = 0; j < ns; j++) {
            size_t q = 0;
            for (size_t o = 0; o < ns; o++)
                if (o != j && sv[o] >= 0)
                    so[q++] = sv[o];
            if (sv[j] >= 0 && q)
                lv_cusum_stage(l, j, u, B, sv[j], med_step, sv[j] - cs_stats_median_dbl(so, q));
        }
        for (size_t i = 0; i < nr; i++)
            if (own_i[i] >= 0)
                lv_cusum_rank(l, l->aRank[i], u, B, own_i[i], step_i[i], own_i[i] - med);
        /* a communicator every member of which is followed (its size, as
         * its members said when they made it) and has completed the unit */
        for (size_t ci = 0; ci < l->nComm && comm_alarms; ci++) {
            const lv_comm *m = &l->aComm[ci];
            int all = m->size >= 2 && m->nMem == (size_t)m->size;
            for (size_t i = 0; i < m->nMem && all; i++)
                all = !m->aMem[i].r->bad && (u + 1) * B <= m->aMem[i].r->nstep;
            if (!all || u * B <= m->step_hi - LV_RING)
                continue;
            double in = 0;
            for (int64_t s = u * B; s < (u + 1) * B; s++)
                in += (double)lv_comm_in(m, s);
            lv_cusum_comm(l, ci, u, B, in, med_step);
        }
        /* a link both of whose ends completed the unit */
        for (size_t li = 0; li < l->nLink && link_alarms; li++) {
            const lv_link *lk = &l->aLink[li];
            if (lk->ra->bad || lk->rb->bad || (u + 1) * B > lk->ra->nstep || (u + 1) * B > lk->rb->nstep ||
                u * B <= lk->step_hi - LV_RING)
                continue;
            double in = 0;
            for (int64_t s = u * B; s < (u + 1) * B; s++)
                in += (double)lv_ring_at(lk->ring_in, lk->step_hi, s);
            lv_cusum_link(l, li, u, B, in, med_step);
        }
    }
    free(v);
    l->u_next = units;
}

static void lv_boundary(cs_live *l, lv_rank *r, int64_t t)
{
    if (r->step_t0 && t > r->step_t0) {
        int64_t step = t - r->step_t0, own = step - r->step_comm;
        lv_step_done(r, r->nstep, step, own < 0 ? 0 : own);
        r->nstep++;
    }
    r->step_t0 = t;
    r->step_comm = 0;
}

static lv_count *lv_count_get(lv_rank *r, uint64_t comm, int op)
{
    for (size_t i = 0; i < r->nCnt; i++)
        if (r->aCnt[i].comm == comm && r->aCnt[i].op == op)
            return &r->aCnt[i];
    if (CS_VEC_RESERVE(r->aCnt, r->capCnt, r->nCnt + 1) != 0)
        return NULL;
    lv_count *c = &r->aCnt[r->nCnt++];
    memset(c, 0, sizeof *c);
    c->comm = comm;
    c->op = (uint16_t)op;
    return c;
}

/* The step proxy of a rank without markers, from its counts so far: its
 * most frequent collective on its most used communicator (the choice of
 * a rank whose warm-up held no collective: lv_proxy_choose). */
static void lv_proxy(lv_rank *r)
{
    uint64_t best_comm = 0, most = 0;
    for (size_t i = 0; i < r->nCnt; i++) {
        if (!lv_is_coll(r->aCnt[i].op) || !r->aCnt[i].comm)
            continue;
        uint64_t n = 0;
        for (size_t j = 0; j < r->nCnt; j++)
            if (r->aCnt[j].comm == r->aCnt[i].comm && lv_is_coll(r->aCnt[j].op))
                n += r->aCnt[j].n;
        if (n > most)
            most = n, best_comm = r->aCnt[i].comm;
    }
    int op = 0;
    uint64_t n = 0;
    for (size_t i = 0; i < r->nCnt; i++)
        if (r->aCnt[i].comm == best_comm && lv_is_coll(r->aCnt[i].op) && r->aCnt[i].n > n)
            n = r->aCnt[i].n, op = r->aCnt[i].op;
    r->key_op = op;
    r->key_comm = best_comm;
}

/* The job-wide id of the communicator of span x of rank r (0: none). */
static uint64_t lv_span_comm(const lv_rank *r, const cs_rec *x)
{
    return ((x->hdr >> 8) & CS_F_HAS_COMM) && x->comm < r->nLocal ? r->aLocal[x->comm] : 0;
}

/* The step proxy chosen from the collectives of a rank's warm-up (the
 * records held, docs/live.md): the communicator of the most members (the
 * world, where it has collectives; of equal sizes the most used), and
 * on it, of its collectives made at least 1/LV_PROXY_RARE as often as the
 * most frequent one and more than once, the least frequent (the one
 * nearest to once a step); ties to the first made. */
static void lv_proxy_choose(const cs_live *l, lv_rank *r)
{
    struct {
        uint64_t comm;
        int op, size;
        uint64_t n;
    } c[64];
    size_t nc = 0;
    for (size_t i = 0; i < r->nHold; i++) {
        const cs_rec *x = &r->aHold[i];
        uint64_t comm;
        if (CS_REC_KIND(x->hdr) != CS_REC_SPAN || x->op >= CS_OP_COUNT || !lv_is_coll(x->op) ||
            !(comm = lv_span_comm(r, x)))
            continue;
        size_t k = 0;
        while (k < nc && (c[k].comm != comm || c[k].op != x->op))
            k++;
        if (k == nc) {
            if (nc == sizeof c / sizeof *c)
                continue;
            c[nc].comm = comm, c[nc].op = x->op, c[nc].n = 0, c[nc].size = 0;
            for (size_t m = 0; m < l->nComm; m++)
                if (l->aComm[m].id == comm)
                    c[nc].size = l->aComm[m].size;
            nc++;
        }
        c[k].n++;
    }
    uint64_t best = 0, used = 0;
    int size = -1;
    for (size_t k = 0; k < nc; k++) {
        uint64_t n = 0;
        for (size_t m = 0; m < nc; m++)
            n += c[m].comm == c[k].comm ? c[m].n : 0;
        if (c[k].size > size || (c[k].size == size && n > used))
            size = c[k].size, used = n, best = c[k].comm;
    }
    uint64_t most = 0;
    for (size_t k = 0; k < nc; k++)
        if (c[k].comm == best && c[k].n > most)
            most = c[k].n;
    int op = 0;
    uint64_t fewest = 0;
    for (size_t k = 0; k < nc; k++) {
        int recurs = c[k].n * LV_PROXY_RARE >= most && (c[k].n > 1 || most == 1);
        if (c[k].comm == best && recurs && (!op || c[k].n < fewest))
            op = c[k].op, fewest = c[k].n;
    }
    r->key_op = op;
    r->key_comm = op ? best : 0;
}

static int lv_cmp_t0(const void *x, const void *y)
{
    const cs_rec *a = x, *b = y;
    return a->t0 < b->t0 ? -1 : a->t0 > b->t0;
}

/* One record of a poll (cs_logf_fn). */
static void lv_rec(void *arg, const cs_rec *x, int fresh)
{
    lv_rank *r = arg;
    uint32_t kind = CS_REC_KIND(x->hdr);
    if (kind == CS_REC_CALIB) {
        cs_log_clock_note(&r->clock, (const cs_rec_calib *)x, r->toff);
    } else if (kind == CS_REC_COMMDEF) {
        const cs_rec_comm *c = (const cs_rec_comm *)x;
        if (c->local < 65536 && CS_VEC_RESERVE(r->aLocal, r->capLocal, (size_t)c->local + 1) == 0) {
            while (r->nLocal <= c->local)
                r->aLocal[r->nLocal++] = 0;
            r->aLocal[c->local] = c->id;
        }
    } else if (kind == CS_REC_INFLIGHT && !fresh) {
        if (!r->fly_op || x->tid < r->fly_tid) {
            r->fly_op = x->op;
            r->fly_tid = x->tid;
            r->fly_t0 = (int64_t)x->t0; /* ticks: converted after the poll */
        }
    } else if ((kind == CS_REC_SPAN || kind == CS_REC_REQDONE) &&
               CS_VEC_RESERVE(r->aNew, r->capNew, r->nNew + 1) == 0) {
        r->aNew[r->nNew++] = *x; /* a completion (cs_rec_done) shares a span's header and times */
    }
}

/* What the COMMDEF and COMMNAME records tell the job. */
static void lv_rec_job(cs_live *l, const cs_rec *x)
{
    uint32_t kind = CS_REC_KIND(x->hdr);
    if (kind == CS_REC_COMMDEF) {
        const cs_rec_comm *c = (const cs_rec_comm *)x;
        lv_comm *m = lv_comm_get(l, c->id);
        if (m && c->size > 0 && c->size <= (1u << 24) && (!m->size || m->size == (int)c->size)) {
            m->size = (int)c->size;
            /* its members' ranks: at most LV_WORLD_OF of them kept in all */
            if (!m->world_of && l->nWorldOf + c->size <= LV_WORLD_OF &&
                (m->world_of = malloc(c->size * sizeof *m->world_of)) != NULL) {
                l->nWorldOf += c->size;
                for (uint32_t i = 0; i < c->size; i++)
                    m->world_of[i] = -1;
            }
            if (m->world_of && c->rank >= 0 && (uint32_t)c->rank < c->size)
                m->world_of[c->rank] = c->world_rank;
            l->gen++;
        }
    } else if (kind == CS_REC_COMMNAME) {
        const cs_rec_commname *c = (const cs_rec_commname *)x;
        lv_comm *m = c->part == 0 ? lv_comm_get(l, c->id) : NULL;
        if (m) {
            size_t n = 0;
            while (n < sizeof c->text && n < sizeof m->name - 1 && c->text[n] >= 0x20 && c->text[n] < 0x7f &&
                   c->text[n] != '"' && c->text[n] != '\\')
                n++;
            memcpy(m->name, c->text, n);
            m->name[n] = '\0';
        }
    }
}

typedef struct lv_poll_arg {
    cs_live *l;
    lv_rank *r;
} lv_poll_arg;

static void lv_rec_both(void *arg, const cs_rec *x, int fresh)
{
    lv_poll_arg *p = arg;
    if (fresh)
        lv_rec_job(p->l, x);
    lv_rec(p->r, x, fresh);
}

/* Rank r's slot of its messages with peer lpeer of communicator comm
 * (made at the first; NULL past LV_PEERS peers). */
static lv_rp *lv_rp_get(cs_live *l, lv_rank *r, uint64_t comm, int lpeer)
{
    for (size_t i = 0; i < r->nRp; i++)
        if (r->aRp[i].comm == comm && r->aRp[i].lpeer == lpeer)
            return &r->aRp[i];
    if (r->nRp >= LV_PEERS || CS_VEC_RESERVE(r->aRp, r->capRp, r->nRp + 1) != 0)
        return NULL;
    lv_rp *p = &r->aRp[r->nRp++];
    memset(p, 0, sizeof *p);
    l->gen++;
    p->comm = comm;
    p->lpeer = lpeer;
    return p;
}

/* A receive of rank r from lpeer on comm: complete (t1 > 0), or a
 * nonblocking one whose completion is to come (request req). */
static void lv_p2p_recv(cs_live *l, lv_rank *r, uint64_t comm, int lpeer, int64_t t0, int64_t t1, uint32_t req)
{
    lv_rp *p = lv_rp_get(l, r, comm, lpeer);
    if (!p)
        return;
    uint64_t k = p->nrecv++;
    p->recv[k % LV_P2P] = (lv_call){ t0, t1, r->nstep };
    if (t1 > 0)
        return;
    if (r->nPend >= LV_PENDING) { /* the oldest given up: lost */
        const lv_pend *o = &r->aPend[0];
        if (r->aRp[o->rp].nrecv - o->k <= LV_P2P)
            r->aRp[o->rp].recv[o->k % LV_P2P].t1 = -1;
        memmove(r->aPend, r->aPend + 1, --r->nPend * sizeof *r->aPend);
    }
    if (CS_VEC_RESERVE(r->aPend, r->capPend, r->nPend + 1) != 0) {
        p->recv[k % LV_P2P].t1 = -1;
        return;
    }
    r->aPend[r->nPend++] = (lv_pend){ req, (uint32_t)(p - r->aRp), k };
}

/* Request req of rank r completed in a call from t0 to t1: a receive
 * awaited is complete. */
static void lv_p2p_done(lv_rank *r, uint32_t req, int64_t t0, int64_t t1)
{
    for (size_t i = 0; i < r->nPend; i++)
        if (r->aPend[i].req == req) {
            lv_rp *p = &r->aRp[r->aPend[i].rp];
            uint64_t k = r->aPend[i].k;
            if (p->nrecv - k <= LV_P2P) {
                lv_call *c = &p->recv[k % LV_P2P];
                if (t0 > c->t0)
                    c->t0 = t0;
                c->t1 = t1 > 0 ? t1 : -1;
                c->step = r->nstep;
            }
            memmove(r->aPend + i, r->aPend + i + 1, (--r->nPend - i) * sizeof *r->aPend);
            return;
        }
}

/* One record of rank r read (a span, or a nonblocking call's completion),
 * in order of start. */
static void lv_take_one(cs_live *l, lv_rank *r, const cs_rec *x)
{
    int op = x->op < CS_OP_COUNT ? x->op : 0;
    int64_t t0 = cs_log_clock_real(&r->clock, x->t0), t1 = cs_log_clock_real(&r->clock, x->t1);
    if (CS_REC_KIND(x->hdr) == CS_REC_REQDONE) {
        lv_p2p_done(r, ((const cs_rec_done *)x)->req, t0, t1);
        return;
    }
    if (!r->first || t0 < r->first)
        r->first = t0;
    if (t1 > r->last)
        r->last = t1;
    if (op && cs_ops[op].kind == CS_KIND_MARKER) {
        r->markers = 1;
        lv_boundary(l, r, t0);
        return;
    }
    uint64_t comm = lv_span_comm(r, x);
    int64_t d = t1 > t0 ? t1 - t0 : 0;
    if (d > LV_SPAN_MAX_NS) /* a damaged record's times: not a call */
        d = 0;
    r->comm_ns += d;
    lv_count *c = lv_count_get(r, comm, op);
    if (c) {
        c->n++;
        c->bytes += x->bytes;
        c->ns += d;
    }
    if (!r->markers && lv_is_coll(op)) {
        if (!r->key_op)
            lv_proxy(r);
        if (op == r->key_op && comm == r->key_comm)
            lv_boundary(l, r, t0); /* the collective itself belongs to the step it starts */
    }
    r->step_comm += d;
    lv_rcomm *rc = comm && lv_is_coll(op) ? lv_rcomm_get(l, r, comm) : NULL;
    if (rc)
        rc->ring[rc->ncall++ % LV_CALLS] = (lv_call){ t0, t0 + d, r->nstep };
    /* point-to-point: a send's start, a receive's times (a nonblocking
     * one's at its completion); a receive from any source is left out */
    uint32_t fl = CS_REC_FLAGS(x->hdr);
    int kind = op ? cs_ops[op].kind : 0;
    if (!comm || !(fl & CS_F_HAS_PEER) || x->peer < 0 || (fl & CS_F_ERROR) ||
        (kind != CS_KIND_SEND && kind != CS_KIND_RECV && kind != CS_KIND_SENDRECV))
        return;
    if (kind == CS_KIND_SEND || kind == CS_KIND_SENDRECV) {
        lv_rp *p = lv_rp_get(l, r, comm, x->peer);
        if (p)
            p->send[p->nsend++ % LV_P2P] = (lv_call){ t0, t0, r->nstep };
    }
    if (kind == CS_KIND_SENDRECV && (int32_t)x->req >= 0)
        lv_p2p_recv(l, r, comm, (int32_t)x->req, t0, t0 + d > 0 ? t0 + d : 1, 0);
    else if (kind == CS_KIND_RECV && !(fl & CS_F_ANY_SOURCE))
        lv_p2p_recv(l, r, comm, x->peer, t0, cs_ops[op].nonblocking ? 0 : (t0 + d > 0 ? t0 + d : 1), x->req);
}

/* The records of this poll, in order of start. Until a rank's step proxy
 * is chosen (after LV_PROXY_WARM collective calls, LV_HOLD_MAX records, a
 * step marker, or at the end of its log: end) they are held, then taken
 * in order with it: its steps count from its first call. */
static void lv_take_spans(cs_live *l, lv_rank *r, int end)
{
    size_t i = 1;
    while (i < r->nNew && r->aNew[i - 1].t0 <= r->aNew[i].t0) /* one thread's are in order already */
        i++;
    if (i < r->nNew)
        qsort(r->aNew, r->nNew, sizeof *r->aNew, lv_cmp_t0);
    if (!r->decided) {
        int flush = CS_VEC_RESERVE(r->aHold, r->capHold, r->nHold + r->nNew) != 0;
        if (!flush) {
            if (r->nNew) /* (aHold may still be NULL: no offset on it) */
                memcpy(r->aHold + r->nHold, r->aNew, r->nNew * sizeof *r->aNew);
            r->nHold += r->nNew;
            r->nNew = 0;
        }
        size_t ncoll = 0;
        for (size_t i = 0; i < r->nHold && !flush; i++) {
            int op = CS_REC_KIND(r->aHold[i].hdr) == CS_REC_SPAN && r->aHold[i].op < CS_OP_COUNT ? r->aHold[i].op : 0;
            flush = op && cs_ops[op].kind == CS_KIND_MARKER;
            ncoll += lv_is_coll(op);
        }
        if (!flush && !end && ncoll < LV_PROXY_WARM && r->nHold < LV_HOLD_MAX)
            return;
        int markers = 0;
        for (size_t i = 0; i < r->nHold && !markers; i++)
            markers = CS_REC_KIND(r->aHold[i].hdr) == CS_REC_SPAN && r->aHold[i].op < CS_OP_COUNT &&
                      cs_ops[r->aHold[i].op].kind == CS_KIND_MARKER;
        if (!markers)
            lv_proxy_choose(l, r);
        r->decided = 1;
        for (size_t i = 0; i < r->nHold; i++)
            lv_take_one(l, r, &r->aHold[i]);
        free(r->aHold);
        r->aHold = NULL;
        r->nHold = r->capHold = 0;
    }
    for (size_t i = 0; i < r->nNew; i++)
        lv_take_one(l, r, &r->aNew[i]);
    r->nNew = 0;
}

/* Open the logs that appeared since the last poll. */
static int lv_scan(cs_live *l, char *err, size_t errlen)
{
    char logs[1100];
    snprintf(logs, sizeof logs, "%s/logs", l->dir);
    DIR *d = opendir(logs);
    if (!d) {
        if (errno == ENOENT)
            return 0; /* not started yet */
        snprintf(err, errlen, "%s: %s", logs, strerror(errno));
        return -1;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 7 || strcmp(e->d_name + n - 6, ".cslog") != 0)
            continue;
        uint64_t h = 1469598103934665603ull;
        for (size_t i = 0; i < n; i++)
            h = (h ^ (unsigned char)e->d_name[i]) * 1099511628211ull;
        h &= ~(1ull << 63);
        int64_t ix;
        if (cs_map_get(&l->byName, h, &ix))
            continue;
        lv_rank *r = calloc(1, sizeof *r);
        if (!r || CS_VEC_RESERVE(l->aRank, l->capRank, l->nRank + 1) != 0) {
            free(r);
            closedir(d);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        snprintf(r->path, sizeof r->path, "%s/%s", logs, e->d_name);
        r->rank = -1;
        struct stat sb;
        char why[1400];
        if (lstat(r->path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            free(r);
            continue; /* never a link, a FIFO or a folder */
        }
        r->f = cs_logf_open(r->path, why, sizeof why);
        if (!r->f) {
            if (sb.st_size < 4096) {
                free(r); /* being created: next poll */
                continue;
            }
            cs_note("top: %s (left out)", why);
            r->bad = 1;
        }
        l->aRank[l->nRank++] = r;
        cs_map_put(&l->byName, h, (int64_t)l->nRank);
    }
    closedir(d);
    return 0;
}

static int lv_cmp_rank(const void *x, const void *y)
{
    const lv_rank *a = *(lv_rank *const *)x, *b = *(lv_rank *const *)y;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* Every rank in a call longer than the limit: what `collscope status`
 * says of it, as one alarm per line of its diagnosis. */
static void lv_hang(cs_live *l)
{
    size_t in = 0, open = 0;
    int64_t lim = (int64_t)(l->opt.hang_s * 1e9);
    for (size_t i = 0; i < l->nRank; i++) {
        lv_rank *r = l->aRank[i];
        if (r->bad || r->closed)
            continue;
        open++;
        in += r->fly_op && l->now - r->fly_t0 >= lim;
    }
    int hung = open > 0 && in == open;
    if (!hung) {
        if (l->hang_on)
            for (size_t i = 0; i < l->nAlarm; i++)
                if (l->aAlarm[i].kind == CS_LIVE_HANG && l->aAlarm[i].active) {
                    l->aAlarm[i].active = 0;
                    l->aAlarm[i].until = l->steps_now;
                }
        l->hang_on = 0;
        return;
    }
    if (l->hang_on)
        return;
    l->hang_on = 1;
    int64_t at = -1;
    for (size_t i = 0; i < l->nRank; i++)
        if (!l->aRank[i]->bad && (at < 0 || l->aRank[i]->nstep < at))
            at = l->aRank[i]->nstep;
    char *buf = NULL, err[512];
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return;
    cs_status_opts so = { .after_s = l->opt.hang_s };
    int rc = cs_status_run(l->dir, &so, m, err, sizeof err);
    fclose(m);
    int added = 0;
    char where[600] = "";
    /* the diagnosis: the lines "kind: text" after the ranks' lines; else
     * the ranks' lines (where each is) */
    for (char *line = buf, *next; (rc == 0 || rc == 3) && line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (line != buf && line[0] == ' ' && line[1] == ' ' && line[2] != ' ') {
            size_t w = strlen(where);
            if (w < sizeof where - 4)
                snprintf(where + w, sizeof where - w, "%s%s", w ? "; " : "", line + 2);
            continue;
        }
        if (line == buf || line[0] == ' ' || !strchr(line, ':'))
            continue;
        cs_live_alarm *a = lv_alarm_add(l);
        if (!a)
            break;
        a->kind = CS_LIVE_HANG;
        snprintf(a->subject, sizeof a->subject, "job");
        a->rank = -1;
        a->peer = -1;
        a->step = at;
        a->raised = at;
        a->until = -1;
        a->active = 1;
        snprintf(a->text, sizeof a->text, "hang: %s", line);
        added++;
    }
    if (!added) {
        cs_live_alarm *a = lv_alarm_add(l);
        if (a) {
            a->kind = CS_LIVE_HANG;
            snprintf(a->subject, sizeof a->subject, "job");
            a->rank = -1;
            a->peer = -1;
            a->step = at;
            a->raised = at;
            a->until = -1;
            a->active = 1;
            snprintf(a->text, sizeof a->text, "hang: every rank has been in a call for over %g s%s%s", l->opt.hang_s,
                     where[0] ? ": " : "", where);
        }
    }
    free(buf);
}

int cs_live_poll(cs_live *l, char *err, size_t errlen)
{
    if (lv_scan(l, err, errlen) != 0)
        return -1;
    l->now = lv_now();
    l->nclosed = 0;
    for (size_t i = 0; i < l->nRank; i++) {
        lv_rank *r = l->aRank[i];
        if (r->bad)
            continue;
        const cs_log_header *h = cs_logf_header(r->f);
        r->clock.ticks_per_ns = h->ticks_per_ns;
        r->toff = h->test_offset_ns;
        r->rank = h->rank;
        r->pid = h->pid;
        if (h->world_size > l->world)
            l->world = h->world_size;
        snprintf(r->host, sizeof r->host, "%s", h->host);
        r->closed = h->state == CS_LOG_CLOSED; /* before the reading: nothing is written after */
        r->gone = !r->closed && r->pid > 0 && strcmp(r->host, l->host) == 0 && kill(r->pid, 0) != 0 && errno == ESRCH;
    }
    /* the logs in turns of LV_BATCH records, each turn's steps into the
     * CUSUMs, until none has more */
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    l->behind = 0;
    for (size_t i = 0; i < l->nRank; i++)
        l->aRank[i]->drained = 0;
    for (int more = 1; more;) {
        /* a refresh takes at most its budget: writers faster than the
         * follower leave it behind, never unresponsive */
        struct timespec t1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if ((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9 > l->opt.poll_budget_s) {
            l->behind = 1;
            break;
        }
        more = 0;
        /* the ranks' steps kept in line: a rank more than LV_AHEAD steps
         * ahead of the least (of those with steps and records left to
         * read) waits a turn, whatever its records per step (the rings of
         * calls and messages kept for the matching are bounded) */
        int64_t lo = -1;
        for (size_t i = 0; i < l->nRank; i++) {
            const lv_rank *r = l->aRank[i];
            if (!r->bad && !r->drained && r->nstep > 0 && (lo < 0 || r->nstep < lo))
                lo = r->nstep;
        }
        for (size_t i = 0; i < l->nRank; i++) {
            lv_rank *r = l->aRank[i];
            if (r->bad)
                continue;
            if (!r->drained && lo >= 0 && r->nstep > lo + LV_AHEAD) {
                more = 1;
                continue;
            }
            r->fly_op = 0;
            lv_poll_arg pa = { l, r };
            char why[1400];
            long got = cs_logf_poll(r->f, LV_BATCH, lv_rec_both, &pa, why, sizeof why);
            if (got < 0) {
                cs_note("top: %s (no longer followed)", why);
                r->bad = 1;
                continue;
            }
            more |= got >= LV_BATCH;
            r->drained = got < LV_BATCH;
            if (r->fly_op)
                r->fly_t0 = cs_log_clock_real(&r->clock, (uint64_t)r->fly_t0);
            lv_take_spans(l, r, r->closed && got < LV_BATCH); /* a closed log read to its end */
        }
        lv_match(l);
        lv_link_match(l);
        lv_detect(l);
    }
    l->ngone = 0;
    for (size_t i = 0; i < l->nRank; i++) {
        l->nclosed += l->aRank[i]->closed;
        l->ngone += l->aRank[i]->gone;
    }
    qsort(l->aRank, l->nRank, sizeof *l->aRank, lv_cmp_rank);
    /* the straggler scores: each rank's recent own time per step against
     * the median and MAD of all ranks' */
    double *v = malloc((l->nRank + 1) * sizeof *v);
    if (!v) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t n = 0;
    int64_t steps = 0;
    for (size_t i = 0; i < l->nRank; i++) {
        lv_rank *r = l->aRank[i];
        int64_t ow[LV_RING], st[LV_RING];
        size_t k = 0;
        if (r->cs.nunit) {
            /* by unit, as the CUSUM: a proxy step alone may hold no compute */
            for (int64_t u = r->cs.nunit > 8 ? r->cs.nunit - 8 : 0; u < r->cs.nunit; u++)
                ow[k++] = r->cs.ring_val[u % LV_RING] / r->cs.unit;
        } else {
            k = lv_ring_since(r, r->nstep - 8, ow, st);
        }
        r->own_recent = k ? lv_median_dbl(ow, k) : 0;
        if (k)
            v[n++] = r->own_recent;
        if (i == 0 || r->nstep < steps)
            steps = r->nstep;
    }
    double med = cs_stats_median_dbl(v, n);
    for (size_t i = 0; i < n; i++)
        v[i] = fabs(v[i] - med);
    double mad = 1.4826 * cs_stats_median_dbl(v, n);
    double floor = LV_SIGMA_FLOOR * med > 1000 ? LV_SIGMA_FLOOR * med : 1000;
    if (mad < floor)
        mad = floor;
    for (size_t i = 0; i < l->nRank; i++)
        l->aRank[i]->score = l->aRank[i]->nstep ? (l->aRank[i]->own_recent - med) / mad : 0;
    free(v);
    /* the job's step rate: steps of the slowest rank over the time watched */
    if (steps > 0 && !l->t_steps_first) {
        l->t_steps_first = l->now;
        l->steps_first = steps;
    } else if (steps > l->steps_first && l->now > l->t_steps_first) {
        l->rate = (double)(steps - l->steps_first) / ((double)(l->now - l->t_steps_first) / 1e9);
    }
    l->steps_now = steps;
    /* a slow rank's, stage's, communicator's or link's alarm stays on while it is still
     * slower than halfway between its baseline and its level when raised */
    for (size_t i = 0; i < l->nRank; i++)
        lv_cusum_hold(l, &l->aRank[i]->cs, l->aRank[i]->nstep);
    for (size_t i = 0; i < l->nComm; i++)
        lv_cusum_hold(l, &l->aComm[i].cs, steps);
    for (size_t i = 0; i < l->nStage; i++)
        lv_cusum_hold(l, &l->aStage[i].cs, steps);
    for (size_t i = 0; i < l->nLink; i++)
        lv_cusum_hold(l, &l->aLink[i].cs, steps);
    lv_hang(l);
    return 0;
}

/* ---- the view ---- */

static int lv_sort_key;

/* Is an alarm on rank r's own time active: its own, or its stage's? */
static int lv_rank_slow(const cs_live *l, const lv_rank *r)
{
    const lv_cusum *g = r->stage ? &l->aStage[r->stage - 1].cs : NULL;
    return (r->cs.alarm && l->aAlarm[r->cs.alarm - 1].active) || (g && g->alarm && l->aAlarm[g->alarm - 1].active);
}

/* The median time of the rank's last `back` steps; *prev: of the `back`
 * steps before them (0 when there are none). */
static double lv_step_recent(const lv_rank *r, int64_t back, double *prev)
{
    int64_t ow[LV_RING], st[LV_RING];
    size_t k = lv_ring_since(r, r->nstep - back, ow, st);
    if (prev) {
        int64_t st2[LV_RING];
        size_t k2 = 0;
        for (int64_t s = r->nstep - 2 * back; s < r->nstep - back; s++)
            if (s >= 0 && s >= r->nstep - LV_RING)
                st2[k2++] = r->ring_step[s % LV_RING];
        *prev = k2 ? lv_median_dbl(st2, k2) : 0;
    }
    return k ? lv_median_dbl(st, k) : 0;
}

static double lv_comm_share(const cs_live *l, const lv_rank *r)
{
    int64_t end = r->closed ? r->last : l->now;
    return end > r->first && r->first ? (double)r->comm_ns / (double)(end - r->first) : 0;
}

static int lv_cmp_view(const void *x, const void *y)
{
    const lv_rank *a = *(const lv_rank *const *)x, *b = *(const lv_rank *const *)y;
    double ka = 0, kb = 0;
    switch (lv_sort_key) {
    case CS_LIVE_BY_STRAGGLER: ka = -a->score, kb = -b->score; break;
    case CS_LIVE_BY_STEP:
        ka = -(double)a->ring_step[(a->nstep + LV_RING - 1) % LV_RING],
        kb = -(double)b->ring_step[(b->nstep + LV_RING - 1) % LV_RING];
        break;
    case CS_LIVE_BY_COMM: ka = -a->comm_ns, kb = -b->comm_ns; break;
    default: break;
    }
    if (ka != kb)
        return ka < kb ? -1 : 1;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

void cs_live_frame(const cs_live *l, FILE *f, int cols, int rows, int sort)
{
    if (cols < 40)
        cols = 40;
    int used = 0;
#define LV_LINE(...)                            \
    do {                                        \
        char lb_[2048];                         \
        snprintf(lb_, sizeof lb_, __VA_ARGS__); \
        if (!rows || used < rows) {             \
            fprintf(f, "%.*s\n", cols, lb_);    \
            used++;                             \
        }                                       \
    } while (0)
    /* the step definition */
    const lv_rank *slow = NULL;
    int markers = 0, proxy = 0, key_op = 0;
    uint64_t key_comm = 0;
    for (size_t i = 0; i < l->nRank; i++) {
        const lv_rank *r = l->aRank[i];
        markers |= r->markers;
        if (!r->markers && r->key_op)
            proxy = 1, key_op = r->key_op, key_comm = r->key_comm;
        if (r->nstep && (!slow || r->own_recent > slow->own_recent))
            slow = r;
    }
    char cb[64], stepdef[200];
    if (markers && !proxy)
        snprintf(stepdef, sizeof stepdef, "steps: MPI_Pcontrol markers");
    else if (proxy)
        snprintf(stepdef, sizeof stepdef, "steps: proxy, each %s on %s", lv_op_name(key_op),
                 lv_comm_label(l, key_comm, cb, sizeof cb));
    else
        snprintf(stepdef, sizeof stepdef, "steps: none yet");
    size_t nact = 0;
    for (size_t i = 0; i < l->nAlarm; i++)
        nact += l->aAlarm[i].active;
    char gone[32] = "";
    if (l->ngone)
        snprintf(gone, sizeof gone, ", %zu gone", l->ngone);
    LV_LINE("%zu process%s (%zu ended%s), %s; %s", l->nRank, l->nRank == 1 ? "" : "es", l->nclosed, gone, stepdef,
            l->dir);
    double med_own = 0;
    {
        double v[4096];
        size_t n = 0;
        for (size_t i = 0; i < l->nRank && n < 4096; i++)
            if (l->aRank[i]->nstep)
                v[n++] = l->aRank[i]->own_recent;
        med_own = cs_stats_median_dbl(v, n);
    }
    if (l->behind)
        LV_LINE("(catching up: the ranks write faster than this refresh reads)");
    if (slow)
        LV_LINE("job: step %lld, %.1f/s; slowest rank %d, %+.2f ms/step own time; alarms %zu (%zu on)",
                (long long)l->steps_now, l->rate, slow->rank, (slow->own_recent - med_own) / 1e6, l->nAlarm, nact);
    else
        LV_LINE("job: no step completed yet; alarms %zu (%zu on)", l->nAlarm, nact);
    /* the alarms first: they must show in 24 lines */
    for (size_t i = 0; i < l->nAlarm; i++)
        if (l->aAlarm[i].active)
            LV_LINE("ALARM %s", l->aAlarm[i].text);
    for (size_t i = 0; i < l->nAlarm; i++)
        if (!l->aAlarm[i].active)
            LV_LINE("alarm (over) %s", l->aAlarm[i].text);
    LV_LINE("%5s %7s %8s %6s %5s %-22s %6s", "rank", "steps", "step ms", "trend", "comm", "in call (for)", "strag");
    const lv_rank **v = malloc((l->nRank + 1) * sizeof *v);
    if (!v)
        return;
    memcpy(v, l->aRank, l->nRank * sizeof *v);
    lv_sort_key = sort;
    qsort(v, l->nRank, sizeof *v, lv_cmp_view);
    for (size_t i = 0; i < l->nRank; i++) {
        const lv_rank *r = v[i];
        double prev = 0, cur = lv_step_recent(r, 8, &prev);
        char trend[16] = "", call[64] = "-";
        if (prev > 0 && cur > 0)
            snprintf(trend, sizeof trend, "%+.0f%%", (cur / prev - 1) * 100);
        if (r->bad)
            snprintf(call, sizeof call, "(unreadable log)");
        else if (r->gone)
            snprintf(call, sizeof call, "(gone, log not closed)");
        else if (r->fly_op)
            snprintf(call, sizeof call, "%s %.1fs", lv_op_name(r->fly_op), (double)(l->now - r->fly_t0) / 1e9);
        else if (r->closed)
            snprintf(call, sizeof call, "(ended)");
        LV_LINE("%5d %7lld %8.2f %6s %4.0f%% %-22.22s %6.1f%s", r->rank, (long long)r->nstep, cur / 1e6, trend,
                lv_comm_share(l, r) * 100, call, r->score,
                lv_rank_slow(l, r)              ? " SLOW"
                : r->score >= LV_STRAGGLER_MADS ? " late"
                                                : "");
    }
    free(v);
#undef LV_LINE
}

/* ---- Prometheus ---- */

/* A collective's bus bandwidth so far (the nccl-tests convention): its
 * bytes times the factor of its algorithm's traffic over the time in its
 * calls; 0 for what is no collective or has no time or size. */
static double lv_busbw(const cs_live *l, const lv_count *c)
{
    if (!lv_is_coll(c->op) || c->ns <= 0 || !c->bytes || !c->comm)
        return 0;
    int n = 0;
    for (size_t i = 0; i < l->nComm; i++)
        if (l->aComm[i].id == c->comm)
            n = l->aComm[i].size;
    if (n < 1)
        return 0;
    const char *name = cs_ops[c->op].name;
    double factor = 1;
    if (strstr(name, "llreduce"))
        factor = 2.0 * (n - 1) / n;
    else if (strstr(name, "llgather") || strstr(name, "educe_scatter") || strstr(name, "educeScatter") ||
             strstr(name, "lltoall"))
        factor = (double)(n - 1) / n;
    return (double)c->bytes * factor / ((double)c->ns / 1e9);
}

static void lv_help(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A counter per rank, communicator and operation: what 0 its calls, 1 its
 * payload bytes, 2 its seconds in calls. */
static void lv_counts(FILE *f, const cs_live *l, const lv_rank *const *v, size_t nv, const char *name, const char *help,
                      int what)
{
    char cb[64];
    lv_help(f, name, "counter", help);
    for (size_t i = 0; i < nv; i++)
        for (size_t j = 0; j < v[i]->nCnt; j++) {
            const lv_count *c = &v[i]->aCnt[j];
            fprintf(f, "%s{rank=\"%d\",comm=\"%s\",op=\"%s\"} ", name, v[i]->rank,
                    lv_comm_label(l, c->comm, cb, sizeof cb), lv_op_name(c->op));
            if (what == 2)
                fprintf(f, "%.9f\n", (double)c->ns / 1e9);
            else
                fprintf(f, "%llu\n", (unsigned long long)(what ? c->bytes : c->n));
        }
}

/* The value of a CUSUM's latest unit, per step, in seconds. */
static double lv_cusum_last_s(const lv_cusum *c)
{
    return (double)c->ring_val[(c->nunit - 1) % LV_RING] / c->unit / 1e9;
}

/* The value of series w of a watched CUSUM's four (its latest value per
 * step in seconds, its alarm active, the alarm's step, its factor; the
 * last two only where it has an alarm), after its name and labels. */
static void lv_metric_cusum(const cs_live *l, FILE *f, int w, const lv_cusum *c)
{
    const cs_live_alarm *a = c->alarm ? &l->aAlarm[c->alarm - 1] : NULL;
    if (w == 0)
        fprintf(f, "%.9f\n", lv_cusum_last_s(c));
    else if (w == 1)
        fprintf(f, "%d\n", a ? a->active : 0);
    else if (w == 2)
        fprintf(f, "%lld\n", (long long)a->step);
    else
        fprintf(f, "%.3f\n", a->factor);
}

/* The pipeline stages watched (lv_stages): their least member's own time
 * per step and their alarms; labels stage (its number) and comm (its
 * communicator). */
static void lv_metrics_stages(const cs_live *l, FILE *f)
{
    static const char *const name[4] = { "collscope_stage_own_seconds", "collscope_stage_alarm",
                                         "collscope_stage_alarm_step", "collscope_stage_alarm_factor" };
    static const char *const help[4] = {
        "A pipeline stage's least member's own time per step (outside traced calls), over its latest unit of steps.",
        "1 while a change-point alarm on the pipeline stage is active.",
        "The step where the stage's alarmed shift began.",
        "The stage's least member's own time per step after its shift over before."
    };
    char cb[64];
    for (int w = 0; w < 4; w++) {
        lv_help(f, name[w], "gauge", help[w]);
        for (size_t j = 0; j < l->nStage; j++) {
            const lv_cusum *c = &l->aStage[j].cs;
            if (!c->nunit || (w >= 2 && !c->alarm))
                continue;
            fprintf(f, "%s{stage=\"%zu\",comm=\"%s\"} ", name[w], j, lv_comm_label1(l, l->aStage[j].ci, cb, sizeof cb));
            lv_metric_cusum(l, f, w, c);
        }
    }
}

/* The links watched (lv_link_match): their transfers' time per step and
 * their alarms; labels rank and peer (its two ranks, the lower first)
 * and comm. At most LV_LINKS series each. */
static void lv_metrics_links(const cs_live *l, FILE *f)
{
    static const char *const name[4] = { "collscope_link_transfer_seconds", "collscope_link_alarm",
                                         "collscope_link_alarm_step", "collscope_link_alarm_factor" };
    static const char *const help[4] = {
        "Two ranks' point-to-point transfers' time per step once both ends were in them, over its latest unit of "
        "steps.",
        "1 while a change-point alarm on the link is active.", "The step where the link's alarmed shift began.",
        "The link's transfers' time per step after its shift over before."
    };
    char cb[64];
    for (int w = 0; w < 4; w++) {
        lv_help(f, name[w], "gauge", help[w]);
        for (size_t j = 0; j < l->nLink; j++) {
            const lv_link *k = &l->aLink[j];
            const lv_cusum *c = &k->cs;
            if (!c->nunit || (w >= 2 && !c->alarm))
                continue;
            fprintf(f, "%s{rank=\"%d\",peer=\"%d\",comm=\"%s\"} ", name[w], k->ra->rank, k->rb->rank,
                    lv_comm_label(l, k->comm, cb, sizeof cb));
            lv_metric_cusum(l, f, w, c);
        }
    }
}

void cs_live_metrics(const cs_live *l, FILE *f)
{
    char cb[64];
    /* the processes that know their rank: one series per rank label */
    const lv_rank **v = malloc((l->nRank + 1) * sizeof *v);
    size_t nv = 0;
    if (!v)
        return;
    for (size_t i = 0; i < l->nRank; i++)
        if (l->aRank[i]->rank >= 0 && (!nv || v[nv - 1]->rank != l->aRank[i]->rank))
            v[nv++] = l->aRank[i];
    lv_help(f, "collscope_processes", "gauge", "Processes whose trace logs are followed.");
    fprintf(f, "collscope_processes %zu\n", l->nRank);
    lv_help(f, "collscope_processes_ended", "gauge", "Processes that closed their trace logs.");
    fprintf(f, "collscope_processes_ended %zu\n", l->nclosed);
    lv_help(f, "collscope_job_step_rate", "gauge", "Steps per second of the slowest rank while watched.");
    fprintf(f, "collscope_job_step_rate %.6g\n", l->rate);
    lv_help(f, "collscope_rank_steps_total", "counter", "Steps the rank completed.");
    for (size_t i = 0; i < nv; i++)
        fprintf(f, "collscope_rank_steps_total{rank=\"%d\"} %lld\n", v[i]->rank, (long long)v[i]->nstep);
    lv_help(f, "collscope_rank_step_seconds", "gauge", "The rank's latest completed step's time.");
    for (size_t i = 0; i < nv; i++) {
        const lv_rank *r = v[i];
        if (r->nstep)
            fprintf(f, "collscope_rank_step_seconds{rank=\"%d\"} %.9f\n", r->rank,
                    (double)r->ring_step[(r->nstep - 1) % LV_RING] / 1e9);
    }
    lv_help(f, "collscope_rank_own_seconds", "gauge",
            "The rank's latest step's time outside traced calls (its own work).");
    for (size_t i = 0; i < nv; i++) {
        const lv_rank *r = v[i];
        if (r->nstep)
            fprintf(f, "collscope_rank_own_seconds{rank=\"%d\"} %.9f\n", r->rank,
                    (double)r->ring_own[(r->nstep - 1) % LV_RING] / 1e9);
    }
    lv_help(f, "collscope_rank_comm_seconds_total", "counter", "Time the rank spent inside traced calls.");
    for (size_t i = 0; i < nv; i++)
        fprintf(f, "collscope_rank_comm_seconds_total{rank=\"%d\"} %.9f\n", v[i]->rank, (double)v[i]->comm_ns / 1e9);
    lv_counts(f, l, v, nv, "collscope_collectives_total", "Calls per rank, communicator and operation.", 0);
    lv_counts(f, l, v, nv, "collscope_bytes_total", "Payload bytes per rank, communicator and operation.", 1);
    lv_counts(f, l, v, nv, "collscope_call_seconds_total", "Time in calls per rank, communicator and operation.", 2);
    lv_help(f, "collscope_bus_bandwidth_bytes_per_second", "gauge",
            "Bus bandwidth of a collective so far: bytes x its bus factor (allreduce 2(n-1)/n; allgather, "
            "reduce-scatter, alltoall (n-1)/n; others 1) over the time in its calls.");
    for (size_t i = 0; i < nv; i++)
        for (size_t j = 0; j < v[i]->nCnt; j++) {
            const lv_count *c = &v[i]->aCnt[j];
            double bw = lv_busbw(l, c);
            if (bw > 0)
                fprintf(f, "collscope_bus_bandwidth_bytes_per_second{rank=\"%d\",comm=\"%s\",op=\"%s\"} %.6g\n",
                        v[i]->rank, lv_comm_label(l, c->comm, cb, sizeof cb), lv_op_name(c->op), bw);
        }
    lv_help(f, "collscope_inflight_call_age_seconds", "gauge",
            "How long the rank has been in its current call (0: none).");
    for (size_t i = 0; i < nv; i++) {
        const lv_rank *r = v[i];
        fprintf(f, "collscope_inflight_call_age_seconds{rank=\"%d\"} %.6f\n", r->rank,
                r->fly_op ? (double)(l->now - r->fly_t0) / 1e9 : 0.0);
    }
    lv_help(f, "collscope_straggler_score", "gauge",
            "The rank's recent own time per step above the ranks' median, in MADs.");
    for (size_t i = 0; i < nv; i++)
        fprintf(f, "collscope_straggler_score{rank=\"%d\"} %.3f\n", v[i]->rank, v[i]->score);
    lv_help(f, "collscope_alarm", "gauge",
            "1 while a change-point alarm on the rank is active (rank \"job\": a hang).");
    for (size_t i = 0; i < nv; i++) {
        const lv_rank *r = v[i];
        fprintf(f, "collscope_alarm{rank=\"%d\"} %d\n", r->rank, r->cs.alarm ? l->aAlarm[r->cs.alarm - 1].active : 0);
    }
    fprintf(f, "collscope_alarm{rank=\"job\"} %d\n", l->hang_on);
    lv_help(f, "collscope_alarm_step", "gauge", "The step where the rank's alarmed shift began.");
    for (size_t i = 0; i < nv; i++) {
        const lv_rank *r = v[i];
        if (r->cs.alarm)
            fprintf(f, "collscope_alarm_step{rank=\"%d\"} %lld\n", r->rank, (long long)l->aAlarm[r->cs.alarm - 1].step);
    }
    lv_help(f, "collscope_alarm_factor", "gauge", "The rank's own time per step after its shift over before.");
    for (size_t i = 0; i < nv; i++) {
        const lv_rank *r = v[i];
        if (r->cs.alarm)
            fprintf(f, "collscope_alarm_factor{rank=\"%d\"} %.3f\n", r->rank, l->aAlarm[r->cs.alarm - 1].factor);
    }
    /* the communicators watched (lv_cusum_comm): their time in calls per
     * step, the least member's, and their alarms */
    lv_help(
        f, "collscope_comm_call_seconds", "gauge",
        "A communicator's collective calls' time per step once all its members were in them, over its latest unit of steps.");
    for (size_t i = 0; i < l->nComm; i++) {
        const lv_cusum *c = &l->aComm[i].cs;
        if (c->nunit)
            fprintf(f, "collscope_comm_call_seconds{comm=\"%s\"} %.9f\n", lv_comm_label1(l, i, cb, sizeof cb),
                    (double)c->ring_val[(c->nunit - 1) % LV_RING] / c->unit / 1e9);
    }
    lv_help(f, "collscope_comm_alarm", "gauge", "1 while a change-point alarm on the communicator is active.");
    for (size_t i = 0; i < l->nComm; i++) {
        const lv_cusum *c = &l->aComm[i].cs;
        if (c->nunit)
            fprintf(f, "collscope_comm_alarm{comm=\"%s\"} %d\n", lv_comm_label1(l, i, cb, sizeof cb),
                    c->alarm ? l->aAlarm[c->alarm - 1].active : 0);
    }
    lv_help(f, "collscope_comm_alarm_step", "gauge", "The step where the communicator's alarmed shift began.");
    for (size_t i = 0; i < l->nComm; i++) {
        const lv_cusum *c = &l->aComm[i].cs;
        if (c->alarm)
            fprintf(f, "collscope_comm_alarm_step{comm=\"%s\"} %lld\n", lv_comm_label1(l, i, cb, sizeof cb),
                    (long long)l->aAlarm[c->alarm - 1].step);
    }
    lv_help(f, "collscope_comm_alarm_factor", "gauge",
            "The communicator's time in calls per step after its shift over before.");
    for (size_t i = 0; i < l->nComm; i++) {
        const lv_cusum *c = &l->aComm[i].cs;
        if (c->alarm)
            fprintf(f, "collscope_comm_alarm_factor{comm=\"%s\"} %.3f\n", lv_comm_label1(l, i, cb, sizeof cb),
                    l->aAlarm[c->alarm - 1].factor);
    }
    lv_metrics_stages(l, f);
    lv_metrics_links(l, f);
    free(v);
}
