import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// The README's examples, run as written (on a temporary file), so the front page stays true.
@Suite struct ReadmeExampleTests {
    struct Player: RowDecodable {
        var id: Int64, name: String, score: Int
        init(row: Row) throws {
            id = try row.decode(column: "id")
            name = try row.decode(column: "name")
            score = try row.decode(column: "score")
        }
    }

    @Test func theQuickStartRunsAsWritten() async throws {
        let directory = try TemporaryDirectory()
        var config = Configuration()
        config.label = "app"
        let queue = try DatabaseQueue(path: directory.path("app.sqlite"), configuration: config)
        try syncPart(queue)
        let count = try await queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") }
        #expect(count == 1)
        try await queue.close()
    }

    private func syncPart(_ queue: DatabaseQueue) throws {
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS player(
                        id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL DEFAULT 0)
                    """)
            try db.execute(sql: "INSERT INTO player(name, score) VALUES (?, ?)", arguments: ["Ann", 10])
        }
        let top = try queue.read { db in
            try db.fetchAll(Player.self, sql: "SELECT * FROM player ORDER BY score DESC LIMIT 10")
        }
        #expect(top.map(\.name) == ["Ann"])
        try queue.inTransaction(.immediate) { db in
            try db.execute(
                sql: "UPDATE player SET score = score + 1 WHERE name = :name", arguments: ["name": "Ann"])
            try db.inSavepoint { db in
                try db.execute(sql: "DELETE FROM player WHERE score < 0")
                return .commit
            }
            return .commit
        }
        #expect(try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT score FROM player") } == 11)
    }

    @Test func theMigrationExampleRunsAsWritten() throws {
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.path("app.sqlite"))
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: "CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        }
        try queue.migrate(migrator)
        try queue.write { db in try db.execute(sql: "INSERT INTO player(name) VALUES ('Ann'), ('Bob')") }
        migrator.registerMigration(
            "v2",
            schema: """
                CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL DEFAULT 0);
                CREATE INDEX player_score ON player(score);
                """)
        let upgrade = queue.startMigration(migrator)
        let names = try queue.read { db in try db.fetchAll(String.self, sql: "SELECT name FROM player WHERE score = 0")
        }
        try upgrade.wait()
        #expect(names == ["Ann", "Bob"])
    }
}
