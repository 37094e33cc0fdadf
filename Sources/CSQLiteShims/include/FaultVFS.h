#ifndef SERIALDB_FAULT_VFS_H
#define SERIALDB_FAULT_VFS_H

/*
 * A fault-injecting SQLite VFS for tests and the stress harness.
 *
 * It wraps the default VFS and is registered (not as the default) under the
 * name "serialdb-faults". Open a database through it with
 * sqlite3_open_v2(path, &db, flags, "serialdb-faults"). Every file method is
 * passed straight through to the default VFS, so WAL mode and memory-mapped
 * I/O behave exactly as without it; only the operations selected by arming
 * are counted and, at the chosen point, failed.
 *
 * The counters and the armed state are process-wide and atomic: one arm
 * applies to every file opened through this VFS, on any thread. Files opened
 * through other VFSes are never counted nor failed.
 */

#include <sqlite3.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Kinds of operations, for the kind_mask of serialdb_faults_arm (OR them). */
static const int SERIALDB_FAULT_WRITE = 1;    /* sqlite3_io_methods.xWrite */
static const int SERIALDB_FAULT_SYNC = 2;     /* sqlite3_io_methods.xSync */
static const int SERIALDB_FAULT_TRUNCATE = 4; /* sqlite3_io_methods.xTruncate */

/* Error codes to inject, for Swift: sqlite3.h defines the extended codes as
 * expressions (SQLITE_IOERR | (3<<8)), which Swift cannot import. */
static const int SERIALDB_IOERR_WRITE = SQLITE_IOERR_WRITE;
static const int SERIALDB_IOERR_FSYNC = SQLITE_IOERR_FSYNC;
static const int SERIALDB_IOERR_TRUNCATE = SQLITE_IOERR_TRUNCATE;

/* The name the VFS is registered under. */
static const char *const SERIALDB_FAULT_VFS_NAME = "serialdb-faults";

/*
 * Registers the VFS. Idempotent and thread-safe: the first call does the work
 * and every call returns its result, SQLITE_OK or an SQLite error code.
 */
int serialdb_faults_register(void);

/*
 * Arms the VFS: from now on, count the operations whose kind is in kind_mask.
 * The nth of them (1-based) fails with error_code (e.g. SQLITE_IOERR_WRITE,
 * SQLITE_FULL, SQLITE_IOERR_FSYNC) without reaching the disk. If sticky != 0,
 * every later matching operation fails too, like a disk that stays full.
 * With nth <= 0 nothing fails: operations are only counted.
 * Re-arming resets both counters. A failed operation does nothing at all (no
 * partial write). Arm and disarm between transactions: an operation already
 * in flight on another thread may be counted under either arming.
 */
void serialdb_faults_arm(int kind_mask, long long nth, int error_code, int sticky);

/* Stops injecting and counting. The counters keep their values until the next arm. */
void serialdb_faults_disarm(void);

/* Matching operations counted since the last arm (including failed ones). */
long long serialdb_faults_operations(void);

/* Faults injected since the last arm. */
long long serialdb_faults_injected(void);

#ifdef __cplusplus
}
#endif

#endif /* SERIALDB_FAULT_VFS_H */
