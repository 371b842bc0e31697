/*
 * mpi_team.c — a collie team per MPI communicator.
 *
 * The first collective collie serves on a communicator creates its team, collectively
 * (every rank of the communicator is inside the same collective): the ranks find with
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) whether they share one node; if so rank 0 names a
 * shared-memory segment and broadcasts the name, and the shm transport is built with an
 * MPI_Allreduce(MIN) bootstrap so a failure anywhere fails everywhere at once.  The team
 * is cached as a communicator attribute (or the reason collie cannot serve it, so that
 * is decided once); the attribute's delete callback frees it at MPI_Comm_free, and
 * MPI_Finalize frees whatever is left.  Duplicated communicators get their own team.
 *
 * A communicator spanning several nodes (MPI_COMM_TYPE_SHARED, or COLLIE_MPI_NODE_SPLIT=k
 * consecutive ranks per "node" for tests) gets a team over the shm+mpi transport
 * (mpi_transport_mixed.c), on which the hierarchical algorithms are chosen.
 *
 * Also here: collie_team_from_mpi, the world provider for collie_init under mpirun, and
 * the COLLIE_MPI_LOG=1 log of which calls went to collie and which to PMPI (the summary
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

typedef struct comm_team {
    collie_team_t *team;          /* NULL: collie does not serve this communicator */
    const char *why;              /* the reason, when team is NULL */
    struct comm_team *next;       /* all live records (freed at MPI_Finalize) */
} comm_team;

static int keyval = MPI_KEYVAL_INVALID;
static comm_team *all_teams;
static int log_on = -1;
static _Atomic unsigned segments_made;
/* Threads on different communicators (MPI_THREAD_MULTIPLE) share the list of records and
 * the keyval; a team's own creation (collectives on its communicator) runs unlocked. */
static pthread_mutex_t teams_lock = PTHREAD_MUTEX_INITIALIZER;

static void setup_once(void) {
    collie_log_init();
    collie_select_init_from_env();
    collie_blocking_wait = cm_blocking_wait;   /* mpi_progress.c */
    log_on = cm_log_mode();
}

void cm_setup(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, setup_once);
}

bool cm_logging(void) { return log_on == CM_LOG_CALLS; }

