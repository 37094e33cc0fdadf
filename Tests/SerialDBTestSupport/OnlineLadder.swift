import SerialDB

/// The schema the online schema change tests upgrade: `item` at step 1, rebuilt at step 2 with
/// a NOT NULL and a CHECK (a change only a rebuild can make), its index kept.
public enum OnlineLadder {
    public static let identifiers = ["1-item", "2-strict-item"]

    public static let schemaV1 = """
        CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT, score INTEGER);
        CREATE INDEX item_by_name ON item(name);
        """
    public static let schemaV2 = """
        CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL CHECK (score >= 0));
        CREATE INDEX item_by_name ON item(name);
        """

    /// Both steps, declarative.
    public static func migrator() -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration(identifiers[0], schema: schemaV1)
        migrator.registerMigration(identifiers[1], schema: schemaV2)
        return migrator
    }

    /// Inserts rows `1...count`, named `item-N` with score N.
    public static func seed(_ db: Database, count: Int) throws {
        let statement = try db.makeStatement(sql: "INSERT INTO item(id, name, score) VALUES (?, ?, ?)")
        for id in stride(from: 1, through: count, by: 1) {
            try statement.execute(arguments: [id, "item-\(id)", id])
        }
    }

    /// Every row, as `id: name/score`, in id order.
    public static func rows(_ db: Database) throws -> [String] {
        try db.fetchAll(Row.self, sql: "SELECT id, name, score FROM item ORDER BY id").map { row in
            "\(try row.decode(Int.self, at: 0)): \(try row.decode(String?.self, at: 1) ?? "NULL")/"
                + "\(try row.decode(Int?.self, at: 2).map(String.init) ?? "NULL")"
        }
    }

    /// Suspends (bounded) until the old tables a swap set aside are dropped: a queue or pool
    /// drops them in chunks once the upgrade has opened the gate.
    public static func waitForTablesSetAside(_ writer: any DatabaseWriter) async throws {
        try await waitUntil {
            let left = try? writer.read { db in
                try db.fetchOne(
                    Int.self,
                    sql: "SELECT count(*) FROM sqlite_master WHERE name LIKE 'serialdb\\_old\\_%' ESCAPE '\\'")
            }
            return left == 0
        }
    }

    /// SerialDB's copy objects left in the file (`serialdb_` names other than the migrations table).
    public static func leftovers(_ db: Database) throws -> [String] {
        try db.fetchAll(
            String.self,
            sql: """
                SELECT type || ' ' || name FROM sqlite_master
                WHERE name LIKE 'serialdb\\_%' ESCAPE '\\' AND name <> 'serialdb_migrations'
                AND name NOT LIKE 'sqlite\\_autoindex\\_serialdb\\_migrations%' ESCAPE '\\' ORDER BY name
                """)
    }
}

/// What the upgrade did with the copies `prepareMigration` made: the `preparedCopy` of every
/// committed step, collected from `migrate`'s progress.
public final class PreparedCopyReports: Sendable {
    private let outcomes = Locked<[PreparedCopyOutcome]>([])

    public init() {}

    /// Pass as `migrate`'s progress.
    public var progress: @Sendable (MigrationProgress) -> Void {
        { [outcomes] progress in
            guard progress.event == .stepCommitted, let copy = progress.preparedCopy else { return }
            outcomes.withLock { $0.append(copy) }
        }
    }

    /// The reports, in the order the steps committed.
    public var all: [PreparedCopyOutcome] { outcomes.withLock { $0 } }
}

extension Database {
    /// Every row of `table`, every column (rowid first), each as `value|value|...`, sorted:
    /// what two tables holding exactly the same rows agree on.
    public func contents(of table: String) throws -> [String] {
        let rowID = try fetchOne(
            Int.self, sql: "SELECT count(*) FROM pragma_table_list WHERE name = ? AND wr = 0", arguments: [table])
        let columns = (rowID == 1 ? "rowid, " : "") + "*"
        return try fetchAll(Row.self, sql: "SELECT \(columns) FROM \(table.quotedDatabaseIdentifier)").map { row in
            try (0..<row.count).map { "\(try row.decode(DatabaseValue.self, at: $0))" }.joined(separator: "|")
        }.sorted()
    }
}

/// Runs `body` as synchronous code inside an async test, so that the queue's blocking
/// overloads are the ones called (an async context picks the async ones).
public func blocking<T>(_ body: () throws -> T) rethrows -> T {
    try body()
}
