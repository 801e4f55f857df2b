/* an_layout.c: the parallel layout of the job, found from the trace: how
 * many data-parallel replicas (dp), pipeline stages (pp) and tensor-
 * parallel ranks (tp), and each rank's coordinates in that grid.
 *
 *   dimensions   a family of communicators that partitions the ranks
 *                present (same parent, size, name but for a trailing
 *                index (dp_group_0, dp_group_1), and way of making, made
 *                at the same place of their members' sequences of
 *                communicators; every rank in exactly one of them,
 *                1 < size < ranks) is one
 *                dimension of the grid; the pipelines are the chains of
 *                point-to-point traffic (every rank with traffic on a
 *                simple path of P ranks, all paths alike), else a family
 *                named for pipelines. Names decide first (a token dp /
 *                data, tp / tensor / model, pp / pipe / pipeline in the
 *                name set on the communicators); without names, of two
 *                families the one with more collectives per communicator
 *                is tp, and a single family whose groups have one rank of
 *                each pipeline is dp. dp x pp x tp must be the ranks present.
 *   coordinates  pp: the rank's place on its chain (stage 0 is the end
 *                whose first point-to-point call is a send) or its rank in
 *                the pipeline communicator; dp and tp: its rank in its
 *                communicator of that family; a dimension without
 *                communicators (dp over the world) numbers the ranks that
 *                share the other two coordinates in rank order.
 *   none         no families and no chains: a data-parallel job of all
 *                ranks (dp N x pp 1, tp 1) when it has collectives; where
 *                the families or chains do not make a grid, no layout,
 *                and a note says why. */
#include "config.h"
#include "analyzer/analysis/analysis.h"
#include "analyzer/analysis/store_analysis.h"
#include "libtrace/store_comms.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CS_DIM_NONE = 0, CS_DIM_DP, CS_DIM_PP, CS_DIM_TP };

/* A communicator of the trace with its members by rank index. */
typedef struct cs_lcomm {
    const cs_comm_info *info;
    int *member;   /* [ndense]: its rank in the communicator, -1 not a member */
    int64_t *made; /* [ndense]: when each member made it (its own clock) */
    int order;     /* its place among the communicators its first member made */
    int n;         /* members present */
    int64_t insts; /* collective instances on it */
    int family;    /* index of its family, -1 none */
} cs_lcomm;

/* Communicators that partition the ranks present. */
typedef struct cs_lfamily {
    int size, ncomms, dim;
    int64_t insts; /* collective instances on all its communicators */
    int first;     /* a communicator of it (for its name) */
    int *group;    /* [ndense]: the index of each rank's communicator */
} cs_lfamily;

typedef struct cs_lload {
    cs_lcomm *c;
    size_t n;
    const cs_comms *t;
    const cs_an_ctx *ctx;
} cs_lload;

static int cs_layout_member_cb(const cs_comm_member *m, void *arg)
{
    cs_lload *l = arg;
    const cs_comm_info *ci = cs_store_comms_find(l->t, m->comm);
    int d = cs__an_ctx_ix(l->ctx, m->rank);
    if (!ci || d < 0)
        return 0;
    cs_lcomm *c = &l->c[ci - l->t->a];
    if (c->member[d] < 0) {
        c->member[d] = m->comm_rank;
        c->made[d] = m->created_ns;
        c->n++;
    }
    return 0;
}

static int cs_layout_inst_cb(const cs_inst_brief *b, void *arg)
{
    cs_lload *l = arg;
    const cs_comm_info *ci = cs_store_comms_find(l->t, b->comm);
    if (ci)
        l->c[ci - l->t->a].insts++;
    return 0;
}

/* The dimension a communicator's set name says, CS_DIM_NONE when it says none. */
static int cs_layout_dim_of_name(const char *name)
{
    char tok[64];
    size_t k = 0;
    for (const char *p = name;; p++) {
        if (*p && isalnum((unsigned char)*p) && k < sizeof tok - 1) {
            tok[k++] = (char)tolower((unsigned char)*p);
            continue;
        }
        tok[k] = '\0';
        if (k) {
            if (!strcmp(tok, "dp") || !strcmp(tok, "data") || !strcmp(tok, "ddp"))
                return CS_DIM_DP;
            if (!strcmp(tok, "tp") || !strcmp(tok, "tensor") || !strcmp(tok, "model") || !strcmp(tok, "mp"))
                return CS_DIM_TP;
            if (!strcmp(tok, "pp") || !strcmp(tok, "pipe") || !strcmp(tok, "pipeline"))
                return CS_DIM_PP;
        }
        k = 0;
        if (!*p)
            break;
    }
    return CS_DIM_NONE;
}

