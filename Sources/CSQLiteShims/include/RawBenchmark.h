#ifndef SERIALDB_RAW_BENCHMARK_H
#define SERIALDB_RAW_BENCHMARK_H

/*
 * The raw SQLite C API baseline the benchmarks compare SerialDB against.
 *
 * Everything here uses only the SQLite C API: each function prepares its
 * statements once and re-binds/resets them in its loop. Every int-returning
 * function returns SQLITE_OK or the (primary) SQLite result code that failed;
 * a failed write transaction is rolled back before returning.
 *
 * The benchmark table is t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c REAL)
 * and row i holds a = i, b = "row-i", c = i * 0.5.
 */

#include <sqlite3.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Opens (creating) the database at path with journal_mode=WAL,
 * synchronous=NORMAL, foreign_keys=ON and a 5000 ms busy timeout, and creates
 * table t if missing. Fails with SQLITE_ERROR if WAL could not be enabled
 * (e.g. ":memory:"), so a benchmark never silently measures another mode.
 * The connection is opened with SQLITE_OPEN_NOMUTEX: use it from one thread
 * at a time (serialdb_raw_contended_writes serializes its own threads).
 * On failure *out is NULL.
 */
int serialdb_raw_open(const char *path, sqlite3 **out);

/* Closes the connection (sqlite3_close: fails with SQLITE_BUSY if statements are left). */
int serialdb_raw_close(sqlite3 *db);

/* One BEGIN IMMEDIATE ... COMMIT inserting count rows with ids first_id, first_id + 1, ... */
int serialdb_raw_insert_one_tx(sqlite3 *db, int first_id, int count);

/* count transactions, each BEGIN IMMEDIATE; INSERT one row; COMMIT. Ids first_id, first_id + 1, ... */
int serialdb_raw_small_txs(sqlite3 *db, int first_id, int count);

/* One row of t, as read by serialdb_raw_fetch_all. b is malloc'd (NULL if the column is NULL). */
typedef struct serialdb_raw_row {
    long long id;
    long long a;
    char *b;
    double c;
} serialdb_raw_row;

/*
 * SELECT id, a, b, c FROM t ORDER BY id into a malloc'd array of *count rows
 * (NULL when empty). Free it with serialdb_raw_free_rows. On failure *rows is
 * NULL and *count is 0.
 */
int serialdb_raw_fetch_all(sqlite3 *db, serialdb_raw_row **rows, int *count);

/* Frees the array from serialdb_raw_fetch_all and every b in it. */
void serialdb_raw_free_rows(serialdb_raw_row *rows, int count);

/*
 * Starts threads pthreads sharing the one connection db, serialized by one
 * pthread mutex. Each does per_thread one-row write transactions (lock;
 * BEGIN IMMEDIATE; INSERT; COMMIT; unlock) with ids
 * first_id + thread * per_thread + k. The first failure stops every thread
 * and is returned.
 */
int serialdb_raw_contended_writes(sqlite3 *db, int first_id, int threads, int per_thread);

/* count times: lock a mutex; BEGIN IMMEDIATE; COMMIT; unlock. */
int serialdb_raw_empty_writes(sqlite3 *db, int count);

/*
 * Reads beside a write, the way a service with a connection per reading thread
 * works: `readers` pthreads each open their own connection to path (like
 * serialdb_raw_open) and run `pages` read transactions: BEGIN; SELECT id, a,
 * b, c FROM t WHERE id > ? ORDER BY id LIMIT page_rows (every column read, b
 * copied out); COMMIT. Page k of reader r starts after id
 * ((r * pages + k) * page_rows) % table_rows. Meanwhile the calling thread
 * inserts `writes` rows with ids first_write_id, ... on db, one transaction
 * each. *rows_read receives the rows all readers read. Returns the first error.
 */
int serialdb_raw_concurrent_reads(sqlite3 *db, const char *path, int readers, int pages, int page_rows,
                                  int table_rows, int first_write_id, int writes, long long *rows_read);

/* count times: lock a mutex; BEGIN; COMMIT; unlock. A deferred BEGIN takes no
 * lock until a statement reads, so this measures the transaction and locking
 * bookkeeping, not the cost of a read snapshot. */
int serialdb_raw_empty_reads(sqlite3 *db, int count);

/*
 * What table t holds, for checking a benchmark's work independently of the
 * code that did it. Row i is valid when a = i (INTEGER), b = 'row-i' (TEXT)
 * and c = i * 0.5 (REAL).
 */
typedef struct serialdb_raw_table_check {
    long long rows;       /* count(*) */
    long long valid_rows; /* rows holding exactly the values of their id */
    long long id_sum;     /* total of id (0 when empty) */
} serialdb_raw_table_check;

/* Fills *out from one read of table t. On failure *out is all zero. */
int serialdb_raw_check_table(sqlite3 *db, serialdb_raw_table_check *out);

/* The version of the SQLite library linked in, as sqlite3_libversion(). */
const char *serialdb_raw_sqlite_version(void);

/*
 * Changes the schema of table `table` with SQLite's documented table rebuild
 * (https://www.sqlite.org/lang_altertable.html#otheralter), in one transaction:
 *   PRAGMA foreign_keys=OFF; BEGIN IMMEDIATE;
 *   create_new_table_sql (must create "new_<table>");
 *   copy_sql (INSERT INTO "new_<table>"(...) SELECT ... FROM <table>);
 *   DROP TABLE <table>; ALTER TABLE "new_<table>" RENAME TO <table>;
 *   PRAGMA foreign_key_check (any row: fails with SQLITE_CONSTRAINT);
 *   COMMIT; PRAGMA foreign_keys=ON.
 * The table name is quoted as an identifier, so any name works. On failure
 * the transaction is rolled back and foreign_keys is still turned back ON.
 * Indexes, triggers and views on the table are not recreated.
 */
int serialdb_raw_rebuild(sqlite3 *db, const char *create_new_table_sql, const char *copy_sql, const char *table);

/* Runs one or several SQL statements with sqlite3_exec (the ADD COLUMN baseline). */
int serialdb_raw_exec(sqlite3 *db, const char *sql);

#ifdef __cplusplus
}
#endif

#endif /* SERIALDB_RAW_BENCHMARK_H */