static int world_rank(void) {
    int r = -1, up = 0;
    PMPI_Initialized(&up);
    if (up)
        PMPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

void cm_log(const cm_call *c, const char *where, const char *why) {
    if (log_on == CM_LOG_SUMMARY) {
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

static bool unlink_record(comm_team *rec) {
    bool found = false;
    pthread_mutex_lock(&teams_lock);
    for (comm_team **pp = &all_teams; *pp && !found; pp = &(*pp)->next)
        if (*pp == rec) {
            *pp = rec->next;
            found = true;
        }
    pthread_mutex_unlock(&teams_lock);
    return found;
}

static void free_record(comm_team *rec) {
    if (rec->team)
        collie_team_destroy(rec->team);
    free(rec);
}

static int delete_team(MPI_Comm comm, int key, void *value, void *extra) {
    comm_team *rec = value;
    if (unlink_record(rec))   /* not yet freed by cm_free_all_teams */
        free_record(rec);
    return MPI_SUCCESS;
}

void cm_free_all_teams(void) {
    while (all_teams) {
        comm_team *rec = all_teams;
        all_teams = rec->next;
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

/* The shm transport of comm, whose ranks share a node (collective). */
int cm_shm_transport(MPI_Comm comm, collie_transport **tp, const char **why) {
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
    collie_shm_config cfg = { rank, size, job, agree_min, &comm };
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

/* A transport over all of comm (collective): shm on one node, else shm+mpi. */
static int transport_of(MPI_Comm comm, collie_transport **tp, const char **why) {
    MPI_Comm node;
    *tp = NULL;
    if (split_nodes(comm, &node) != MPI_SUCCESS) {
        *why = "MPI_Comm_split_type failed";
        return COLLIE_ERR_TRANSPORT;
    }
    if (node == MPI_COMM_NULL)
        return cm_shm_transport(comm, tp, why);
    int st = cm_mixed_transport_create(comm, node, tp);
    PMPI_Comm_free(&node);
    if (st)
        *why = "the shm+mpi transport failed (see COLLIE_LOG=error)";
    return st;
}

static bool ibarrier_done(void *arg) {
    int flag = 0;
    PMPI_Test((MPI_Request *)arg, &flag, MPI_STATUS_IGNORE);
    return flag != 0;
}

/* The team's set-up is a series of blocking collectives on comm (split by node, name the
 * segment, agree at every step).  A rank may arrive here while collie requests of other
 * communicators are pending on which the other ranks still wait (they join comm's first
 * collective only after those finish): blocked inside PMPI, this rank would not move
 * them.  So every rank first meets the others in a nonblocking barrier, waited for in the
 * loop that progresses collie's requests (mpi_progress.c); after it every rank of comm is
 * in the set-up.  Always, not only with requests pending: every rank must make the same
 * calls on comm. */
static void meet_for_setup(MPI_Comm comm) {
    MPI_Request r;
    if (PMPI_Ibarrier(comm, &r) != MPI_SUCCESS)
        return;
    if (!cm_wait_until(ibarrier_done, &r))
        PMPI_Wait(&r, MPI_STATUS_IGNORE);
}

static comm_team *make_record(MPI_Comm comm) {
    comm_team *rec = calloc(1, sizeof *rec);
    if (!rec)
        return NULL;
    meet_for_setup(comm);
    collie_transport *tp = NULL;
    if (transport_of(comm, &tp, &rec->why) == COLLIE_OK && collie_team_create(tp, &rec->team) != COLLIE_OK) {
        tp->ops->destroy(tp);
        rec->why = "cannot create the team (out of memory)";
    }
    pthread_mutex_lock(&teams_lock);
    rec->next = all_teams;
    all_teams = rec;
    pthread_mutex_unlock(&teams_lock);
    return rec;
}

collie_team_t *cm_team(MPI_Comm comm, const char **why) {
    int inter = 0, found = 0;
    comm_team *rec = NULL;
    if (comm == MPI_COMM_NULL) {
        *why = "MPI_COMM_NULL";
        return NULL;
    }
    PMPI_Comm_test_inter(comm, &inter);
    if (inter) {
        *why = "intercommunicator";
        return NULL;
    }
    cm_setup();
    pthread_mutex_lock(&teams_lock);
    if (keyval == MPI_KEYVAL_INVALID)
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_team, &keyval, NULL);
    pthread_mutex_unlock(&teams_lock);
    PMPI_Comm_get_attr(comm, keyval, &rec, &found);
    if (!found) {
        rec = make_record(comm);
        if (!rec) {
            *why = "out of memory";
            return NULL;
        }
        PMPI_Comm_set_attr(comm, keyval, rec);
    }
    if (!rec->team)
        *why = rec->why;
    return rec->team;
}

int cm_error(const cm_call *c, int status) {
    int rank = world_rank();
    fprintf(stderr, "collie_mpi: rank %d: %s failed in collie: %s\n", rank, c->fn,
            collie_last_error());
    int code = status == COLLIE_ERR_ARG ? MPI_ERR_ARG : MPI_ERR_OTHER;
    PMPI_Comm_call_errhandler(c->comm, code);
    return code;
}

/* ---- public: collie_team_from_mpi, collie_init under mpirun ------------------------------ */

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

static bool initialised_mpi;

static int world_create(collie_transport **tp) {
    int up = 0;
    PMPI_Initialized(&up);
    if (!up) {
        if (PMPI_Init(NULL, NULL) != MPI_SUCCESS)
            return collie_fail(COLLIE_ERR_TRANSPORT, "collie_init: MPI_Init failed");
        initialised_mpi = true;
    }
    cm_setup();
    const char *why = NULL;
    int st = transport_of(MPI_COMM_WORLD, tp, &why);
    if (st && why)
        collie_log(COLLIE_LOG_ERROR, "collie_init: MPI_COMM_WORLD: %s", why);
    return st;
}

static void world_finalize(void) {
    if (!initialised_mpi)
        return;
    initialised_mpi = false;
    cm_log_summary();
    cm_free_all_teams();
    cm_free_user_ops();
    PMPI_Finalize();
}

__attribute__((constructor)) static void install_world_provider(void) {
    collie_world_provider p = { world_create, world_finalize };
    collie_set_world_provider(&p);
}
