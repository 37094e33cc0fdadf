import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

@Suite struct DatabaseTests {
    @Test(arguments: DatabaseKind.allCases)
    func positionalAndNamedArgumentsBindValues(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.inDatabase { db in
            try Player.createTable(db)
            try db.execute(sql: "INSERT INTO player(name, score) VALUES (?, ?)", arguments: ["Ann", 10])
            try db.execute(
                sql: "INSERT INTO player(name, score) VALUES (:name, @score)", arguments: ["name": "Bob", "score": 20])
            try db.execute(
                sql: "INSERT INTO player(name, score) VALUES ($name, :score)", arguments: ["name": "Cy", "score": 30])
            let players = try db.fetchAll(Player.self, sql: "SELECT * FROM player ORDER BY id")
            #expect(players.map(\.name) == ["Ann", "Bob", "Cy"])
            #expect(players.map(\.score) == [10, 20, 30])
        }
    }

    @Test func wrongArgumentsAreRefusedWithAClearMessage() throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db in
            try Player.createTable(db)
            let tooFew = #expect(throws: SerialDBError.self) {
                try db.execute(sql: "INSERT INTO player(name, score) VALUES (?, ?)", arguments: ["Ann"])
            }
            #expect(tooFew?.code == .invalidArguments)
            #expect(tooFew?.message.contains("expects 2") == true)
            let missing = #expect(throws: SerialDBError.self) {
                try db.execute(sql: "INSERT INTO player(name) VALUES (:name)", arguments: ["nmae": "Ann"])
            }
            #expect(missing?.message.contains("`name`") == true)
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") == 0)
        }
    }

    @Test func severalStatementsRunInOrderAndConsumeArgumentsInOrder() throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db in
            try db.execute(
                sql: """
                    CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL DEFAULT 0);
                    INSERT INTO player(name, score) VALUES (?, ?); -- a comment
                    INSERT INTO player(name, score) VALUES (?, 5);
                    """, arguments: ["Ann", 10, "Bob"])
            #expect(try db.fetchAll(String.self, sql: "SELECT name FROM player ORDER BY id") == ["Ann", "Bob"])
            #expect(throws: SerialDBError.self) {
                try db.execute(
                    sql: "DELETE FROM player WHERE id = ?; DELETE FROM player WHERE id = ?", arguments: [1, 2, 3])
            }
        }
    }

    @Test func sqliteErrorsCarryCodesMessageAndSQL() throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db in
            try Player.createTable(db, rows: 1)
            let error = #expect(throws: DatabaseError.self) {
                try db.execute(sql: "INSERT INTO player(id, name) VALUES (?, ?)", arguments: [1, "secret-value"])
            }
            #expect(error?.resultCode == .SQLITE_CONSTRAINT)
            #expect(error?.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY)
            #expect(error?.message.contains("player.id") == true)
            #expect(error?.sql == "INSERT INTO player(id, name) VALUES (?, ?)")
            #expect(error.map { "\($0)" }?.contains("secret-value") == false)
            var matched = false
            do {
                try db.execute(sql: "INSERT INTO player(id, name) VALUES (1, 'x')")
            } catch ResultCode.SQLITE_CONSTRAINT {
                matched = true
            }
            #expect(matched)
            #expect(throws: DatabaseError.self) { try db.execute(sql: "SELEKT 1") }
        }
    }

    @Test func publicStatementArgumentsPutValuesInErrors() throws {
        var configuration = Configuration()
        configuration.publicStatementArguments = true
        let queue = try DatabaseQueue(configuration: configuration)
        try queue.inDatabase { db in
            try Player.createTable(db, rows: 1)
            let error = #expect(throws: DatabaseError.self) {
                try db.execute(sql: "INSERT INTO player(id, name) VALUES (?, ?)", arguments: [1, "visible-value"])
            }
            #expect(error?.arguments?.contains("visible-value") == true)
        }
    }

    @Test func aFileThatIsNotADatabaseIsReportedAndLeftByteIdentical() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let content = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try content.write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: DatabaseError.self) { try DatabaseQueue(path: path) }
        #expect(error?.resultCode == .SQLITE_NOTADB)
        #expect(error?.message.contains(path) == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == content)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test func aMissingFileIsCreatedOnlyWhenAllowed() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("missing.sqlite")
        var configuration = Configuration()
        configuration.createsMissingFile = false
        let error = #expect(throws: DatabaseError.self) { try DatabaseQueue(path: path, configuration: configuration) }
        #expect(error?.resultCode == .SQLITE_CANTOPEN)
        #expect(error?.message.contains(path) == true)
        #expect(!FileManager.default.fileExists(atPath: path))
        _ = try DatabaseQueue(path: path)
        #expect(FileManager.default.fileExists(atPath: path))
        _ = try DatabaseQueue(path: path, configuration: configuration)
    }

    @Test func aMissingDirectoryCannotBeOpened() throws {
        let error = #expect(throws: DatabaseError.self) { try DatabaseQueue(path: "/nonexistent-dir/x/db.sqlite") }
        #expect(error?.resultCode == .SQLITE_CANTOPEN)
    }

    @Test func rowsDecodeThroughRowDecodableAndDecodable() throws {
        struct Score: Decodable, Equatable {
            var name: String
            var score: Int
            var bonus: Int?
        }
        let queue = try DatabaseQueue()
        try queue.inDatabase { db in
            try Player.createTable(db, rows: 3)
            let players = try db.fetchAll(Player.self, sql: "SELECT * FROM player ORDER BY id")
            #expect(
                players == [
                    Player(id: 1, name: "player-1", score: 1), Player(id: 2, name: "player-2", score: 2),
                    Player(id: 3, name: "player-3", score: 3),
                ])
            let scores = try db.fetchAll(Score.self, sql: "SELECT name, score, NULL AS bonus FROM player ORDER BY id")
            #expect(scores.first == Score(name: "player-1", score: 1, bonus: nil))
            #expect(try db.fetchOne(Score.self, sql: "SELECT name, score FROM player WHERE id = 3")?.score == 3)
            let rows = try db.fetchAll(Row.self, sql: "SELECT id, name FROM player ORDER BY id")
            #expect(rows.count == 3)
            #expect(rows[2]["name"] == .text("player-3"))
            #expect(rows[0].columnNames == ["id", "name"])
        }
    }

    @Test func forEachRowStreamsWithoutLoadingAndAllowsNestedQueries() throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db in
            try Player.createTable(db, rows: 1000)
            var total = 0
            var seen = 0
            try db.forEachRow(sql: "SELECT score FROM player") { row in
                total += try row.decode(Int.self, at: 0)
                seen += 1
                // The same query nested inside: the cursor has its own statement.
                if seen == 1 {
                    #expect(try db.fetchAll(Int.self, sql: "SELECT score FROM player").count == 1000)
                }
            }
            #expect(total == 500_500)
            var names: [String] = []
            try db.forEach(Player.self, sql: "SELECT * FROM player WHERE id <= ?", arguments: [2]) {
                names.append($0.name)
            }
            #expect(names == ["player-1", "player-2"])
        }
    }

    @Test func changesAndLastInsertedRowIDFollowTheLastStatement() throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db in
            try Player.createTable(db, rows: 10)
            try db.execute(sql: "INSERT INTO player(name) VALUES ('new')")
            #expect(db.lastInsertedRowID == 11)
            try db.execute(sql: "UPDATE player SET score = 0 WHERE id <= 4")
            #expect(db.changesCount == 4)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func namesWithQuotesAndSpacesWorkEverywhere(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        let table = "my \"odd\" table"
        let column = "the 'score' column"
        try queue.inDatabase { db in
            try db.execute(
                sql:
                    "CREATE TABLE \(table.quotedDatabaseIdentifier)(id INTEGER PRIMARY KEY, \(column.quotedDatabaseIdentifier) INTEGER)"
            )
            try db.execute(sql: "INSERT INTO \(table.quotedDatabaseIdentifier) VALUES (1, 7)")
            let row = try #require(try db.fetchOne(Row.self, sql: "SELECT * FROM \(table.quotedDatabaseIdentifier)"))
            #expect(try row.decode(Int.self, column: column) == 7)
            try db.inSavepoint { db in
                try db.execute(
                    sql: "UPDATE \(table.quotedDatabaseIdentifier) SET \(column.quotedDatabaseIdentifier) = 8")
                return .commit
            }
            #expect(
                try db.fetchOne(
                    Int.self, sql: "SELECT \(column.quotedDatabaseIdentifier) FROM \(table.quotedDatabaseIdentifier)")
                    == 8)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func savepointsNestAndRollBackOnlyTheirOwnWork(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.inDatabase { db in try Player.createTable(db, rows: 5) }
        try queue.inTransaction { db in
            try db.execute(sql: "INSERT INTO player(name) VALUES ('kept')")
            try db.inSavepoint { db in
                try db.execute(sql: "INSERT INTO player(name) VALUES ('undone')")
                try db.inSavepoint { db in
                    try db.execute(sql: "INSERT INTO player(name) VALUES ('inner')")
                    return .commit
                }
                return .rollback
            }
            #expect(throws: DatabaseError.self) {
                try db.inSavepoint { db in
                    try db.execute(sql: "INSERT INTO player(name) VALUES ('thrown')")
                    try db.execute(sql: "INSERT INTO player(id, name) VALUES (1, 'duplicate')")
                    return .commit
                }
            }
            return .commit
        }
        let names = try queue.read { db in try db.fetchAll(String.self, sql: "SELECT name FROM player WHERE id > 5") }
        #expect(names == ["kept"])
    }

    @Test func statementsAreCachedAndReusable() throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db in
            try Player.createTable(db)
            let first = try db.cachedStatement(sql: "INSERT INTO player(name, score) VALUES (?, ?)")
            let second = try db.cachedStatement(sql: "INSERT INTO player(name, score) VALUES (?, ?)")
            #expect(first === second)
            for index in 0..<100 { try first.execute(arguments: ["p\(index)", index]) }
            #expect(try db.fetchOne(Int.self, sql: "SELECT sum(score) FROM player") == 4950)
            #expect(throws: SerialDBError.self) { try db.makeStatement(sql: "SELECT 1; SELECT 2") }
        }
    }

    @Test func executeValuesBindsEachValueByItsOwnTypeAndChecksTheCount() throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db in
            try Player.createTable(db)
            let insert = try db.cachedStatement(sql: "INSERT INTO player(id, name, score) VALUES (?, ?, ?)")
            for index in 1...50 { try insert.execute(values: Int64(index), "p\(index)", index * 2) }
            let nothing: String? = nil
            let nullable = try db.makeStatement(sql: "INSERT INTO player(name, score) VALUES (coalesce(?, 'none'), ?)")
            try nullable.execute(values: nothing, 0)
            #expect(try db.fetchOne(Int.self, sql: "SELECT sum(score) FROM player") == 2550)
            #expect(try db.fetchOne(String.self, sql: "SELECT name FROM player WHERE id = 51") == "none")
            let tooMany = #expect(throws: SerialDBError.self) { try insert.execute(values: 1, "x", 2, 3) }
            #expect(tooMany?.message.contains("expects 3 argument(s) but 4 were given") == true)
            #expect(throws: SerialDBError.self) { try insert.execute(values: 1) }
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") == 51)
        }
    }

    @Test func traceAndPrepareDatabaseHooksRun() throws {
        let traced = Locked<[String]>([])
        var configuration = Configuration()
        configuration.trace = { sql in traced.withLock { $0.append(sql) } }
        configuration.prepareDatabase = { db in try db.execute(sql: "CREATE TEMP TABLE prepared(x)") }
        let queue = try DatabaseQueue(configuration: configuration)
        try queue.inDatabase { db in
            try db.execute(sql: "INSERT INTO prepared VALUES (?)", arguments: ["hidden"])
        }
        let statements = traced.withLock { $0 }
        #expect(statements.contains("INSERT INTO prepared VALUES (?)"))
        #expect(!statements.joined().contains("hidden"))
    }

    @Test func standaloneDatabaseClosesAndRefusesLaterUse() throws {
        let directory = try TemporaryDirectory()
        let db = try Database(path: directory.path("standalone.sqlite"))
        try Player.createTable(db, rows: 3)
        db.close()
        db.close()
        let error = #expect(throws: SerialDBError.self) { try db.execute(sql: "SELECT 1") }
        #expect(error?.code == .closed)
    }
}
