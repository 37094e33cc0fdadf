import SerialDB

/// The SerialDB side of each workload, written the way an application would use the library.
/// Each function gets the path of a file that does not exist yet; only the work the workload
/// names is timed (opening, creating the table and checking the result are not).
///
/// The timed loops stay in these synchronous functions: in an async context `queue.write {}`
/// would resolve to the async overload and measure something else.
enum SerialDBSide {
    static let insertSQL = "INSERT INTO t(id, a, b, c) VALUES (?, ?, ?, ?)"
    static let selectSQL = "SELECT id, a, b, c FROM t ORDER BY id"

    /// WAL, synchronous NORMAL, foreign keys on: the settings of `serialdb_raw_open`.
    static var configuration: Configuration {
        var configuration = Configuration()
        configuration.journalMode = .wal
        configuration.synchronous = .normal
        configuration.foreignKeysEnabled = true
        return configuration
    }

    static func insertOneTransaction(path: String, rows: Int) throws -> SideRun {
        let queue = try openWithTable(path: path)
        var operations = 0
        let elapsed = try ContinuousClock().measure {
            try queue.write { db in
                let insert = try db.cachedStatement(sql: insertSQL)
                for i in 1...rows {
                    try insert.execute(values: i, i, "row-\(i)", Double(i) * 0.5)
                    operations += 1
                }
            }
        }
        return try finish(queue, path: path, elapsed: elapsed, operations: operations)
    }

    /// `insertOneTransaction` with each row's values built as `[DatabaseValue]` and bound
    /// through `StatementArguments`.
    static func insertValuesOneTransaction(path: String, rows: Int) throws -> SideRun {
        let queue = try openWithTable(path: path)
        var operations = 0
        let elapsed = try ContinuousClock().measure {
            try queue.write { db in
                let insert = try db.cachedStatement(sql: insertSQL)
                for i in 1...rows {
                    let values: [DatabaseValue] = [
                        .integer(Int64(i)), .integer(Int64(i)), .text("row-\(i)"), .real(Double(i) * 0.5),
                    ]
                    try insert.execute(arguments: StatementArguments(values))
                    operations += 1
                }
            }
        }
        return try finish(queue, path: path, elapsed: elapsed, operations: operations)
    }

    static func smallTransactions(path: String, count: Int) throws -> SideRun {
        let queue = try openWithTable(path: path)
        var operations = 0
        let elapsed = try ContinuousClock().measure {
            for i in 1...count {
                try queue.write { db in
                    try db.execute(sql: insertSQL, arguments: [i, i, "row-\(i)", Double(i) * 0.5])
                }
                operations += 1
            }
        }
        return try finish(queue, path: path, elapsed: elapsed, operations: operations)
    }

    static func contendedWrites(path: String, threads: Int, perThread: Int) throws -> SideRun {
        let queue = try openWithTable(path: path)
        var operations = 0
        let elapsed = try ContinuousClock().measure {
            operations = try ConcurrentThreads.run(count: threads) { thread, group in
                var done = 0
                for k in 0..<perThread {
                    if group.hasFailed { break }  // another thread failed: stop, as the C side does
                    let i = 1 + thread * perThread + k
                    try queue.write { db in
                        try db.execute(sql: insertSQL, arguments: [i, i, "row-\(i)", Double(i) * 0.5])
                    }
                    done += 1
                }
                return done
            }
        }
        return try finish(queue, path: path, elapsed: elapsed, operations: operations)
    }

    static func emptyWrites(path: String, count: Int, measured: Bool = false) throws -> SideRun {
        var configuration = configuration
        if measured {
            // Queue health on: slow-block reports (none fire) and statistics, to price them.
            configuration.slowBlockThreshold = .milliseconds(100)
            configuration.onSlowBlock = { _ in }
            configuration.recordsStatistics = true
        }
        let queue = try openWithTable(path: path, configuration: configuration)
        var operations = 0
        let elapsed = try ContinuousClock().measure {
            for _ in 0..<count {
                try queue.write { _ in operations += 1 }  // counts that the block ran
            }
        }
        return try finish(queue, path: path, elapsed: elapsed, operations: operations)
    }

    static func emptyReads(path: String, count: Int) throws -> SideRun {
        let queue = try openWithTable(path: path)
        var operations = 0
        let elapsed = try ContinuousClock().measure {
            for _ in 0..<count {
                try queue.read { _ in operations += 1 }
            }
        }
        return try finish(queue, path: path, elapsed: elapsed, operations: operations)
    }

