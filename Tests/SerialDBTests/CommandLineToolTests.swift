import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// The `serialdb` tool, run as a real process on real files.
@Suite struct CommandLineToolTests {
    /// Runs the real `serialdb` to its end (bounded, see ``ToolRun``).
    private func run(_ arguments: [String]) async throws -> ToolRun {
        try await ToolRun("serialdb", arguments)
    }

    @Test func planRefusesMigrateAppliesAndCheckPasses() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("tool.sqlite")
        var configuration = Configuration()
        configuration.journalMode = .delete
        try await DatabaseQueue(path: path, configuration: configuration).write { db in
            try Player.createTable(db, rows: 1000)
        }
        let schema = directory.path("schema.sql")
        try "CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL, points REAL NOT NULL, team TEXT NOT NULL);"
            .write(toFile: schema, atomically: true, encoding: .utf8)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))

        let refused = try await run(["migrate", path, "--schema", schema])
        #expect(refused.status == 3)
        #expect(refused.errors.contains("player.team"))
        #expect(refused.errors.contains("player.score"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)

        let options = ["--rename", "player.score=points", "--fill", "player.team=red"]
        let dryRun = try await run(["plan", path, "--schema", schema] + options)
        #expect(dryRun.status == 0)
        #expect(
            dryRun.output.contains(
                "INSERT OR ABORT INTO \"serialdb_new_player\"(\"id\", \"name\", \"points\", \"team\")"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)

        let applied = try await run(["migrate", path, "--schema", schema] + options)
        #expect(applied.status == 0, "\(applied.errors)")
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        #expect(
            try await queue.read { db in
                try db.fetchOne(Double.self, sql: "SELECT sum(points) FROM player WHERE team = 'red'")
            } == 500_500)
        #expect(
            try await queue.inDatabase { db in try db.fetchOne(String.self, sql: "PRAGMA journal_mode") } == "delete")

        let check = try await run(["check", path])
        #expect(check.status == 0)
        #expect(check.output.contains("integrity: ok"))
        let inspect = try await run(["inspect", path])
        #expect(inspect.output.contains("team TEXT NOT NULL"))
    }

    @Test func mistakesAreNamedAndExitWithStatusTwo() async throws {
        for (arguments, message) in [
            ([], "no command given"), (["frob", "x"], "unknown command `frob`"),
            (["plan", "/nonexistent.sqlite", "--schema", "x"], "no database at /nonexistent.sqlite"),
            (["plan", "x.sqlite"], "plan needs --schema FILE"), (["inspect"], "inspect needs a database path"),
            (["migrate", "x", "--fill", "bad"], "--fill wants TABLE.COLUMN=VALUE, got `bad`"),
            (["plan", "x", "y"], "unexpected argument `y`"), (["plan", "x", "--schema"], "--schema needs a value"),
            (["sync", "x", "--token", "t"], "sync needs --server URL"),
            (["sync", "x", "--server", "nowhere", "--token", "t"], "--server needs a URL"),
            (["sync", "x", "--server", "http://h", "--token", "t", "--page-size", "0"], "--page-size needs a whole"),
        ] {
            let outcome = try await run(arguments)
            #expect(outcome.status == 2, "\(arguments)")
            #expect(outcome.errors.hasPrefix("serialdb: \(message)"), "\(arguments): \(outcome.errors)")
            #expect(outcome.errors.contains("Run `serialdb --help` for the usage."), "\(arguments)")
            #expect(outcome.output.isEmpty, "\(arguments)")
        }
    }

    @Test func checkReportsBrokenForeignKeys() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("broken.sqlite")
        var configuration = Configuration()
        configuration.foreignKeysEnabled = false
        try await DatabaseQueue(path: path, configuration: configuration).write { db in
            try db.execute(
                sql: "CREATE TABLE parent(id INTEGER PRIMARY KEY); CREATE TABLE child(parent_id REFERENCES parent(id))")
            try db.execute(sql: "INSERT INTO child VALUES (42)")
        }
        let check = try await run(["check", path])
        #expect(check.status == 1)
        #expect(check.output.contains("row 1 of child refers to a missing row of parent"))
    }
}
