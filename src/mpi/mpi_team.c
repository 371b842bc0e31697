/*
 * mpi_team.c — a collie team per MPI communicator.
 *
 * A communicator's team is created inside the call that made the communicator: MPI_Init
 * (MPI_Init_thread) for MPI_COMM_WORLD, and the constructors (MPI_Comm_dup, _split,
 * _create, MPI_Cart_create, …; mpi_progress_ctor.c) for the others — collectively, every
 * rank of the communicator being inside that call.  Not in its first collective: there the
 * set-up would make every rank wait for every other, and a program whose non-root
 * MPI_Reduce (or root MPI_Bcast) returns before the others arrive, as it does in MPICH and
 * Open MPI for small messages, then deadlocked (rank 0: MPI_Reduce to root 1, then
 * MPI_Send to 1; rank 1: MPI_Recv from 0, then MPI_Reduce).  A communicator made without
 * those calls (MPI_Comm_idup, or before libcollie_mpi was loaded) still gets its team in
 * its first collective.  The set-up: the ranks find with
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) whether they share one node; if so rank 0 names a
 * shared-memory segment and broadcasts the name, and the shm transport is built with an
 * MPI_Allreduce(MIN) bootstrap so a failure anywhere fails everywhere at once.  The team
 * is cached as a communicator attribute (or the reason collie cannot serve it, so that
 * is decided once), together with what every call needs (rank, size, whether it is an
 * intercommunicator); a map from the handle (mpi_cache.c) finds the record without asking
 * MPI.  The attribute's delete callback frees the record and drops it from the map at
 * MPI_Comm_free (MPI reuses handles), and MPI_Finalize frees whatever is left.
 * Duplicated communicators get their own team.
 *
 * A communicator spanning several nodes (MPI_COMM_TYPE_SHARED, or COLLIE_MPI_NODE_SPLIT=k
 * consecutive ranks per "node" for tests) gets a team over the shm+mpi transport
 * (mpi_transport_mixed.c), on which the hierarchical algorithms are chosen.
 *
 * A record's team splits through its communicator (mpi_split.c), and so does the world of
 * collie_init under mpirun (MPI_COMM_WORLD).
 *
 * Also here: collie_team_from_mpi and the COLLIE_MPI_LOG=1 log of which calls went to collie and which to PMPI (the summary
 * table of COLLIE_MPI_LOG=summary is in mpi_log.c).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "collie_mpi.h"
#include "core/internal.h"
#include "mpi/mpi_layer.h"
#include "mpi/mpi_transport.h"

static int keyval = MPI_KEYVAL_INVALID;
static cm_comm *all_teams;
static cm_map comms;              /* handle → record, for the live communicators */
int cm_log_on = -1;               /* written once, under cm_setup's pthread_once */
bool cm_off;
static _Atomic unsigned segments_made;
/* Threads on different communicators (MPI_THREAD_MULTIPLE) share the list of records, the
 * handle map (whose lookups also write its last-hit slot) and the keyval; a team's own
 * creation (collectives on its communicator) runs unlocked. */
static pthread_mutex_t teams_lock = PTHREAD_MUTEX_INITIALIZER;

static void setup_once(void) {
    collie_log_init();
    collie_select_init_from_env();
    collie_blocking_wait = cm_blocking_wait;   /* mpi_progress.c */
    collie_outside_progress = cm_outside_progress;   /* mpi_transport.c */
    cm_log_on = cm_log_mode();
    cm_off = collie_env_int("COLLIE_MPI", 1) == 0;
}

void cm_setup(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, setup_once);
}