    static func fetchRowDecodable(path: String, rows: Int) throws -> SideRun {
        try fetch(
            path: path, rows: rows,
            { db in try db.fetchAll(BenchRecord.self, sql: selectSQL) },
            fields: { ($0.id, $0.a, $0.b, $0.c) })
    }

    static func fetchDecodable(path: String, rows: Int) throws -> SideRun {
        try fetch(
            path: path, rows: rows,
            { db in try db.fetchAll(CodableBenchRecord.self, sql: selectSQL) },
            fields: { ($0.id, $0.a, $0.b, $0.c) })
    }

    /// Populates the file (untimed, with the C code), then times a schema change that
    /// rebuilds `t` (`a` becomes NOT NULL): planning, the safety checks, the copy, the foreign
    /// key check, all of it.
    static func rebuild(path: String, rows: Int) throws -> SideRun {
        try changeSchema(
            path: path, rows: rows, operations: rows,
            to: "CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER NOT NULL, b TEXT, c REAL)", expectRebuild: true)
    }

    /// Populates the file, then times a schema change that appends a nullable column.
    static func addColumn(path: String, rows: Int) throws -> SideRun {
        try changeSchema(
            path: path, rows: rows, operations: 1,
            to: "CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c REAL, d TEXT)", expectRebuild: false)
    }

    // MARK: - Helpers

    private static func changeSchema(path: String, rows: Int, operations: Int, to schema: String, expectRebuild: Bool)
        throws -> SideRun
    {
        try RawConnection.populate(path: path, rows: rows)
        let queue = try open(path: path)
        var plan: SchemaPlan?
        let elapsed = try ContinuousClock().measure {
            plan = try queue.inDatabase { db in try db.changeSchema(to: schema) }
        }
        guard plan?.rebuiltTables.isEmpty == !expectRebuild else {
            throw BenchError.setup("the schema change did not take the expected path: \(plan?.sql ?? "")")
        }
        return try finish(queue, path: path, elapsed: elapsed, operations: operations)
    }

    /// Populates the file (untimed, with the C code, so both sides read identical files), then
    /// opens a new queue on it and times one read block running `fetchAll`. The records are
    /// read for the digest after the clock stops.
    private static func fetch<Record>(
        path: String, rows: Int, _ fetchAll: (Database) throws -> [Record], fields: (Record) -> Fields
    ) throws -> SideRun {
        try RawConnection.populate(path: path, rows: rows)
        let queue = try open(path: path)
        var records: [Record] = []
        let elapsed = try ContinuousClock().measure {
            records = try queue.read { db in try fetchAll(db) }
        }
        try queue.close()
        var digest = Digest(operations: records.count)
        for record in records {
            let (id, a, b, c) = fields(record)
            digest.add(id: id, a: a, b: b, c: c)
        }
        return SideRun(elapsed: elapsed, digest: digest)
    }

    private typealias Fields = (Int64, Int64, String, Double)

    private static func openWithTable(path: String, configuration: Configuration = configuration) throws
        -> DatabaseQueue
    {
        let queue = try open(path: path, configuration: configuration)
        try queue.inDatabase { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c REAL)")
        }
        return queue
    }

    /// Opens a queue and checks that the connection really runs with the C side's settings, so
    /// a change of defaults can never make the benchmark compare two different setups.
    static func open(path: String, configuration: Configuration = configuration) throws -> DatabaseQueue {
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        let settings = try queue.inDatabase { db in
            (
                try db.fetchOne(String.self, sql: "PRAGMA journal_mode"),
                try db.fetchOne(Int.self, sql: "PRAGMA synchronous"),
                try db.fetchOne(Int.self, sql: "PRAGMA foreign_keys")
            )
        }
        guard settings == ("wal", 1, 1) else {
            throw BenchError.setup("SerialDB's journal_mode, synchronous, foreign_keys are \(settings)")
        }
        return queue
    }

    /// Closes the queue, then reads the file back with the C verifier that checks both sides.
    static func finish(_ queue: DatabaseQueue, path: String, elapsed: Duration, operations: Int) throws
        -> SideRun
    {
        try queue.close()
        return SideRun(elapsed: elapsed, digest: try RawConnection.digest(path: path, operations: operations))
    }
}
