/*
 * RawBenchmark: what the benchmarks would cost written directly against the
 * SQLite C API, as a baseline for SerialDB's overhead. See
 * include/RawBenchmark.h for the API.
 *
 * Written the way a careful C programmer would: statements are prepared once
 * per call and reset/re-bound in the loop (never sqlite3_exec in a loop), and
 * locking is a plain pthread mutex. Errors are returned as SQLite codes, and a
 * write transaction that failed part-way is rolled back so the connection is
 * usable afterwards.
 */

#include "RawBenchmark.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MARK: - Small helpers */

/* Runs a statement that returns no rows, then resets it for the next use. */
static int step_done(sqlite3_stmt *stmt) {
    int rc = sqlite3_step(stmt);
    sqlite3_reset(stmt);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* After a failure inside a transaction: roll back whatever is still open.
 * (COMMIT can fail with SQLITE_BUSY and leave the transaction open; other
 * errors may already have rolled it back, which get_autocommit tells us.) */
static void rollback_if_open(sqlite3 *db) {
    if (!sqlite3_get_autocommit(db)) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    }
}

/* MARK: - Open and close */

/* PRAGMA journal_mode answers with the mode actually in force. */
static int enable_wal(sqlite3 *db) {
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(db, "PRAGMA journal_mode=WAL", -1, &stmt, NULL);
    if (rc != SQLITE_OK) {
        return rc;
    }
    rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) {
        const char *mode = (const char *)sqlite3_column_text(stmt, 0);
        rc = (mode != NULL && strcmp(mode, "wal") == 0) ? SQLITE_OK : SQLITE_ERROR;
    }
    sqlite3_finalize(stmt);
    return rc;
}

int serialdb_raw_open(const char *path, sqlite3 **out) {
    *out = NULL;
    sqlite3 *db = NULL;
    /* NOMUTEX: like SerialDB, callers serialize access themselves (the
     * contended benchmark with its own pthread mutex), so SQLite's per-call
     * connection mutex would only add cost to the baseline. */
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_busy_timeout(db, 5000);
    }
    if (rc == SQLITE_OK) {
        rc = enable_wal(db);
    }
    if (rc == SQLITE_OK) {
        rc = sqlite3_exec(db,
                          "PRAGMA synchronous=NORMAL;"
                          "PRAGMA foreign_keys=ON;"
                          "CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c REAL);",
                          NULL, NULL, NULL);
    }
    if (rc != SQLITE_OK) {
        sqlite3_close(db); /* sqlite3_open_v2 returns a handle even when it fails */
        return rc;
    }
    *out = db;
    return SQLITE_OK;
}

int serialdb_raw_close(sqlite3 *db) {
    return sqlite3_close(db);
}

/* MARK: - Writes */

/* The statements of a one-row write transaction, prepared once per call. */
typedef struct raw_write_statements {
    sqlite3_stmt *begin;
    sqlite3_stmt *insert;
    sqlite3_stmt *commit;
} raw_write_statements;

static void finalize_write_statements(raw_write_statements *s) {
    sqlite3_finalize(s->begin);
    sqlite3_finalize(s->insert);
    sqlite3_finalize(s->commit);
}

static int prepare_write_statements(sqlite3 *db, raw_write_statements *s) {
    s->begin = s->insert = s->commit = NULL;
    int rc = sqlite3_prepare_v2(db, "BEGIN IMMEDIATE", -1, &s->begin, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_prepare_v2(db, "INSERT INTO t(id, a, b, c) VALUES (?, ?, ?, ?)", -1, &s->insert, NULL);
    }
    if (rc == SQLITE_OK) {
        rc = sqlite3_prepare_v2(db, "COMMIT", -1, &s->commit, NULL);
    }
    if (rc != SQLITE_OK) {
        finalize_write_statements(s);
    }
    return rc;
}

/* Inserts row i: (i, i, "row-i", i * 0.5). */
static int insert_row(sqlite3_stmt *insert, long long i) {
    char b[32];
    int length = snprintf(b, sizeof b, "row-%lld", i);
    int rc = sqlite3_bind_int64(insert, 1, i);
    if (rc == SQLITE_OK) {
        rc = sqlite3_bind_int64(insert, 2, i);
    }
    if (rc == SQLITE_OK) {
        rc = sqlite3_bind_text(insert, 3, b, length, SQLITE_TRANSIENT);
    }
    if (rc == SQLITE_OK) {
        rc = sqlite3_bind_double(insert, 4, (double)i * 0.5);
    }
    return rc == SQLITE_OK ? step_done(insert) : rc;
}