static int world_rank(void) {
    int r = -1, up = 0;
    PMPI_Initialized(&up);
    if (up)
        PMPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

void cm_log_line(const cm_call *c, const char *where, const char *why) {
    if (cm_log_on == CM_LOG_SUMMARY) {
        char route[160];
        snprintf(route, sizeof route, "%s%s%s%s", where, why ? " (" : "", why ? why : "",
                 why ? ")" : "");
        cm_log_count(c->fn, route);
        return;
    }
    if (!cm_logging())
        return;
    char tname[MPI_MAX_OBJECT_NAME] = "-";
    int len = 0;
    if (c->coll != COLL_BARRIER && c->dtype != MPI_DATATYPE_NULL)
        PMPI_Type_get_name(c->dtype, tname, &len);
    int size = 0;
    PMPI_Comm_size(c->comm, &size);
    fprintf(stderr, "collie_mpi: rank %d: %s(count=%d, %s, %d ranks) -> %s%s%s%s\n",
            world_rank(), c->fn, c->count, len ? tname : "-", size, where, why ? " (" : "",
            why ? why : "", why ? ")" : "");
}

/* ---- the attribute ---------------------------------------------------------------------- */

/* Takes rec off the list of records; the caller holds teams_lock. */
static bool unlink_record(cm_comm *rec) {
    bool found = false;
    for (cm_comm **pp = &all_teams; *pp; pp = &(*pp)->next)
        if (*pp == rec) {
            *pp = rec->next;
            found = true;
            break;
        }
    return found;
}

static void free_record(cm_comm *rec) {
    if (rec->team)
        collie_team_destroy(rec->team);
    if (rec->freed && rec->errhandler != MPI_ERRHANDLER_NULL)
        PMPI_Errhandler_free(&rec->errhandler);
    free(rec);
}

static int delete_team(MPI_Comm comm, int key, void *value, void *extra) {
    cm_comm *rec = value;
    cm_memo_forget();
    pthread_mutex_lock(&teams_lock);
    if (cm_map_get(&comms, cm_comm_key(comm)) == rec)
        cm_map_del(&comms, cm_comm_key(comm));
    bool live = unlink_record(rec);   /* not yet freed by cm_free_all_teams */
    pthread_mutex_unlock(&teams_lock);
    if (live && rec->nrequests > 0) {
        rec->freed = true;            /* freed by cm_comm_release with its last request */
        /* the handle dies with this call (MPICH hands it to the next communicator at once):
         * errors of the pending requests go to the handler it has now (cm_error) */
        rec->errhandler = MPI_ERRHANDLER_NULL;
        if (PMPI_Comm_get_errhandler(comm, &rec->errhandler) != MPI_SUCCESS)
            rec->errhandler = MPI_ERRHANDLER_NULL;
    } else if (live)
        free_record(rec);
    return MPI_SUCCESS;
}

/* Requests are made and freed by one thread (under MPI_THREAD_MULTIPLE split-phase and
 * persistent calls go to PMPI), so the count needs no lock. */
void cm_comm_hold(const cm_comm *c) {
    ((cm_comm *)c)->nrequests++;   /* records are the layer's own: never const objects */
}

void cm_comm_release(const cm_comm *c) {
    cm_comm *rec = (cm_comm *)c;
    if (--rec->nrequests == 0 && rec->freed)
        free_record(rec);
}

void cm_free_all_teams(void) {
    cm_memo_forget();
    pthread_mutex_lock(&teams_lock);
    cm_map_clear(&comms, NULL);
    cm_comm *list = all_teams;
    all_teams = NULL;
    pthread_mutex_unlock(&teams_lock);
    while (list) {
        cm_comm *rec = list;
        list = rec->next;
        free_record(rec);
    }
}

/* ---- building a transport from a communicator ------------------------------------------- */

static int agree_min(void *ctx, int status) {
    int all = status;
    PMPI_Allreduce(&status, &all, 1, MPI_INT, MPI_MIN, *(MPI_Comm *)ctx);
    return all;
}

/* The ranks of my node: MPI_COMM_TYPE_SHARED, or consecutive groups of
 * COLLIE_MPI_NODE_SPLIT ranks (to test the multi-node paths on one machine). */
static int node_split(MPI_Comm comm, MPI_Comm *node) {
    long long k = collie_env_int("COLLIE_MPI_NODE_SPLIT", 0);
    int rank;
    PMPI_Comm_rank(comm, &rank);
    if (k > 0)
        return PMPI_Comm_split(comm, (int)(rank / k), rank, node);
    return PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, node);
}

