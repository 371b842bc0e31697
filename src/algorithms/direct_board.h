/*
 * direct_board.h — the board protocol of the direct-access drivers (direct_board.c): post
 * a call, wait for every rank's post or done, check that all posted the same call, read a
 * peer's buffer with the kernel copy.  All functions take the request of the call; the
 * waits never block (COLLIE_TIMEOUT, with req->blocked_peer and the team's wait word set).
 */
#ifndef COLLIE_DIRECT_BOARD_H
#define COLLIE_DIRECT_BOARD_H

#include <stdbool.h>
#include <stdint.h>

struct collie_request;

/* Posts this call on the board: `in` (in_len bytes) is what peers read of this rank,
 * `out` (out_len bytes) what they may write; each with its collie_alloc reference when it
 * lies in registered memory.  Then bumps `ready` and notes the peers to wake. */
void direct_post(struct collie_request *req, const void *in, uint64_t in_len, const void *out,
                 uint64_t out_len);
/* Has rank q's `ready` (or `done`) reached this call?  Else q is noted as waited for. */
bool direct_reached(struct collie_request *req, int q, bool ready);
/* COLLIE_OK once every rank's `ready` (`done`) reached the call; COLLIE_TIMEOUT while
 * waiting; COLLIE_ERR_MISMATCH when the rank waited for sent a message of another call. */
int direct_all_reached(struct collie_request *req, bool ready);
/* Has rank q posted this very call (its board entry, or its board history when it has
 * already posted a later call)? */
bool direct_posted_this_call(const struct collie_request *req, int q);
/* Is q's receive buffer of this very call collie_alloc memory?  False also when q's entry
 * already holds a later call (read between two reads of its `ready` and check words;
 * direct_post stores the check first). */
bool direct_recv_mapped_this_call(const struct collie_request *req, int q);
/* Once all posted: COLLIE_ERR_MISMATCH (naming both calls) when a rank posted another call. */
int direct_check_calls(struct collie_request *req);
/* The mismatch error for rank q whose board holds another call (`how`: "posted", "did"). */
int direct_posted_other(struct collie_request *req, int q, const char *how);
/* COLLIE_ERR_MISMATCH (with a message) when q's channel to this rank holds a chunk of this
 * call: q runs another collective here; else COLLIE_OK. */
int direct_check_channel(struct collie_request *req, int q);
/* Marks this rank done with the call (it reads and writes no other rank's buffer any more). */
void direct_mark_done(struct collie_request *req);
/* A bcast after this rank marked itself done: the root waits until every rank is done
 * and then checks their calls (COLLIE_ERR_MISMATCH naming both calls when a rank marked
 * another call of the same number done: ranks that disagree about the root); another
 * rank returns COLLIE_OK at once.  COLLIE_TIMEOUT while the root waits. */
int direct_bcast_root_done(struct collie_request *req);
/* Reads len bytes at address addr of rank q (as posted) into `into` with process_vm_readv;
 * COLLIE_ERR_PEER / COLLIE_ERR_ARG naming the rank when it fails. */
int direct_read(struct collie_request *req, int q, uint64_t addr, void *into, uint64_t len);
/* The same from process `pid` (rank q's, as it told otherwise than on the board). */
int direct_read_pid(struct collie_request *req, int q, int pid, uint64_t addr, void *into,
                    uint64_t len);
/* The error for a failed transfer from or to rank q (errno err; 0: a short transfer). */
int direct_peer_io_failed(const struct collie_request *req, int q, const char *what, int err);

#endif
