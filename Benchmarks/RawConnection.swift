import CSQLiteShims

/// Connections of the raw C baseline (`RawBenchmark.h`), opened with the same settings as
/// SerialDB's: WAL, synchronous NORMAL, foreign keys on, table `t` created.
enum RawConnection {
    /// Opens `path`, runs `body`, and closes the connection; every failure throws.
    static func with<T>(path: String, _ body: (OpaquePointer) throws -> T) throws -> T {
        var connection: OpaquePointer?
        try check(serialdb_raw_open(path, &connection), "serialdb_raw_open")
        guard let connection else { throw BenchError.sqlite(call: "serialdb_raw_open", code: -1) }
        let result: T
        do {
            result = try body(connection)
        } catch {
            serialdb_raw_close(connection)
            throw error
        }
        try check(serialdb_raw_close(connection), "serialdb_raw_close")
        return result
    }

    /// Throws unless `code` is `SQLITE_OK` (0).
    static func check(_ code: Int32, _ call: String) throws {
        if code != 0 { throw BenchError.sqlite(call: call, code: code) }
    }

    /// What the file's table `t` holds, read by the C verifier: the same check for both sides,
    /// independent of the code that wrote the rows.
    static func digest(path: String, operations: Int) throws -> Digest {
        try with(path: path) { connection in
            var check = serialdb_raw_table_check()
            try self.check(serialdb_raw_check_table(connection, &check), "serialdb_raw_check_table")
            return Digest(rows: check.rows, validRows: check.valid_rows, idSum: check.id_sum, operations: operations)
        }
    }

    /// Fills a new file with rows `1...rows` (the starting point of the fetch workloads).
    static func populate(path: String, rows: Int) throws {
        try with(path: path) { connection in
            try check(serialdb_raw_insert_one_tx(connection, 1, Int32(rows)), "serialdb_raw_insert_one_tx")
        }
    }
}