/* The shm transport of comm, whose ranks share a node (collective); part_of_nodes: comm is
 * one node of a team that spans several, whose nodes must use one slot geometry. */
int cm_shm_transport(MPI_Comm comm, bool part_of_nodes, collie_transport **tp, const char **why) {
    int rank, size;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    *tp = NULL;
    if (size == 1)
        return collie_self_create(tp);
    char job[64] = { 0 };
    if (rank == 0)
        snprintf(job, sizeof job, "mpi-%d-%u-%llx", (int)getpid(), segments_made++,
                 (unsigned long long)(collie_now_ns() & 0xffffffffffull));
    PMPI_Bcast(job, (int)sizeof job, MPI_CHAR, 0, comm);
    collie_shm_config cfg = { rank, size, job, agree_min, &comm, NULL, part_of_nodes };
    int st = collie_shm_create_with(&cfg, tp);
    if (st)
        *why = "the shared-memory transport failed (see COLLIE_LOG=error)";
    return st;
}

/* Splits comm by node: *node is MPI_COMM_NULL when all ranks share one node. */
static int split_nodes(MPI_Comm comm, MPI_Comm *node) {
    int size, node_size = 0, mine, all = 0;
    PMPI_Comm_size(comm, &size);
    *node = MPI_COMM_NULL;
    if (size == 1)
        return MPI_SUCCESS;
    int rc = node_split(comm, node);
    if (rc != MPI_SUCCESS)
        return rc;
    PMPI_Comm_size(*node, &node_size);
    mine = node_size == size;
    PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
    if (all)
        PMPI_Comm_free(node);
    return MPI_SUCCESS;
}

/* one_node: the caller knows that every rank of comm shares one node (no split). */
static int transport_of(MPI_Comm comm, bool one_node, collie_transport **tp, const char **why) {
    MPI_Comm node = MPI_COMM_NULL;
    *tp = NULL;
    if (!one_node && split_nodes(comm, &node) != MPI_SUCCESS) {
        *why = "MPI_Comm_split_type failed";
        return COLLIE_ERR_TRANSPORT;
    }
    if (node == MPI_COMM_NULL)
        return cm_shm_transport(comm, false, tp, why);
    int st = cm_mixed_transport_create(comm, node, tp);
    PMPI_Comm_free(&node);
    if (st)
        *why = "the shm+mpi transport failed (see COLLIE_LOG=error)";
    return st;
}

int cm_transport_of(MPI_Comm comm, collie_transport **tp, const char **why) {
    return transport_of(comm, false, tp, why);
}

static bool request_done(void *arg) {
    int flag = 0;
    PMPI_Test((MPI_Request *)arg, &flag, MPI_STATUS_IGNORE);
    return flag != 0;
}

/* The team's set-up is a series of blocking collectives on comm (split by node, name the
 * segment, agree at every step).  A rank may arrive here while collie requests of other
 * communicators are pending on which the other ranks still wait (they join comm's first
 * collective only after those finish): blocked inside PMPI, this rank would not move
 * them.  So every rank first meets the others in a nonblocking allreduce, waited for in the
 * loop that progresses collie's requests (mpi_progress.c); after it every rank of comm is
 * in the set-up.  Always, not only with requests pending: every rank must make the same
 * calls on comm.  The meeting also agrees on whether every rank is ready (ok: it has its
 * record), as all_ok does. */
static bool meet_for_setup(MPI_Comm comm, bool ok) {
    int mine = ok, all = 0;
    MPI_Request r;
    if (PMPI_Iallreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm, &r) != MPI_SUCCESS)
        return false;
    if (!cm_wait_until(request_done, &r))
        PMPI_Wait(&r, MPI_STATUS_IGNORE);
    return all != 0;
}

/* Do all ranks of comm say ok?  (collective; also where a rank's own answer is no: a
 * rank that skipped the set-up's collectives, or kept no team where the others kept one,
 * left them waiting in MPI or in collie for good) */
static bool all_ok(MPI_Comm comm, bool ok) {
    int mine = ok, all = 0;
    PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
    return all != 0;
}

