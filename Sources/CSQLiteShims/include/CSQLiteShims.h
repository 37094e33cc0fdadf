#ifndef SERIALDB_CSQLITE_SHIMS_H
#define SERIALDB_CSQLITE_SHIMS_H

/* Umbrella header of the CSQLiteShims module: C support for SerialDB's tests,
 * stress harness and benchmarks. */

#include "FaultVFS.h"
#include "RawBenchmark.h"

#endif /* SERIALDB_CSQLITE_SHIMS_H */
