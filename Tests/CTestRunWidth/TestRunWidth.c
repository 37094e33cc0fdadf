// Caps how many test cases Swift Testing runs at once, before its entry point reads the cap.
//
// Left uncapped, Swift Testing starts every test case of the run at once. The synchronous ones
// run on the cooperative pool and hold its threads (two on a 2-core machine) while they run,
// and the pool's queue is first in, first out: every step of an async test (a task it starts,
// a sleep that ends, a continuation resumed by a queue's thread) waited behind the whole run's
// backlog of not-yet-started tests. In a full run on 2 cores, async tests' bounded waits took
// up to 66 s for work that takes milliseconds, so their 60 s deadlock bound measured the
// backlog and failed two tests in CI. Capped at twice the cores, the same run's longest such
// wait is under 2 s and the run takes as long (124 s against 123 s).
//
// A library constructor, because the cap is read from the environment when the run starts,
// before any test code: every `swift test` of this package gets it, filtered or not. A cap the
// caller set in the environment wins.

#include "CTestRunWidth.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *const width_variable = "SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH";

__attribute__((constructor)) static void cap_the_test_run_width(void) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    char width[32];
    snprintf(width, sizeof width, "%ld", (cores > 0 ? cores : 1) * 2);
    setenv(width_variable, width, 0);
}

int serialdb_test_run_width(void) {
    const char *value = getenv(width_variable);
    return value == NULL ? 0 : atoi(value);
}
