/*
 * symbolic.h — the tests' name for the symbolic schedule verifier, which now lives in the
 * library as src/sim/verify.h (collie-sim verify uses it too): sym_verify, sym_run and
 * sym_describe are declared there.
 */
#ifndef COLLIE_TEST_SYMBOLIC_H
#define COLLIE_TEST_SYMBOLIC_H

#include "sim/verify.h"

#endif