/* BEGIN IMMEDIATE; INSERT row i; COMMIT — rolled back on failure. */
static int write_one_row(sqlite3 *db, const raw_write_statements *s, long long i) {
    int rc = step_done(s->begin);
    if (rc != SQLITE_OK) {
        return rc;
    }
    rc = insert_row(s->insert, i);
    if (rc == SQLITE_OK) {
        rc = step_done(s->commit);
    }
    if (rc != SQLITE_OK) {
        rollback_if_open(db);
    }
    return rc;
}

int serialdb_raw_insert_one_tx(sqlite3 *db, int first_id, int count) {
    raw_write_statements s;
    int rc = prepare_write_statements(db, &s);
    if (rc != SQLITE_OK) {
        return rc;
    }
    rc = step_done(s.begin);
    if (rc == SQLITE_OK) {
        for (int k = 0; k < count && rc == SQLITE_OK; k++) {
            rc = insert_row(s.insert, (long long)first_id + k);
        }
        if (rc == SQLITE_OK) {
            rc = step_done(s.commit);
        }
        if (rc != SQLITE_OK) {
            rollback_if_open(db);
        }
    }
    finalize_write_statements(&s);
    return rc;
}

int serialdb_raw_small_txs(sqlite3 *db, int first_id, int count) {
    raw_write_statements s;
    int rc = prepare_write_statements(db, &s);
    if (rc != SQLITE_OK) {
        return rc;
    }
    for (int k = 0; k < count && rc == SQLITE_OK; k++) {
        rc = write_one_row(db, &s, (long long)first_id + k);
    }
    finalize_write_statements(&s);
    return rc;
}

/* MARK: - Reads */

/* A malloc'd copy of a text column (which may hold NUL bytes, hence the length). */
static int copy_text(sqlite3_stmt *stmt, int column, char **out) {
    *out = NULL;
    if (sqlite3_column_type(stmt, column) == SQLITE_NULL) {
        return SQLITE_OK;
    }
    const unsigned char *text = sqlite3_column_text(stmt, column);
    if (text == NULL) {
        return SQLITE_NOMEM; /* a non-NULL value without text: conversion ran out of memory */
    }
    size_t length = (size_t)sqlite3_column_bytes(stmt, column);
    char *copy = malloc(length + 1);
    if (copy == NULL) {
        return SQLITE_NOMEM;
    }
    memcpy(copy, text, length + 1); /* SQLite's text is NUL-terminated */
    *out = copy;
    return SQLITE_OK;
}

/* Makes room for one more row, doubling the capacity as needed. */
static int reserve_row(serialdb_raw_row **rows, int count, int *capacity) {
    if (count < *capacity) {
        return SQLITE_OK;
    }
    if (*capacity > INT_MAX / 2) {
        return SQLITE_TOOBIG;
    }
    int grown = *capacity == 0 ? 64 : *capacity * 2;
    serialdb_raw_row *bigger = realloc(*rows, (size_t)grown * sizeof **rows);
    if (bigger == NULL) {
        return SQLITE_NOMEM;
    }
    *rows = bigger;
    *capacity = grown;
    return SQLITE_OK;
}

int serialdb_raw_fetch_all(sqlite3 *db, serialdb_raw_row **rows, int *count) {
    *rows = NULL;
    *count = 0;
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT id, a, b, c FROM t ORDER BY id", -1, &stmt, NULL);
    if (rc != SQLITE_OK) {
        return rc;
    }
    serialdb_raw_row *result = NULL;
    int n = 0;
    int capacity = 0;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        rc = reserve_row(&result, n, &capacity);
        if (rc != SQLITE_OK) {
            break;
        }
        serialdb_raw_row *row = &result[n];
        row->id = sqlite3_column_int64(stmt, 0);
        row->a = sqlite3_column_int64(stmt, 1);
        row->c = sqlite3_column_double(stmt, 3);
        rc = copy_text(stmt, 2, &row->b);
        if (rc != SQLITE_OK) {
            break;
        }
        n++;
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) {
        serialdb_raw_free_rows(result, n);
        return rc;
    }
    *rows = result;
    *count = n;
    return SQLITE_OK;
}

void serialdb_raw_free_rows(serialdb_raw_row *rows, int count) {
    for (int k = 0; k < count; k++) {
        free(rows[k].b);
    }
    free(rows);
}

/* MARK: - Contended writes */

/* Shared by all writer threads. The statements belong to the one connection,
 * so they are only touched with the mutex held. */
