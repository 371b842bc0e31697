/*
 * mp_teams.h — shared by the sub-team tests (mp_teams.c: splits and their collectives;
 * mp_teams_misuse.c: misuse, mismatched calls, a dead rank).
 */
#ifndef MP_TEAMS_H
#define MP_TEAMS_H

#include <stdbool.h>
#include "collie.h"

extern int mt_rank, mt_size, mt_failures;

/* FAIL line unless got == want (with collie_last_error). */
void mt_expect_st(int got, int want, const char *what);
void mt_expect(bool cond, const char *what);
/* FAIL line unless the last error contains `part`. */
void mt_expect_msg(const char *part, const char *what);

/* A checked allreduce on the world, made by every rank at the same point. */
void mt_world_check(int round);

void mt_misuse(collie_team_t *world);           /* every rank, the world still usable after */
int mt_dead(collie_team_t *world);              /* rank P-1 dies; the others' split fails */
int mt_against_barrier(collie_team_t *world);   /* rank P-1 calls a barrier instead */
int mt_dead_during(collie_team_t *world);       /* rank P-1 dies while all dup in a loop */
int mt_persistent_check(collie_team_t *world);  /* COLLIE_CHECK=1 and persistent requests */

#endif
