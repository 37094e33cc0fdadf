import CSQLiteShims

/// The raw C side of each workload: one call into `RawBenchmark.c`, timed from Swift around
/// the call. Each function gets the path of a file that does not exist yet.
enum RawCSide {
    static func insertOneTransaction(path: String, rows: Int) throws -> SideRun {
        try timedCall(path: path, operations: rows, call: "serialdb_raw_insert_one_tx") {
            serialdb_raw_insert_one_tx($0, 1, Int32(rows))
        }
    }

    static func smallTransactions(path: String, count: Int) throws -> SideRun {
        try timedCall(path: path, operations: count, call: "serialdb_raw_small_txs") {
            serialdb_raw_small_txs($0, 1, Int32(count))
        }
    }

    static func contendedWrites(path: String, threads: Int, perThread: Int) throws -> SideRun {
        try timedCall(path: path, operations: threads * perThread, call: "serialdb_raw_contended_writes") {
            serialdb_raw_contended_writes($0, 1, Int32(threads), Int32(perThread))
        }
    }

    static func emptyWrites(path: String, count: Int) throws -> SideRun {
        try timedCall(path: path, operations: count, call: "serialdb_raw_empty_writes") {
            serialdb_raw_empty_writes($0, Int32(count))
        }
    }

    static func emptyReads(path: String, count: Int) throws -> SideRun {
        try timedCall(path: path, operations: count, call: "serialdb_raw_empty_reads") {
            serialdb_raw_empty_reads($0, Int32(count))
        }
    }

    /// Populates the file (untimed), then times the documented table rebuild by hand: the same
    /// statements SerialDB's plan runs (`a` becomes NOT NULL), in one transaction.
    static func rebuild(path: String, rows: Int) throws -> SideRun {
        try RawConnection.populate(path: path, rows: rows)
        return try timedCall(path: path, operations: rows, call: "serialdb_raw_rebuild") {
            serialdb_raw_rebuild(
                $0, "CREATE TABLE \"new_t\"(id INTEGER PRIMARY KEY, a INTEGER NOT NULL, b TEXT, c REAL)",
                "INSERT INTO \"new_t\"(id, a, b, c) SELECT id, a, b, c FROM t", "t")
        }
    }

    /// Populates the file (untimed), then times `ALTER TABLE t ADD COLUMN`.
    static func addColumn(path: String, rows: Int) throws -> SideRun {
        try RawConnection.populate(path: path, rows: rows)
        return try timedCall(path: path, operations: 1, call: "serialdb_raw_exec") {
            serialdb_raw_exec($0, "ALTER TABLE t ADD COLUMN d TEXT")
        }
    }

    /// Populates the file (untimed), then times `serialdb_raw_fetch_all` on a new connection.
    /// Freeing the rows is left out of the time, as the Swift side's array is released after.
    static func fetchAll(path: String, rows: Int) throws -> SideRun {
        try RawConnection.populate(path: path, rows: rows)
        return try RawConnection.with(path: path) { connection in
            var records: UnsafeMutablePointer<serialdb_raw_row>?
            var count: Int32 = 0
            var code: Int32 = 0
            let elapsed = ContinuousClock().measure {
                code = serialdb_raw_fetch_all(connection, &records, &count)
            }
            defer { serialdb_raw_free_rows(records, count) }
            try RawConnection.check(code, "serialdb_raw_fetch_all")
            var digest = Digest(operations: Int(count))
            for record in UnsafeBufferPointer(start: records, count: Int(count)) {
                digest.add(id: record.id, a: record.a, b: record.b.map { String(cString: $0) } ?? "", c: record.c)
            }
            return SideRun(elapsed: elapsed, digest: digest)
        }
    }

    /// Times `body` on a new connection; the file is then checked by the shared verifier.
    /// A call that succeeds did all its `operations` (the C functions stop at the first error).
    private static func timedCall(
        path: String, operations: Int, call: String, _ body: (OpaquePointer) -> Int32
    ) throws -> SideRun {
        let elapsed = try RawConnection.with(path: path) { connection in
            var code: Int32 = 0
            let elapsed = ContinuousClock().measure { code = body(connection) }
            try RawConnection.check(code, call)
            return elapsed
        }
        return SideRun(elapsed: elapsed, digest: try RawConnection.digest(path: path, operations: operations))
    }
}