typedef struct raw_contention {
    sqlite3 *db;
    raw_write_statements statements;
    pthread_mutex_t mutex;
    long long first_id;
    int per_thread;
    atomic_int first_error; /* SQLITE_OK until some thread fails; then they all stop */
} raw_contention;

typedef struct raw_writer {
    raw_contention *shared;
    int index;
} raw_writer;

static void record_error(raw_contention *shared, int rc) {
    int expected = SQLITE_OK;
    atomic_compare_exchange_strong(&shared->first_error, &expected, rc);
}

static void *contended_writer(void *argument) {
    raw_writer *writer = argument;
    raw_contention *shared = writer->shared;
    long long base = shared->first_id + (long long)writer->index * shared->per_thread;
    for (int k = 0; k < shared->per_thread; k++) {
        if (atomic_load(&shared->first_error) != SQLITE_OK) {
            break;
        }
        pthread_mutex_lock(&shared->mutex);
        int rc = write_one_row(shared->db, &shared->statements, base + k);
        pthread_mutex_unlock(&shared->mutex);
        if (rc != SQLITE_OK) {
            record_error(shared, rc);
            break;
        }
    }
    return NULL;
}

int serialdb_raw_contended_writes(sqlite3 *db, int first_id, int threads, int per_thread) {
    if (threads <= 0 || per_thread <= 0) {
        return SQLITE_OK;
    }
    raw_contention shared;
    shared.db = db;
    shared.first_id = first_id;
    shared.per_thread = per_thread;
    atomic_init(&shared.first_error, SQLITE_OK);
    int rc = prepare_write_statements(db, &shared.statements);
    if (rc != SQLITE_OK) {
        return rc;
    }
    if (pthread_mutex_init(&shared.mutex, NULL) != 0) {
        finalize_write_statements(&shared.statements);
        return SQLITE_ERROR;
    }
    pthread_t *ids = malloc((size_t)threads * sizeof *ids);
    raw_writer *writers = malloc((size_t)threads * sizeof *writers);
    int started = 0;
    if (ids == NULL || writers == NULL) {
        record_error(&shared, SQLITE_NOMEM);
    }
    for (; started < threads && atomic_load(&shared.first_error) == SQLITE_OK; started++) {
        writers[started].shared = &shared;
        writers[started].index = started;
        if (pthread_create(&ids[started], NULL, contended_writer, &writers[started]) != 0) {
            record_error(&shared, SQLITE_ERROR); /* could not start a thread: stop the others */
            break;
        }
    }
    for (int k = 0; k < started; k++) {
        pthread_join(ids[k], NULL);
    }
    free(ids);
    free(writers);
    pthread_mutex_destroy(&shared.mutex);
    finalize_write_statements(&shared.statements);
    return atomic_load(&shared.first_error);
}

/* MARK: - Concurrent reads */

typedef struct raw_reader {
    const char *path;
    int index;
    int pages;
    int page_rows;
    int table_rows;
    long long rows_read;
    int rc;
} raw_reader;

/* One reader thread: its own connection, `pages` paged read transactions. */
static void *concurrent_reader(void *argument) {
    raw_reader *reader = argument;
    sqlite3 *db = NULL;
    sqlite3_stmt *begin = NULL, *select = NULL, *commit = NULL;
    int rc = serialdb_raw_open(reader->path, &db);
    if (rc == SQLITE_OK) {
        rc = sqlite3_prepare_v2(db, "BEGIN", -1, &begin, NULL);
    }
    if (rc == SQLITE_OK) {
        rc = sqlite3_prepare_v2(db, "SELECT id, a, b, c FROM t WHERE id > ? ORDER BY id LIMIT ?", -1, &select, NULL);
    }
    if (rc == SQLITE_OK) {
        rc = sqlite3_prepare_v2(db, "COMMIT", -1, &commit, NULL);
    }
    char copy[64];
    volatile long long sink = 0; /* keeps the column reads from being optimized away */
    for (int k = 0; k < reader->pages && rc == SQLITE_OK; k++) {
        long long start = ((long long)(reader->index * reader->pages + k) * reader->page_rows) % reader->table_rows;
        rc = step_done(begin);
        if (rc == SQLITE_OK) rc = sqlite3_bind_int64(select, 1, start);
        if (rc == SQLITE_OK) rc = sqlite3_bind_int(select, 2, reader->page_rows);
        while (rc == SQLITE_OK) {
            int step = sqlite3_step(select);
            if (step == SQLITE_DONE) break;
            if (step != SQLITE_ROW) {
                rc = step;
                break;
            }
            long long id = sqlite3_column_int64(select, 0);
            long long a = sqlite3_column_int64(select, 1);
            const unsigned char *b = sqlite3_column_text(select, 2);
            int length = sqlite3_column_bytes(select, 2);
            if (b != NULL) {
                memcpy(copy, b, (size_t)(length < 63 ? length : 63));
            }
            double c = sqlite3_column_double(select, 3);
            sink += id + a + (long long)c + copy[0];
            reader->rows_read++;
        }
        sqlite3_reset(select);
        if (rc == SQLITE_OK) {
            rc = step_done(commit);
        } else {
            rollback_if_open(db);
        }
    }
    (void)sink;
    sqlite3_finalize(begin);
    sqlite3_finalize(select);
    sqlite3_finalize(commit);
    if (db != NULL) {
        sqlite3_close(db);
    }
    reader->rc = rc;
    return NULL;
}

