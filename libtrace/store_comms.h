/* store_comms.h: the display names of a trace's communicators, the one
 * place every consumer (report writers, analysis texts, diff, the TUI)
 * takes them from.
 *
 * A communicator is shown as "MPI_COMM_WORLD", "MPI_COMM_SELF", the name
 * set with MPI_Comm_set_name, or else a name derived from how it was made:
 * "split(PARENT, color C)", "dup(PARENT)", "create(PARENT, leader L)",
 * "nccl comm N" for the Nth NCCL communicator made from a unique id (in
 * creation order, job-wide), "other:HEX" for one made by a call
 * collscope does not wrap. Two communicators that
 * would read the same are told apart: a name set on several by its origin
 * ("grad [split(MPI_COMM_WORLD, color 1)]", also within the names of the
 * communicators made from them), else by " #2", " #3" in creation order
 * (a split made twice). A display name is never a bare number. */
#ifndef CS_STORE_COMMS_H
#define CS_STORE_COMMS_H

#include <stddef.h>
#include <stdint.h>

#include "common/map.h"
#include "libtrace/store.h"

#define CS_COMMS_DISPLAY_MAX 160 /* bytes of a display name, NUL included */

typedef struct cs_comm_info {
    int64_t id, parent; /* job-wide ids; parent 0 = none */
    int64_t created_ns;
    int size; /* members */
    int has_color, has_key;
    int color, key;                     /* split: color and key; create: the leader's world rank */
    int shared;                         /* its set name is another communicator's too */
    int nth;                            /* an NCCL one from a unique id: 1, 2, ... in creation order */
    char how[16];                       /* world, self, dup, split, create, other, nccl, nccl_split */
    char name[CS_COMMS_DISPLAY_MAX];    /* set with MPI_Comm_set_name, "" = none */
    char origin[CS_COMMS_DISPLAY_MAX];  /* how it was made: "split(MPI_COMM_WORLD, color 1)" */
    char display[CS_COMMS_DISPLAY_MAX]; /* what a report shows */
} cs_comm_info;

typedef struct cs_comms {
    cs_comm_info *a;
    size_t n, cap;
    cs_map idx; /* id -> index in a */
} cs_comms;

/* The communicators of a store and their display names. Returns 0, or -1
 * (cannot read, out of memory) with *t empty. A store of schema version 2
 * (no names recorded) gives derived names. */
int cs_store_comms_load(cs_store *st, cs_comms *t);
void cs_store_comms_free(cs_comms *t);

/* The communicator `id`, or NULL when the store does not know it. */
const cs_comm_info *cs_store_comms_find(const cs_comms *t, int64_t id);

/* The display name of communicator `id` into buf (also for an id the
 * table lacks: "comm:HEX"; id 0: "none"). Returns buf. t may be NULL. */
const char *cs_store_comms_name(const cs_comms *t, int64_t id, char *buf, size_t len);

/* The same with its size where a table has room: "MPI_COMM_WORLD (4 ranks)". */
const char *cs_store_comms_label(const cs_comms *t, int64_t id, char *buf, size_t len);

#endif