/* The record of a communicator for which a rank could not allocate one: no team (PMPI
 * serves it at every rank, as the set-up agreed), never freed. */
static cm_comm no_memory = { .why = "out of memory at the set-up" };

/* "collie", or "collie over shm+mpi[-rma]" when the team spans nodes. */
static const char *where_of(const collie_team_t *team) {
    const char *name = team->tp->ops->name;
    if (strcmp(name, "shm") == 0 || strcmp(name, "loop") == 0)
        return "collie";
    return strcmp(name, "shm+mpi") == 0 ? "collie over shm+mpi" : "collie over shm+mpi-rma";
}

/* A new record for comm: its team (collective), or the reason there is none; one_node as
 * for transport_of. */
static cm_comm *make_record(MPI_Comm comm, bool one_node) {
    cm_comm *rec = calloc(1, sizeof *rec);
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter) {                      /* no set-up, no collective */
        if (rec)
            rec->why = "intercommunicator";
    } else {
        /* every rank has its record, or none sets up a team (each one's failures below
         * are agreed on the same way: the set-up is collective to the end) */
        if (!meet_for_setup(comm, rec != NULL)) {
            if (!rec)
                return &no_memory;
            rec->why = "out of memory at the set-up (another rank)";
        } else {
            collie_transport *tp = NULL;
            bool made = transport_of(comm, one_node, &tp, &rec->why) == COLLIE_OK;   /* agreed */
            if (made && collie_team_create(tp, &rec->team) != COLLIE_OK)
                rec->why = "cannot create the team (out of memory)";
            /* Destroyed only after the agreement, at every rank alike: a transport's
             * release starts collectives every rank must start (the p2p channels' count
             * exchange, the RMA memory's MPI_Ibarrier) */
            if (made && !all_ok(comm, rec->team != NULL)) {
                if (rec->team) {
                    collie_team_destroy(rec->team);   /* and its transport */
                    rec->team = NULL;
                    rec->why = "another rank could not create the team (out of memory)";
                } else {
                    tp->ops->destroy(tp);
                }
            }
        }
    }
    if (!rec)
        return &no_memory;
    PMPI_Comm_rank(comm, &rec->rank);
    PMPI_Comm_size(comm, &rec->size);
    if (rec->team) {
        rec->where = where_of(rec->team);
        cm_team_set_maker(rec->team, &rec->split, comm, true);
    }
    pthread_mutex_lock(&teams_lock);
    rec->next = all_teams;
    all_teams = rec;
    pthread_mutex_unlock(&teams_lock);
    return rec;
}

/* The record of comm in the handle map, or NULL. */
static cm_comm *mapped(MPI_Comm comm) {
    pthread_mutex_lock(&teams_lock);
    cm_comm *rec = cm_map_get(&comms, cm_comm_key(comm));
    pthread_mutex_unlock(&teams_lock);
    return rec;
}

static const cm_comm *record_of(MPI_Comm comm, bool one_node, const char **why) {
    cm_comm *rec = mapped(comm);
    if (rec)
        return rec;
    if (comm == MPI_COMM_NULL) {
        *why = "MPI_COMM_NULL";
        return NULL;
    }
    int found = 0;
    cm_setup();
    pthread_mutex_lock(&teams_lock);
    if (keyval == MPI_KEYVAL_INVALID)
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_team, &keyval, NULL);
    pthread_mutex_unlock(&teams_lock);
    PMPI_Comm_get_attr(comm, keyval, &rec, &found);
    if (!found) {
        rec = make_record(comm, one_node);
        if (rec)
            PMPI_Comm_set_attr(comm, keyval, rec);
    }
    if (!rec) {
        *why = "out of memory";
        return NULL;
    }
    /* the map only saves asking MPI for the attribute: without its entry (out of memory)
     * the record still serves (NULL here sent this rank's calls to PMPI while the other
     * ranks' went to collie) */
    pthread_mutex_lock(&teams_lock);
    (void)cm_map_put(&comms, cm_comm_key(comm), rec);
    pthread_mutex_unlock(&teams_lock);
    return rec;
}

