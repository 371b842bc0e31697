/* rng.h — the unit tests' shared pseudo-random numbers (support_rng.c): xorshift64*, from
 * the same seed in every run, so a failure repeats. */
#ifndef COLLIE_TEST_RNG_H
#define COLLIE_TEST_RNG_H

#include <stdint.h>

uint64_t test_rnd(void);

#endif
