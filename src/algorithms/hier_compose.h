/*
 * hier_compose.h — what the `hierarchical` algorithms share (hier_compose.c): the node
 * layout of a call and the composition of a schedule from the schedules of sub-calls on
 * groups of ranks (the ranks of one node; one head rank per node).
 */
#ifndef COLLIE_HIER_COMPOSE_H
#define COLLIE_HIER_COMPOSE_H

#include "algorithms/algorithm.h"

#define HIER_MAX_NODES 4096

/* The node layout: args->node_of when the team spans nodes, else param "node" = ranks per
 * node (consecutive; for tests and the simulator), else one node. */
typedef struct hier_layout {
    int nnodes;
    int my_node, my_local;        /* this rank's node and index within it */
    int node_size;                /* ranks on this rank's node */
    const collie_coll_args *a;
} hier_layout;

void hier_layout_of(const collie_coll_args *a, hier_layout *l);
int hier_node_of(const hier_layout *l, int rank);
/* The local-th rank of node, in rank order. */
int hier_rank_at(const hier_layout *l, int node, int local);
int hier_local_index(const hier_layout *l, int rank);
int hier_node_size(const hier_layout *l, int node);
/* The rank that represents node among the heads: the root on the root's node, else the
 * node's first rank. */
int hier_head(const hier_layout *l, int node, int root);
/* true when every node's ranks are consecutive (rank order survives the hierarchy). */
bool hier_blocked(const hier_layout *l);
/* accepts() of the hierarchical algorithms. */
bool hier_accepts(const collie_coll_args *a, const char **why);

/* A sub-call on a group: its arguments, the global rank of each group member, and where
 * its buffers live in the whole call (buf[b] / off[b] for SBUF_SEND, RECV, TMP). */
typedef struct hier_part {
    collie_coll_args args;
    const int *members;           /* [args.size]: global ranks */
    int buf[SBUF_COUNT];
    uint64_t off[SBUF_COUNT];
} hier_part;

/* Fills part->args for a sub-call of coll on group_size ranks (this rank is `index`). */
void hier_part_init(hier_part *part, const collie_coll_args *a, int coll, int group_size, int index,
                    int root, bool in_place);
/* Chooses the sub-call's algorithm (collie's selection), builds it and appends its rounds
 * to s with peers and buffers mapped. */
void hier_append(collie_schedule *s, hier_part *part);

/* The layout, this rank's node members (rank order) and the heads of all nodes (the root
 * on the root's node; for allreduce the first ranks): false (s->error set) when out of
 * memory.  Free both arrays. */
bool hier_groups(collie_schedule *s, const collie_coll_args *a, hier_layout *l, int **node,
                 int **heads);
/* One step: a sub-call of coll among `members` (this rank is index), appended to s.
 * in_scratch: this rank has no receive buffer (a non-root of reduce): the sub-call's
 * output goes to scratch [0, bytes), and its own scratch follows. */
void hier_step(collie_schedule *s, const collie_coll_args *a, int coll, const int *members, int size,
               int index, int root, bool in_place, bool in_scratch);

#endif
