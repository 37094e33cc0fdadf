import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// SQLite silently re-prepares a cached statement after a schema change, and the new program
/// may return other columns: rows must decode by the columns the statement returns now,
/// whoever changed the schema, and no path may trap.
@Suite struct CachedStatementSchemaChangeTests {
    static let allPlayers = "SELECT * FROM player"

    struct NamedPlayer: Decodable, Equatable {
        var id: Int64
        var name: String
    }

    struct PlayerWithOptionalScore: Decodable, Equatable {
        var id: Int64
        var name: String
        var score: Int?
    }

    struct Pair: Decodable, Equatable {
        var a: Int
        var b: Int
    }

    /// The README's migrations: v1 creates `player(id, name)`; v2 declares the table with
    /// `score` and an index.
    static func readmeMigrator(upTo version: Int) -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: "CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        }
        if version >= 2 {
            migrator.registerMigration(
                "v2",
                schema: """
                    CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL DEFAULT 0);
                    CREATE INDEX player_score ON player(score);
                    """)
        }
        return migrator
    }

    /// A queue at v1 with two players, whose cached `SELECT * FROM player` ran once (so its
    /// columns are known), then upgraded to v2 on the same queue.
    static func readmeQueueUpgradedAfterAFetch(_ kind: DatabaseKind, in directory: TemporaryDirectory) throws
        -> DatabaseQueue
    {
        let queue = try kind.makeQueue(in: directory)
        try queue.migrate(readmeMigrator(upTo: 1))
        try queue.write { db in
            try db.execute(sql: "INSERT INTO player(id, name) VALUES (1, 'Ann'), (2, 'Bob')")
        }
        let before = try queue.read { db in try db.fetchAll(NamedPlayer.self, sql: allPlayers) }
        #expect(before == [NamedPlayer(id: 1, name: "Ann"), NamedPlayer(id: 2, name: "Bob")])
        try queue.migrate(readmeMigrator(upTo: 2))
        return queue
    }

    @Test(arguments: DatabaseKind.allCases)
    func theReadmePlayersFetchWithTheirScoreAfterTheDeclarativeUpgradeOnTheSameQueue(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try Self.readmeQueueUpgradedAfterAFetch(kind, in: directory)
        let players = try queue.read { db in try db.fetchAll(Player.self, sql: Self.allPlayers) }
        #expect(players == [Player(id: 1, name: "Ann", score: 0), Player(id: 2, name: "Bob", score: 0)])
    }

    @Test(arguments: DatabaseKind.allCases)
    func aDecodableOptionalReadsTheNewColumnInsteadOfNil(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try Self.readmeQueueUpgradedAfterAFetch(kind, in: directory)
        try queue.write { db in try db.execute(sql: "UPDATE player SET score = id * 10") }
        let players = try queue.read { db in try db.fetchAll(PlayerWithOptionalScore.self, sql: Self.allPlayers) }
        #expect(
            players == [
                PlayerWithOptionalScore(id: 1, name: "Ann", score: 10),
                PlayerWithOptionalScore(id: 2, name: "Bob", score: 20),
            ])
        let first = try queue.read { db in try db.fetchOne(PlayerWithOptionalScore.self, sql: Self.allPlayers) }
        #expect(first == PlayerWithOptionalScore(id: 1, name: "Ann", score: 10))
    }

    @Test(arguments: DatabaseKind.allCases)
    func copiedRowsAndTheStatementNameTheNewColumns(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try Self.readmeQueueUpgradedAfterAFetch(kind, in: directory)
        try queue.read { db in
            let rows = try db.fetchAll(Row.self, sql: Self.allPlayers)
            #expect(rows.map(\.columnNames) == [["id", "name", "score"], ["id", "name", "score"]])
            #expect(try rows.map { try $0.decode(Int.self, column: "score") } == [0, 0])
            #expect(try db.cachedStatement(sql: Self.allPlayers).columnNames == ["id", "name", "score"])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aNullInANewColumnIsADecodingErrorNamingItNotATrap(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.inDatabase { db in
            try Player.createTable(db, rows: 2)
            _ = try db.fetchAll(Row.self, sql: Self.allPlayers)
            try db.execute(sql: "ALTER TABLE player ADD COLUMN note TEXT")
            let rows = try db.fetchAll(Row.self, sql: Self.allPlayers)
            let error = #expect(throws: SerialDBError.self) { try rows[0].decode(String.self, at: 3) }
            #expect(error?.code == .decodingFailed)
            #expect(error?.message.contains("`note` holds NULL") == true, "\(String(describing: error))")
            #expect(try rows[0].decode(String?.self, column: "note") == nil)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aDroppedColumnReadsAsMissingNotATrap(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.inDatabase { db in
            try Player.createTable(db, rows: 2)
            _ = try db.fetchAll(Row.self, sql: Self.allPlayers)
            try db.execute(sql: "ALTER TABLE player DROP COLUMN score")
            let row = try #require(try db.fetchAll(Row.self, sql: Self.allPlayers).first)
            #expect(row.columnNames == ["id", "name"])
            #expect(row["score"] == nil)
            let error = #expect(throws: SerialDBError.self) { try row.decode(Int.self, column: "score") }
            #expect(error?.message.contains("no column `score`") == true, "\(String(describing: error))")
        }
    }

    /// Seeds `p(a, b)` with a = 1, b = 2 and runs the cached `SELECT * FROM p` once.
    static func seedPairs(_ db: Database) throws {
        try db.execute(sql: "CREATE TABLE p(a INTEGER, b INTEGER); INSERT INTO p VALUES (1, 2)")
        #expect(try db.fetchAll(Pair.self, sql: "SELECT * FROM p") == [Pair(a: 1, b: 2)])
    }

    /// Drops and re-adds column `a`: the table's columns become (b, a); a is then set to 10.
    static let dropAndReAddA = "ALTER TABLE p DROP COLUMN a; ALTER TABLE p ADD COLUMN a INTEGER; UPDATE p SET a = 10"

    /// `SELECT * FROM p` read by name, through Row and through Decodable.
    static func pairsByName(_ db: Database) throws -> (row: Pair, decoded: Pair) {
        let row = try #require(try db.fetchOne(Row.self, sql: "SELECT * FROM p"))
        let byRow = Pair(a: try row.decode(column: "a"), b: try row.decode(column: "b"))
        let decoded = try #require(try db.fetchAll(Pair.self, sql: "SELECT * FROM p").first)
        return (byRow, decoded)
    }

    @Test(arguments: DatabaseKind.allCases)
    func aColumnDroppedAndReAddedByThisConnectionKeepsItsName(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        let read = try queue.inDatabase { db in
            try Self.seedPairs(db)
            try db.execute(sql: Self.dropAndReAddA)
            return try Self.pairsByName(db)
        }
        #expect(read.row == Pair(a: 10, b: 2))
        #expect(read.decoded == Pair(a: 10, b: 2))
    }

    @Test func aColumnDroppedAndReAddedByAnotherConnectionKeepsItsName() throws {
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.path("pairs.sqlite"))
        try queue.inDatabase { db in try Self.seedPairs(db) }
        let other = try DatabaseQueue(path: directory.path("pairs.sqlite"))
        try other.inDatabase { db in try db.execute(sql: Self.dropAndReAddA) }
        let read = try queue.inDatabase { db in try Self.pairsByName(db) }
        #expect(read.row == Pair(a: 10, b: 2))
        #expect(read.decoded == Pair(a: 10, b: 2))
    }

    @Test func aColumnDroppedAndReAddedByAnotherProcessKeepsItsName() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("pairs.sqlite")
        let queue = try DatabaseQueue(path: path)
        try await queue.inDatabase { db in try Self.seedPairs(db) }
        // Run to its end (bounded): waiting for a line from a child that exits at once could
        // miss its last output.
        let child = try await ToolRun("serialdb-test-child", ["execute", path, Self.dropAndReAddA], seconds: 30)
        try #require(child.status == 0, "the child did not change the schema: \(child.output) \(child.errors)")
        let read = try await queue.inDatabase { db in try Self.pairsByName(db) }
        #expect(read.row == Pair(a: 10, b: 2))
        #expect(read.decoded == Pair(a: 10, b: 2))
    }
}