int serialdb_raw_concurrent_reads(sqlite3 *db, const char *path, int readers, int pages, int page_rows,
                                  int table_rows, int first_write_id, int writes, long long *rows_read) {
    *rows_read = 0;
    if (readers <= 0 || table_rows <= 0) {
        return SQLITE_OK;
    }
    pthread_t *ids = malloc((size_t)readers * sizeof *ids);
    raw_reader *states = calloc((size_t)readers, sizeof *states);
    if (ids == NULL || states == NULL) {
        free(ids);
        free(states);
        return SQLITE_NOMEM;
    }
    int started = 0;
    int rc = SQLITE_OK;
    for (; started < readers; started++) {
        states[started] = (raw_reader){path, started, pages, page_rows, table_rows, 0, SQLITE_OK};
        if (pthread_create(&ids[started], NULL, concurrent_reader, &states[started]) != 0) {
            rc = SQLITE_ERROR;
            break;
        }
    }
    if (rc == SQLITE_OK) {
        raw_write_statements statements;
        rc = prepare_write_statements(db, &statements);
        for (int k = 0; k < writes && rc == SQLITE_OK; k++) {
            rc = step_done(statements.begin);
            if (rc == SQLITE_OK) rc = insert_row(statements.insert, first_write_id + k);
            if (rc == SQLITE_OK) rc = step_done(statements.commit);
            if (rc != SQLITE_OK) rollback_if_open(db);
        }
        if (statements.begin != NULL) finalize_write_statements(&statements);
    }
    for (int k = 0; k < started; k++) {
        pthread_join(ids[k], NULL);
        *rows_read += states[k].rows_read;
        if (rc == SQLITE_OK) rc = states[k].rc;
    }
    free(ids);
    free(states);
    return rc;
}

/* MARK: - Empty transactions */

/* count times: lock; <begin_sql>; COMMIT; unlock. Measures the fixed cost of a
 * transaction plus the lock a serialized API would take around it. */
static int empty_transactions(sqlite3 *db, const char *begin_sql, int count) {
    sqlite3_stmt *begin = NULL;
    sqlite3_stmt *commit = NULL;
    int rc = sqlite3_prepare_v2(db, begin_sql, -1, &begin, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_prepare_v2(db, "COMMIT", -1, &commit, NULL);
    }
    pthread_mutex_t mutex;
    if (rc == SQLITE_OK) {
        if (pthread_mutex_init(&mutex, NULL) != 0) {
            rc = SQLITE_ERROR;
        } else {
            for (int k = 0; k < count && rc == SQLITE_OK; k++) {
                pthread_mutex_lock(&mutex);
                rc = step_done(begin);
                if (rc == SQLITE_OK) {
                    rc = step_done(commit);
                    if (rc != SQLITE_OK) {
                        rollback_if_open(db);
                    }
                }
                pthread_mutex_unlock(&mutex);
            }
            pthread_mutex_destroy(&mutex);
        }
    }
    sqlite3_finalize(begin);
    sqlite3_finalize(commit);
    return rc;
}

int serialdb_raw_empty_writes(sqlite3 *db, int count) {
    return empty_transactions(db, "BEGIN IMMEDIATE", count);
}

int serialdb_raw_empty_reads(sqlite3 *db, int count) {
    return empty_transactions(db, "BEGIN", count);
}

/* MARK: - Checking results */

