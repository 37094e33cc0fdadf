#ifndef SERIALDB_TEST_RUN_WIDTH_H
#define SERIALDB_TEST_RUN_WIDTH_H

/// The most test cases Swift Testing runs at once in this process, as this target set it before
/// the run began (0 when the variable is unset).
int serialdb_test_run_width(void);

#endif
