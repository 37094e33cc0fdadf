import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// The `serialdb` tool, run as a real process on real files.
@Suite struct CommandLineToolTests {
    /// Runs the real `serialdb` to its end (bounded, see ``ToolRun``).
    private func run(_ arguments: [String]) throws -> ToolRun {
        try ToolRun("serialdb", arguments)
    }

    @Test func planRefusesMigrateAppliesAndCheckPasses() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("tool.sqlite")
        var configuration = Configuration()
        configuration.journalMode = .delete
        try DatabaseQueue(path: path, configuration: configuration).write { db in try Player.createTable(db, rows: 1000)
        }
        let schema = directory.path("schema.sql")
        try "CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL, points REAL NOT NULL, team TEXT NOT NULL);"
            .write(toFile: schema, atomically: true, encoding: .utf8)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))

        let refused = try run(["migrate", path, "--schema", schema])
        #expect(refused.status == 3)
        #expect(refused.errors.contains("player.team"))
        #expect(refused.errors.contains("player.score"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)

        let options = ["--rename", "player.score=points", "--fill", "player.team=red"]
        let dryRun = try run(["plan", path, "--schema", schema] + options)
        #expect(dryRun.status == 0)
        #expect(
            dryRun.output.contains(
                "INSERT OR ABORT INTO \"serialdb_new_player\"(\"id\", \"name\", \"points\", \"team\")"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)

        let applied = try run(["migrate", path, "--schema", schema] + options)
        #expect(applied.status == 0, "\(applied.errors)")
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        #expect(
            try queue.read { db in
                try db.fetchOne(Double.self, sql: "SELECT sum(points) FROM player WHERE team = 'red'")
            } == 500_500)
        #expect(try queue.inDatabase { db in try db.fetchOne(String.self, sql: "PRAGMA journal_mode") } == "delete")

        let check = try run(["check", path])
        #expect(check.status == 0)
        #expect(check.output.contains("integrity: ok"))
        let inspect = try run(["inspect", path])
        #expect(inspect.output.contains("team TEXT NOT NULL"))
    }

    @Test func mistakesGetUsageAndExitStatusTwo() throws {
        for arguments in [
            [], ["frob", "x"], ["plan", "/nonexistent.sqlite", "--schema", "x"], ["plan", "x.sqlite"],
            ["migrate", "x", "--fill", "bad"],
        ] {
            let outcome = try run(arguments)
            #expect(outcome.status == 2, "\(arguments)")
            #expect(outcome.errors.contains("usage: serialdb"), "\(arguments)")
        }
    }

    @Test func checkReportsBrokenForeignKeys() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("broken.sqlite")
        var configuration = Configuration()
        configuration.foreignKeysEnabled = false
        try DatabaseQueue(path: path, configuration: configuration).write { db in
            try db.execute(
                sql: "CREATE TABLE parent(id INTEGER PRIMARY KEY); CREATE TABLE child(parent_id REFERENCES parent(id))")
            try db.execute(sql: "INSERT INTO child VALUES (42)")
        }
        let check = try run(["check", path])
        #expect(check.status == 1)
        #expect(check.output.contains("row 1 of child refers to a missing row of parent"))
    }
}