/* Are a and b one name but for a trailing index ("dp_group_0" and
 * "dp_group_3", as a framework names one group of each kind per set of
 * ranks)? Equal names are. */
static int cs_layout_same_name(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    while (na && isdigit((unsigned char)a[na - 1]))
        na--;
    while (nb && isdigit((unsigned char)b[nb - 1]))
        nb--;
    return na == nb && strncmp(a, b, na) == 0;
}

static int cs_layout_find(int *uf, int x)
{
    while (uf[x] != x)
        x = uf[x] = uf[uf[x]];
    return x;
}

/* The chains of point-to-point traffic: chain[d] the chain of rank index
 * d, pos[d] its place on it (stage), -1 for a rank without traffic.
 * Returns the ranks per chain (P >= 2), 1 when no rank has traffic, 0 when
 * the traffic is not a set of equal simple paths (why), -1 when the
 * messages cannot be read. */
static int cs_layout_chains(const cs_an_ctx *ctx, const cs_an_msgs *msgs, int *chain, int *pos, char *why,
                            size_t whylen)
{
    int n = ctx->ndense;
    int *deg = calloc((size_t)n, sizeof *deg), *uf = malloc((size_t)n * sizeof *uf);
    int *nb = malloc(2 * (size_t)n * sizeof *nb); /* up to two neighbours each */
    int64_t *first_send = malloc((size_t)n * sizeof *first_send), *first_recv = malloc((size_t)n * sizeof *first_recv);
    int P = 0;
    if (!deg || !uf || !nb || !first_send || !first_recv) {
        snprintf(why, whylen, "out of memory");
        goto out;
    }
    for (int d = 0; d < n; d++) {
        uf[d] = d;
        nb[2 * d] = nb[2 * d + 1] = -1;
        first_send[d] = first_recv[d] = INT64_MAX;
        chain[d] = pos[d] = -1;
    }
    /* each rank's partners (at most two kept; deg counts up to three) */
    cs_msg_iter it;
    if (cs__an_msgs_begin(msgs, &it) != 0) {
        P = -1;
        goto out;
    }
    for (const cs_msg *m; (m = cs__an_msgs_next(&it));) {
        int a = cs__an_ctx_ix(ctx, m->src), b = cs__an_ctx_ix(ctx, m->dst);
        if (a < 0 || b < 0 || a == b)
            continue;
        if (m->sb < first_send[a])
            first_send[a] = m->sb;
        if (m->rb < first_recv[b])
            first_recv[b] = m->rb;
        for (int k = 0; k < 2; k++) {
            int x = k ? b : a, y = k ? a : b;
            if (nb[2 * x] == y || nb[2 * x + 1] == y || deg[x] > 2)
                continue;
            if (deg[x] < 2)
                nb[2 * x + deg[x]] = y;
            deg[x]++;
        }
    }
    if (cs__an_msgs_end(&it) != 0) {
        P = -1;
        goto out;
    }
    for (int d = 0; d < n; d++)
        if (deg[d] > 2) {
            snprintf(why, whylen, "rank %d exchanges messages with more than two ranks", ctx->rank_of[d]);
            goto out;
        }
    int edges = 0;
    for (int d = 0; d < n; d++)
        for (int k = 0; k < deg[d]; k++) {
            int e = nb[2 * d + k];
            if (e < d)
                continue; /* each edge once */
            int ra = cs_layout_find(uf, d), rb = cs_layout_find(uf, e);
            if (ra == rb) {
                int len = 0;
                for (int x = 0; x < n; x++)
                    len += cs_layout_find(uf, x) == ra;
                snprintf(why, whylen, "%d ranks exchange messages in a ring", len);
                goto out;
            }
            uf[ra] = rb;
            edges++;
        }
    if (edges == 0) {
        P = 1;
        goto out;
    }
    /* walk each chain from the end whose first call was a send */
    int nchains = 0;
    for (int d = 0; d < n; d++) {
        if (deg[d] == 0) {
            snprintf(why, whylen, "rank %d has no point-to-point traffic while others do", ctx->rank_of[d]);
            goto out;
        }
        if (deg[d] != 1 || chain[d] >= 0)
            continue;
        /* the other end */
        int prev = -1, cur = d, len = 1;
        while (1) {
            int nx = nb[2 * cur] != prev ? nb[2 * cur] : nb[2 * cur + 1];
            if (nx < 0)
                break;
            prev = cur;
            cur = nx;
            len++;
            if (deg[cur] == 1)
                break;
        }
        int start = d;
        int d_sends = first_send[d] < first_recv[d], e_sends = first_send[cur] < first_recv[cur];
        if (!d_sends && e_sends)
            start = cur;
        if (P && len != P) {
            snprintf(why, whylen, "chains of %d and %d ranks", P, len);
            P = 0;
            goto out;
        }
        P = len;
        prev = -1;
        cur = start;
        for (int k = 0; k < len; k++) {
            chain[cur] = nchains;
            pos[cur] = k;
            int nx = nb[2 * cur] != prev ? nb[2 * cur] : nb[2 * cur + 1];
            prev = cur;
            cur = nx;
        }
        nchains++;
    }
out:
    free(deg);
    free(uf);
    free(nb);
    free(first_send);
    free(first_recv);
    return P;
}