int serialdb_raw_check_table(sqlite3 *db, serialdb_raw_table_check *out) {
    memset(out, 0, sizeof *out);
    sqlite3_stmt *stmt = NULL;
    /* Storage classes are checked too: a side that bound text for a number
     * (or the reverse) must not pass. */
    int rc = sqlite3_prepare_v2(db,
                                "SELECT count(*),"
                                " coalesce(sum(typeof(a) = 'integer' AND a = id"
                                "  AND typeof(b) = 'text' AND b = 'row-' || id"
                                "  AND typeof(c) = 'real' AND c = id * 0.5), 0),"
                                " coalesce(sum(id), 0)"
                                " FROM t",
                                -1, &stmt, NULL);
    if (rc != SQLITE_OK) {
        return rc;
    }
    rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) {
        out->rows = sqlite3_column_int64(stmt, 0);
        out->valid_rows = sqlite3_column_int64(stmt, 1);
        out->id_sum = sqlite3_column_int64(stmt, 2);
        rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
        rc = SQLITE_ERROR; /* an aggregate always returns one row */
    }
    sqlite3_finalize(stmt);
    return rc;
}

const char *serialdb_raw_sqlite_version(void) {
    return sqlite3_libversion();
}

/* MARK: - Table rebuild */

/* prefix + name as one SQL identifier: in double quotes, inner double quotes
 * doubled (SQLite's %w). sqlite3_free the result; NULL when out of memory. */
static char *quoted_identifier(const char *prefix, const char *name) {
    return sqlite3_mprintf("\"%w%w\"", prefix, name);
}

/* PRAGMA foreign_key_check lists one row per violation: any row is a failure. */
static int foreign_key_check(sqlite3 *db) {
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(db, "PRAGMA foreign_key_check", -1, &stmt, NULL);
    if (rc != SQLITE_OK) {
        return rc;
    }
    rc = sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    if (rc == SQLITE_ROW) {
        return SQLITE_CONSTRAINT;
    }
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Steps 2 to 11 of the rebuild, inside the transaction (steps 3, 8 and 9,
 * about indexes, triggers and views, are left out: see the header). */
static int rebuild_in_transaction(sqlite3 *db, const char *create_new_table_sql, const char *copy_sql,
                                  const char *drop_sql, const char *rename_sql) {
    int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        return rc;
    }
    rc = sqlite3_exec(db, create_new_table_sql, NULL, NULL, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_exec(db, copy_sql, NULL, NULL, NULL);
    }
    if (rc == SQLITE_OK) {
        rc = sqlite3_exec(db, drop_sql, NULL, NULL, NULL);
    }
    if (rc == SQLITE_OK) {
        rc = sqlite3_exec(db, rename_sql, NULL, NULL, NULL);
    }
    if (rc == SQLITE_OK) {
        rc = foreign_key_check(db);
    }
    if (rc == SQLITE_OK) {
        rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    }
    if (rc != SQLITE_OK) {
        rollback_if_open(db);
    }
    return rc;
}

int serialdb_raw_rebuild(sqlite3 *db, const char *create_new_table_sql, const char *copy_sql, const char *table) {
    char *quoted_table = quoted_identifier("", table);
    char *quoted_new_table = quoted_identifier("new_", table);
    char *drop_sql = NULL;
    char *rename_sql = NULL;
    if (quoted_table != NULL && quoted_new_table != NULL) {
        drop_sql = sqlite3_mprintf("DROP TABLE %s", quoted_table);
        rename_sql = sqlite3_mprintf("ALTER TABLE %s RENAME TO %s", quoted_new_table, quoted_table);
    }
    int rc = SQLITE_NOMEM;
    if (drop_sql != NULL && rename_sql != NULL) {
        /* foreign_keys cannot change inside a transaction: turn it off before
         * BEGIN so DROP TABLE does not cascade or fail, and back on after. */
        rc = sqlite3_exec(db, "PRAGMA foreign_keys=OFF", NULL, NULL, NULL);
        if (rc == SQLITE_OK) {
            rc = rebuild_in_transaction(db, create_new_table_sql, copy_sql, drop_sql, rename_sql);
            int restore_rc = sqlite3_exec(db, "PRAGMA foreign_keys=ON", NULL, NULL, NULL);
            if (rc == SQLITE_OK) {
                rc = restore_rc;
            }
        }
    }
    sqlite3_free(quoted_table);
    sqlite3_free(quoted_new_table);
    sqlite3_free(drop_sql);
    sqlite3_free(rename_sql);
    return rc;
}

int serialdb_raw_exec(sqlite3 *db, const char *sql) {
    return sqlite3_exec(db, sql, NULL, NULL, NULL);
}
