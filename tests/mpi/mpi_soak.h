/*
 * mpi_soak.h — what the four files of mpi_soak share: mpi_soak.c (the sequence and each
 * call's plan), mpi_soak_forms.c (batches of MPI_I* calls, the persistent set, completion),
 * mpi_soak_data.c (element kinds, values, datatypes, ops, buffers, the expected results and
 * the checks) and mpi_soak_calls.c (the v forms' layouts, the regions of input and results,
 * the MPI calls in their three forms).
 *
 * Every buffer is seen as "units" of 2 elements of the call's base type (MPI_INT64_T, ...):
 * a side passes them as 2 base elements each (S_PLAIN), as MPI_Type_contiguous(2) (S_CONTIG)
 * or as a vector of 2 elements with a hole after each (S_VECTOR, extent 4 elements), so
 * that ranks may pass different datatypes of one type signature.  Element e of unit u sits
 * at slot u * extent + offset[e] of the buffer; a hole's bytes must stay as they were.
 */
#ifndef MPI_SOAK_H
#define MPI_SOAK_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mpi_pcoll.h"

#if !HAVE_PCOLL
#error "mpi_soak needs persistent collectives (MPI-4 MPI_*_init or Open MPI's MPIX_*_init)"
#endif

enum coll { C_ALLREDUCE, C_REDUCE, C_BCAST, C_BARRIER, C_ALLGATHER, C_ALLGATHERV, C_RSB, C_RS,
            C_ALLTOALL, C_ALLTOALLV, C_GATHER, C_GATHERV, C_SCATTER, C_SCATTERV, C_SCAN,
            C_EXSCAN, C_COUNT };
enum form { F_BLOCKING, F_NONBLOCKING, F_PERSISTENT };
/* base types: MPI_INT64_T, MPI_LONG_LONG, MPI_INT, MPI_DOUBLE, MPI_LONG_DOUBLE */
enum kind { K_I64, K_LL, K_INT, K_DBL, K_LDBL, K_COUNT };
/* ops: built-in sum, max, bxor; user ops: min (commutative), a 2x2 matrix product of
 * 16-bit entries packed in an int64 (not commutative: checked in rank order) */
enum op { O_SUM, O_MAX, O_BXOR, O_UMIN, O_UMAT, O_COUNT };
enum shape { S_PLAIN, S_CONTIG, S_VECTOR, S_COUNT };
/* communicators: the world, a dup, even/odd halves, halves with keys reversing the order,
 * all ranks but 0 (MPI_Comm_create), and a dup made for the call and freed after it */
enum comm_id { M_WORLD, M_DUP, M_HALF, M_REV, M_SOME, M_TEMP, M_COUNT };

#define UNIT 2                  /* elements per unit */
#define MAX_BATCH 4
#define GUARD_BYTES 64          /* after each buffer: must keep its fill */

typedef struct side {
    int shape;
    size_t units;               /* units the buffer spans (0: no buffer) */
    unsigned char *base, *buf;  /* malloc'd, and the buffer at its offset in it */
    unsigned char *snap;        /* base's bytes as filled before the call */
    size_t bytes;               /* from base: offset + buffer + guard */
    MPI_Datatype type;
    bool fresh;                 /* type made for this call (freed after it) */
} side;

typedef struct call {
    int step;                   /* whose draws shape the call */
    int vstep;                  /* whose draws give its values (a persistent start's) */
    int coll, form, comm_id, kind, op, root, in_place;
    bool member;                /* this rank is in the call's communicator */
    size_t n;                   /* units per rank (per block for the block collectives) */
    MPI_Comm comm;
    int rank, size;
    side s, r;
    int *cnt, *displ;           /* v forms (units): receive side (scatterv: the root's send) */
    int *scnt, *sdispl;         /* alltoallv's send side */
    int *mcnt, *mdispl, *mscnt, *msdispl;   /* as passed to MPI: in the side's elements */
    int rshift, sshift;         /* units the buffer passed is after buf (negative displs) */
    bool vnull;                 /* a non-root of gatherv/scatterv passes NULL arrays */
    MPI_Request req;
    MPI_Op mop;
    bool op_fresh;              /* mop made for this call */
    bool ordered;               /* persistent, with the start-order assertion */
} call;

/* what a region of a buffer must hold after the call: values of rank r from unit `from`
 * on, the reduction over ranks lo..hi-1 from unit `from` on, or anything */
enum { R_VALUE, R_REDUCE, R_ANY };
typedef struct region {
    size_t at, units;           /* in the buffer, units */
    int src, r, lo, hi;
    size_t from;
} region;

extern uint64_t seed;
extern int world_rank, world_size;
extern long failures;
extern int verbose;            /* MPI_SOAK_VERBOSE */
extern bool preloaded;          /* libcollie_mpi serves this run */
extern MPI_Info ordered_info;   /* the start-order assertion, or MPI_INFO_NULL */

uint64_t mix(uint64_t x);
uint64_t draw(int step, int what);        /* the same on every rank */
uint64_t draw_mine(int step, int what);   /* this rank's own */

/* mpi_soak_data.c */
extern const char *const coll_names[C_COUNT];
void data_init(void);
void data_finalize(void);
bool is_reduction(int coll);
bool is_rooted(int coll);
bool is_vform(int coll);
size_t elem_size(int kind);
bool op_allowed(int kind, int op);
MPI_Op op_handle(call *c);      /* a fresh user op sometimes (c->op_fresh) */
MPI_Datatype side_type(const call *c, side *x);   /* makes fresh types when x->fresh */
int side_count(const side *x, size_t units);      /* units as the MPI count */
int side_extent(const side *x);                   /* slots per unit */
void free_fresh(call *c);       /* the fresh types and op, after the call */
void soak_prepare(call *c);     /* buffers, filled */
void soak_fill(call *c);        /* input and snapshot again (a persistent start) */
void soak_check(const call *c);
void soak_release(call *c);
void describe(const call *c, char *out, size_t len);
void fail_at(const call *c, const char *what, size_t at, long long got, long long want);

/* mpi_soak_calls.c */
bool v_layout(call *c);
void v_free(call *c);
int v_displ(const call *c, int owner, int q, bool send);   /* a rank's layout, units */
int v_count(const call *c, int from, int to);              /* units from -> to */
void extents(const call *c, size_t *ns, size_t *nr);
int regions(const call *c, bool out, region *rg);          /* out: the results, else input */
int issue(call *c);             /* in c->form; returns MPI's code */

/* mpi_soak.c: a call's plan (as every rank draws it), set-up (buffers, layout, a
 * communicator made for it), start (and the freeing of what was made for it alone) and
 * finish (check, release); an MPI error ends the run */
MPI_Comm comm_of(int comm_id);
void must(int rc, const call *c, const char *what);
void plan(call *c, int step, int form);
void print_call(const call *c);
void setup(call *c);
void start_call(call *c);
void finish_call(call *c);

/* mpi_soak_forms.c */
#define PSET 5                  /* persistent requests alive at once */
#define MAX_REQS (MAX_BATCH + PSET + 2)
typedef struct pers_set {
    call pc[PSET];
    bool alive[PSET];
} pers_set;
void own_order(int *order, int k, int step, int what);
void complete_all(const MPI_Request *reqs, int k, int step);
void run_batch(int step, int k, pers_set *ps);
void pers_begin(pers_set *ps, int epoch);
void pers_end(pers_set *ps);
void pers_run(pers_set *ps, int step);

#endif