const cm_comm *cm_comm_of(MPI_Comm comm, const char **why) {
    return record_of(comm, false, why);
}

/* Does parent's record (if it has one yet; never made here) hold a team on one node?  Then
 * so are the ranks of any communicator made from it, and the set-up need not split by
 * node: MPI_Comm_split_type makes a communicator, and Open MPI's context-id agreement
 * deadlocked when threads made communicators from one parent at once (MPICH's
 * threads/comm/comm_create_group_threads2) while others split theirs.  Every rank of
 * the new communicator decides the same: the parent's record was made by a collective
 * call on it that every rank made before this one. */
static bool parent_on_one_node(MPI_Comm parent) {
    cm_comm *rec = parent == MPI_COMM_NULL ? NULL : mapped(parent);
    if (!rec || !rec->team)
        return false;
    const char *name = rec->team->tp->ops->name;
    return strcmp(name, "shm") == 0 || strcmp(name, "loop") == 0;
}

void cm_team_early(MPI_Comm comm, MPI_Comm parent) {
    if (comm == MPI_COMM_NULL)
        return;
    cm_setup();
    if (cm_disabled())
        return;
    const char *why = NULL;   /* no team (an intercommunicator, …): PMPI, saying why */
    (void)record_of(comm, parent_on_one_node(parent), &why);
}

int cm_made(int rc, MPI_Comm parent, const MPI_Comm *newcomm) {
    if (rc == MPI_SUCCESS)
        cm_team_early(*newcomm, parent);
    return rc;
}

collie_team_t *cm_team(MPI_Comm comm, const char **why) {
    const cm_comm *rec = cm_comm_of(comm, why);
    if (rec && !rec->team)
        *why = rec->why;
    return rec ? rec->team : NULL;
}

/* Calls the error handler of a communicator the program has freed (its requests outlive
 * it): on a private communicator given that handler, since the handle is no longer the
 * program's (MPICH reuses it at once; the handler then ran on the wrong communicator, or
 * MPI_Comm_call_errhandler failed on the invalid handle, fatally). */
static void call_freed_errhandler(MPI_Errhandler eh, int code) {
    if (eh == MPI_ERRORS_RETURN)
        return;
    MPI_Comm self = MPI_COMM_NULL;
    if (eh == MPI_ERRHANDLER_NULL || PMPI_Comm_dup(MPI_COMM_SELF, &self) != MPI_SUCCESS) {
        PMPI_Abort(MPI_COMM_WORLD, code);   /* the default handler's effect */
        return;
    }
    PMPI_Comm_set_errhandler(self, eh);
    PMPI_Comm_call_errhandler(self, code);
    PMPI_Comm_free(&self);
}

int cm_error(const cm_call *c, int status) {
    int rank = world_rank();
    fprintf(stderr, "collie_mpi: rank %d: %s failed in collie: %s\n", rank, c->fn,
            collie_last_error());
    int code = status == COLLIE_ERR_ARG ? MPI_ERR_ARG : MPI_ERR_OTHER;
    if (c->cc && c->cc->freed)
        call_freed_errhandler(c->cc->errhandler, code);
    else
        PMPI_Comm_call_errhandler(c->comm, code);
    return code;
}

/* ---- public: collie_team_from_mpi (collie_init under mpirun: mpi_world.c) ---------------- */

int collie_team_from_mpi(MPI_Comm comm, collie_team_t **team) {
    if (!team)
        return collie_fail(COLLIE_ERR_ARG, "collie_team_from_mpi: team (output) is NULL");
    *team = NULL;
    int up = 0;
    PMPI_Initialized(&up);
    if (!up)
        return collie_fail(COLLIE_ERR_ARG, "collie_team_from_mpi: call MPI_Init first");
    const char *why = NULL;
    *team = cm_team(comm, &why);
    if (*team)
        return COLLIE_OK;
    return collie_fail(COLLIE_ERR_UNSUPPORTED, "collie_team_from_mpi: %s", why ? why : "unknown");
}