static const char *cs_layout_dim_name(int dim)
{
    return dim == CS_DIM_DP ? "dp" : dim == CS_DIM_TP ? "tp" : dim == CS_DIM_PP ? "pp" : "-";
}

int cs__an_layout(cs_an_ctx *ctx, const cs_an_msgs *msgs, char *err, size_t errlen)
{
    int n = ctx->ndense, rc = -1;
    cs_comms t = { 0 };
    cs_lcomm *c = NULL;
    cs_lfamily *f = NULL;
    int nf = 0;
    int *chain = malloc((size_t)(n ? n : 1) * sizeof *chain), *pos = malloc((size_t)(n ? n : 1) * sizeof *pos);
    int *coord = malloc(3 * (size_t)(n ? n : 1) * sizeof *coord);
    char why[256] = "", src[512] = "";
    if (!chain || !pos || !coord)
        goto oom;
    if (n < 2) {
        rc = 0;
        goto done;
    }
    if (cs_store_comms_load(ctx->st, &t) != 0) {
        snprintf(err, errlen, "%s: cannot read the communicators", cs_store_path(ctx->st));
        goto done;
    }
    c = calloc(t.n ? t.n : 1, sizeof *c);
    f = calloc(t.n ? t.n : 1, sizeof *f);
    if (!c || !f)
        goto oom;
    for (size_t i = 0; i < t.n; i++) {
        c[i].info = &t.a[i];
        c[i].family = -1;
        if (!(c[i].member = malloc((size_t)n * sizeof *c[i].member)) ||
            !(c[i].made = calloc((size_t)n, sizeof *c[i].made)))
            goto oom;
        for (int d = 0; d < n; d++)
            c[i].member[d] = -1;
    }
    cs_lload l = { c, t.n, &t, ctx };
    if (cs_store_comm_members(ctx->st, cs_layout_member_cb, &l) != 0 ||
        cs_store_instances_grouped(ctx->st, cs_layout_inst_cb, &l) != 0) {
        snprintf(err, errlen, "%s: cannot read the communicators' members", cs_store_path(ctx->st));
        goto done;
    }

    /* the order in which its first member made each communicator: the
     * communicators of one MPI_Comm_split call share it in SPMD code */
    for (size_t i = 0; i < t.n; i++) {
        int d0 = 0;
        while (d0 < n && c[i].member[d0] < 0)
            d0++;
        c[i].order = -1;
        if (d0 == n)
            continue;
        c[i].order = 0;
        for (size_t j = 0; j < t.n; j++)
            if (j != i && c[j].member[d0] >= 0 &&
                (c[j].made[d0] < c[i].made[d0] || (c[j].made[d0] == c[i].made[d0] && j < i)))
                c[i].order++;
    }
    /* families: communicators alike (parent, size, name but for a trailing
     * index, how, order made),
     * disjoint, together every rank present */
    for (size_t i = 0; i < t.n; i++) {
        const cs_comm_info *ci = c[i].info;
        if (c[i].family >= 0 || c[i].n < 2 || c[i].n >= n || c[i].n != ci->size)
            continue;
        cs_lfamily *fa = &f[nf];
        if (!(fa->group = malloc((size_t)n * sizeof *fa->group)))
            goto oom;
        for (int d = 0; d < n; d++)
            fa->group[d] = -1;
        int ok = 1, covered = 0;
        for (size_t j = i; j < t.n && ok; j++) {
            const cs_comm_info *cj = c[j].info;
            if (c[j].family >= 0 || c[j].n != c[i].n || cj->size != ci->size || cj->parent != ci->parent ||
                c[j].order != c[i].order || !cs_layout_same_name(cj->name, ci->name) || strcmp(cj->how, ci->how))
                continue;
            for (int d = 0; d < n && ok; d++)
                if (c[j].member[d] >= 0) {
                    if (fa->group[d] >= 0)
                        ok = 0; /* overlapping: not a partition */
                    fa->group[d] = (int)j;
                    covered++;
                }
            fa->ncomms++;
            fa->insts += c[j].insts;
        }
        if (!ok || covered != n) {
            free(fa->group);
            memset(fa, 0, sizeof *fa);
            continue;
        }
        for (int d = 0; d < n; d++)
            c[fa->group[d]].family = nf;
        fa->size = c[i].n;
        fa->first = (int)i;
        fa->dim = cs_layout_dim_of_name(ci->name);
        nf++;
    }

    /* pipelines: a family named for them, else the chains of messages */
    int P = 0, ppf = -1;
    for (int k = 0; k < nf; k++)
        if (f[k].dim == CS_DIM_PP && ppf < 0)
            ppf = k;
    if (ppf >= 0) {
        P = f[ppf].size;
        for (int d = 0; d < n; d++) {
            chain[d] = f[ppf].group[d];
            pos[d] = c[f[ppf].group[d]].member[d];
        }
    } else {
        P = cs_layout_chains(ctx, msgs, chain, pos, why, sizeof why);
        if (P < 0) {
            snprintf(err, errlen, "the paired messages could not be read back whole");
            goto done;
        }
    }
    if (P == 0) {
        cs__an_ctx_note(ctx, "no parallel layout: the point-to-point traffic is no pipeline (%s)", why);
        rc = 0;
        goto done;
    }
    /* an unnamed family whose communicators are the chains is the pipelines' */
    for (int k = 0; k < nf && ppf < 0 && P > 1; k++) {
        if (f[k].dim != CS_DIM_NONE || f[k].size != P)
            continue;
        int same = 1;
        for (int d = 0; d < n && same; d++)
            for (int e = d + 1; e < n && same; e++)
                same = (f[k].group[d] == f[k].group[e]) == (chain[d] == chain[e]);
        if (same) {
            ppf = k;
            f[k].dim = CS_DIM_PP;
        }
    }

    /* dp and tp: by name, else by what the families carry */
    int dpf = -1, tpf = -1, nun = 0, un[2] = { -1, -1 };
    for (int k = 0; k < nf; k++) {
        if (k == ppf)
            continue;
        if (f[k].dim == CS_DIM_DP && dpf < 0)
            dpf = k;
        else if (f[k].dim == CS_DIM_TP && tpf < 0)
            tpf = k;
        else if (f[k].dim == CS_DIM_NONE && nun < 2)
            un[nun++] = k;
        else if (f[k].dim == CS_DIM_NONE)
            nun++;
    }
    int R = n / P;
    if (n % P) {
        cs__an_ctx_note(ctx, "no parallel layout: chains of %d ranks do not divide %d ranks", P, n);
        rc = 0;
        goto done;
    }
    if (dpf < 0 && tpf < 0 && nun == 2 && f[un[0]].size * f[un[1]].size == R) {
        /* the family with more collectives per communicator is tp (one
         * per layer), the other dp (once per step) */
        double a = (double)f[un[0]].insts / f[un[0]].ncomms, b = (double)f[un[1]].insts / f[un[1]].ncomms;
        tpf = a > b ? un[0] : un[1];
        dpf = a > b ? un[1] : un[0];
        f[tpf].dim = CS_DIM_TP;
        f[dpf].dim = CS_DIM_DP;
    } else if (dpf < 0 && tpf < 0 && nun == 1 && f[un[0]].size == R && P > 1) {
        /* tensor parallelism talks more than the pipeline (every layer of
         * every microbatch), data parallelism less (once per step) */
        double per_comm = (double)f[un[0]].insts / f[un[0]].ncomms, per_chain = (double)msgs->nmsgs / (n / P);
        if (per_comm > per_chain) {
            tpf = un[0];
            f[tpf].dim = CS_DIM_TP;
        } else {
            dpf = un[0];
            f[dpf].dim = CS_DIM_DP;
        }
    } else if (nun == 1 && dpf >= 0 && tpf < 0 && f[dpf].size * f[un[0]].size == R) {
        tpf = un[0];
        f[tpf].dim = CS_DIM_TP;
    } else if (nun == 1 && tpf >= 0 && dpf < 0 && f[tpf].size * f[un[0]].size == R) {
        dpf = un[0];
        f[dpf].dim = CS_DIM_DP;
    }
    int T = tpf >= 0 ? f[tpf].size : 1;
    int D = dpf >= 0 ? f[dpf].size : R / T;
    if (D * T * P != n || (tpf < 0 && dpf < 0 && nf > (ppf >= 0) && P == 1)) {
        cs__an_ctx_note(
            ctx, "no parallel layout: %d families of communicators that split the ranks, chains of %d ranks", nf, P);
        rc = 0;
        goto done;
    }
    /* the coordinates */
    for (int d = 0; d < n; d++) {
        coord[3 * d + 0] = dpf >= 0 ? c[f[dpf].group[d]].member[d] : -1;
        coord[3 * d + 1] = P > 1 ? pos[d] : 0;
        coord[3 * d + 2] = tpf >= 0 ? c[f[tpf].group[d]].member[d] : 0;
    }
    if (dpf < 0)
        for (int d = 0; d < n; d++) { /* dp over the world: rank order among the ranks alike */
            int k = 0;
            for (int e = 0; e < d; e++)
                k += coord[3 * e + 1] == coord[3 * d + 1] && coord[3 * e + 2] == coord[3 * d + 2];
            coord[3 * d + 0] = k;
        }
    for (int d = 0; d < n; d++)
        for (int e = 0; e < d; e++)
            if (coord[3 * e] == coord[3 * d] && coord[3 * e + 1] == coord[3 * d + 1] &&
                coord[3 * e + 2] == coord[3 * d + 2]) {
                cs__an_ctx_note(ctx,
                                "no parallel layout: ranks %d and %d would share the coordinates dp %d, pp %d, tp %d",
                                ctx->rank_of[e], ctx->rank_of[d], coord[3 * d], coord[3 * d + 1], coord[3 * d + 2]);
                rc = 0;
                goto done;
            }
    char lay[96], b[CS_COMMS_DISPLAY_MAX];
    snprintf(lay, sizeof lay, "dp %d x pp %d, tp %d", D, P, T);
    size_t sl = 0;
    const int fams[3] = { dpf, ppf, tpf }, dims[3] = { CS_DIM_DP, CS_DIM_PP, CS_DIM_TP };
    for (int k = 0; k < 3; k++) {
        const char *what;
        char tmp[256];
        if (fams[k] >= 0) {
            cs_store_comms_name(&t, c[f[fams[k]].first].info->id, b, sizeof b);
            snprintf(tmp, sizeof tmp, "%s: %d communicators of %d like %s%s", cs_layout_dim_name(dims[k]),
                     f[fams[k]].ncomms, f[fams[k]].size, b,
                     f[fams[k]].dim == cs_layout_dim_of_name(c[f[fams[k]].first].info->name) ? " (by name)" : "");
            what = tmp;
        } else if (dims[k] == CS_DIM_PP) {
            snprintf(tmp, sizeof tmp, P > 1 ? "pp: chains of %d ranks by send/receive" : "pp: no chains", P);
            what = tmp;
        } else if (dims[k] == CS_DIM_DP && D == 1) {
            what = "dp: none";
        } else if (dims[k] == CS_DIM_DP) {
            snprintf(tmp, sizeof tmp, "dp: %d ranks alike in pp and tp, no communicator of their own", D);
            what = tmp;
        } else {
            what = "tp: none";
        }
        if (sl < sizeof src)
            sl += (size_t)snprintf(src + sl, sizeof src - sl, "%s%s", sl ? "; " : "", what);
    }
    cs_store_meta_set(ctx->st, "analysis_layout", lay);
    cs_store_meta_set(ctx->st, "analysis_layout_source", src);
    for (int d = 0; d < n; d++) {
        cs_layout_row r = { ctx->rank_of[d], coord[3 * d], coord[3 * d + 1], coord[3 * d + 2] };
        if (cs_awriter_layout(ctx->w, &r) != 0) {
            snprintf(err, errlen, "%s: cannot write the layout", cs_store_path(ctx->st));
            goto done;
        }
    }
    rc = 0;
    goto done;
oom:
    snprintf(err, errlen, "out of memory");
    rc = -1;
done:
    for (size_t i = 0; c && i < t.n; i++) {
        free(c[i].member);
        free(c[i].made);
    }
    for (int k = 0; f && k < nf; k++)
        free(f[k].group);
    free(c);
    free(f);
    free(chain);
    free(pos);
    free(coord);
    cs_store_comms_free(&t);
    return rc;
}
