/* support_rng.c — see rng.h. */
#include "rng.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

uint64_t test_rnd(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}
