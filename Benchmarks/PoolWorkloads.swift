import CSQLiteShims
import HarnessSupport
import SerialDB

/// The workloads of a ``DatabasePool``: reads on several threads beside a writer, and the read
/// round trip. Both sides start from the same populated file; the writer inserts the same rows.
enum PoolWorkloads {
    static let pageSQL = "SELECT id, a, b, c FROM t WHERE id > ? ORDER BY id LIMIT ?"

    /// The sizes of `concurrent_reads`.
    struct Sizes {
        var readers: Int
        var pages: Int
        var pageRows: Int
        var tableRows: Int
        var writes: Int

        /// Rows every reader reads, and so the operations of the workload.
        var rowsRead: Int { readers * pages * pageRows }
    }

    /// `readers` threads reading 100-row pages from a pool while one thread writes.
    static func serialDBConcurrentReads(path: String, sizes: Sizes) throws -> SideRun {
        try RawConnection.populate(path: path, rows: sizes.tableRows)
        let pool = try DatabasePool(
            path: path, configuration: SerialDBSide.configuration, maximumReaderCount: sizes.readers)
        var rowsRead = 0
        let elapsed = try ContinuousClock().measure {
            rowsRead = try ConcurrentThreads.run(count: sizes.readers + 1) { thread, group in
                guard thread < sizes.readers else {
                    for k in 0..<sizes.writes where !group.hasFailed {
                        let i = sizes.tableRows + 1 + k
                        try pool.write { db in
                            try db.execute(sql: SerialDBSide.insertSQL, arguments: [i, i, "row-\(i)", Double(i) * 0.5])
                        }
                    }
                    return 0
                }
                var read = 0
                for k in 0..<sizes.pages where !group.hasFailed {
                    let start = ((thread * sizes.pages + k) * sizes.pageRows) % sizes.tableRows
                    let page = try pool.read { db in
                        try db.fetchAll(BenchRecord.self, sql: pageSQL, arguments: [start, sizes.pageRows])
                    }
                    read += page.count
                }
                return read
            }
        }
        try pool.close()
        return SideRun(elapsed: elapsed, digest: try RawConnection.digest(path: path, operations: rowsRead))
    }

    /// The raw C baseline: a connection per reading thread, the writer on its own connection.
    static func rawCConcurrentReads(path: String, sizes: Sizes) throws -> SideRun {
        try RawConnection.populate(path: path, rows: sizes.tableRows)
        var rowsRead: Int64 = 0
        let elapsed = try RawConnection.with(path: path) { connection in
            var code: Int32 = 0
            let elapsed = ContinuousClock().measure {
                code = serialdb_raw_concurrent_reads(
                    connection, path, Int32(sizes.readers), Int32(sizes.pages), Int32(sizes.pageRows),
                    Int32(sizes.tableRows), Int32(sizes.tableRows + 1), Int32(sizes.writes), &rowsRead)
            }
            try RawConnection.check(code, "serialdb_raw_concurrent_reads")
            return elapsed
        }
        return SideRun(elapsed: elapsed, digest: try RawConnection.digest(path: path, operations: Int(rowsRead)))
    }

    /// `count` empty read blocks on a pool: its read round trip, to set beside the queue's.
    static func serialDBEmptyReads(path: String, count: Int) throws -> SideRun {
        try RawConnection.populate(path: path, rows: 0)
        let pool = try DatabasePool(path: path, configuration: SerialDBSide.configuration)
        var operations = 0
        let elapsed = try ContinuousClock().measure {
            for _ in 0..<count {
                try pool.read { _ in operations += 1 }
            }
        }
        try pool.close()
        return SideRun(elapsed: elapsed, digest: try RawConnection.digest(path: path, operations: operations))
    }
}
