import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// `serialdb plan` and `migrate` on the cases of issue 17 (items 5, 13, 14, 19 and the
/// plan-time refusals), run as a real process on real files.
@Suite struct CommandLineSchemaChangeTests {
    /// Runs the real `serialdb` to its end (bounded, see ``ToolRun``). A `migrate` runs
    /// `plan` with the same options first (it changes nothing) and checks that the dry run
    /// predicted the outcome (``ToolRun/checkPlanPredicts(_:)``).
    private func run(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> ToolRun {
        guard arguments.first == "migrate", arguments.count > 1, FileManager.default.fileExists(atPath: arguments[1])
        else { return try ToolRun("serialdb", arguments) }
        let plan = try ToolRun("serialdb", ["plan"] + arguments.dropFirst())
        let migrate = try ToolRun("serialdb", arguments)
        plan.checkPlanPredicts(migrate, sourceLocation: sourceLocation)
        return migrate
    }

    private func database(in directory: TemporaryDirectory, _ sql: String, foreignKeys: Bool = true) throws -> String {
        let path = directory.path("tool.sqlite")
        var configuration = Configuration()
        configuration.journalMode = .delete
        configuration.foreignKeysEnabled = foreignKeys
        try DatabaseQueue(path: path, configuration: configuration).write { db in try db.execute(sql: sql) }
        return path
    }

    private func schemaFile(in directory: TemporaryDirectory, _ sql: String) throws -> String {
        let path = directory.path("schema-\(UUID().uuidString).sql")
        try sql.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    @Test func rerunningTheSameRenameIsANoOp() throws {
        let directory = try TemporaryDirectory()
        let path = try database(
            in: directory,
            "CREATE TABLE player(id INTEGER PRIMARY KEY, score INTEGER); INSERT INTO player VALUES (1, 10);")
        let schema = try schemaFile(in: directory, "CREATE TABLE player(id INTEGER PRIMARY KEY, points INTEGER);")
        let first = try run(["migrate", path, "--schema", schema, "--rename", "player.score=points"])
        #expect(first.status == 0, "\(first.errors)")
        let again = try run(["migrate", path, "--schema", schema, "--rename", "player.score=points"])
        #expect(again.status == 0, "\(again.errors)")
        #expect(again.output.contains("nothing to do"))
    }

    @Test func fillValuesTakeTheColumnsTypeAffinity() throws {
        let directory = try TemporaryDirectory()
        let path = try database(in: directory, "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1);")
        let schema = try schemaFile(
            in: directory,
            "CREATE TABLE t(id INTEGER PRIMARY KEY, code TEXT NOT NULL, n INTEGER NOT NULL, r REAL NOT NULL);")
        let outcome = try run([
            "migrate", path, "--schema", schema, "--fill", "t.code=007", "--fill", "t.n=007", "--fill", "t.r=nan",
        ])
        #expect(outcome.status == 0, "\(outcome.errors)")
        let row = try DatabaseQueue(path: path).read { db in
            try db.fetchOne(Row.self, sql: "SELECT code, typeof(code), n, typeof(n), r FROM t")
        }
        #expect(row?[0] == .text("007"))
        #expect(row?[1] == .text("text"))
        #expect(row?[2] == .integer(7))
        #expect(row?[3] == .text("integer"))
        #expect(row?[4] == .text("nan"))
    }

    @Test func aDropRolledBackForAForeignKeyExitsAsARefusal() throws {
        let directory = try TemporaryDirectory()
        let path = try database(
            in: directory,
            """
            CREATE TABLE parent(id INTEGER PRIMARY KEY);
            CREATE TABLE child(id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent(id));
            INSERT INTO parent VALUES (1); INSERT INTO child VALUES (1, 1);
            """)
        let schema = try schemaFile(
            in: directory, "CREATE TABLE child(id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent(id));")
        let before = try bytes(path)
        let outcome = try run(["migrate", path, "--schema", schema, "--allow-drop", "parent"])
        #expect(outcome.status == 3, "\(outcome.errors)")
        #expect(try bytes(path) == before)
    }

    @Test func aMissingSchemaFileIsAUsageError() throws {
        let directory = try TemporaryDirectory()
        let path = try database(in: directory, "CREATE TABLE t(id INTEGER PRIMARY KEY);")
        let outcome = try run(["plan", path, "--schema", directory.path("missing.sql")])
        #expect(outcome.status == 2)
        #expect(outcome.errors.contains("missing.sql"))
    }

    @Test func planReportsRowsThatWouldBeRefusedBeforeAnythingStarts() throws {
        let directory = try TemporaryDirectory()
        let path = try database(
            in: directory,
            "CREATE TABLE user(id INTEGER PRIMARY KEY, email TEXT); INSERT INTO user VALUES (1, 'a'), (2, 'a'), (3, 'b');"
        )
        let schema = try schemaFile(
            in: directory, "CREATE TABLE user(id INTEGER PRIMARY KEY, email TEXT UNIQUE ON CONFLICT REPLACE);")
        let before = try bytes(path)
        let plan = try run(["plan", path, "--schema", schema])
        #expect(plan.status == 3)
        #expect(plan.errors.contains("'a' in 2 rows"), "\(plan.errors)")
        #expect(try run(["migrate", path, "--schema", schema]).status == 3)
        #expect(try bytes(path) == before)
    }

    @Test func aViewWithAnInsteadOfTriggerIsCreatedThroughTheTool() throws {
        let directory = try TemporaryDirectory()
        let path = try database(
            in: directory, "CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO item VALUES (1, 'a');")
        let schema = try schemaFile(in: directory, SchemaObjectOrderTests.viewSchema)
        let outcome = try run(["migrate", path, "--schema", schema, "--fill", "item.price=1"])
        #expect(outcome.status == 0, "\(outcome.errors)")
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "INSERT INTO cheap_item(name) VALUES ('b')")
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM cheap_item") == 2)
        }
    }

    /// A type change that would alter stored values is refused (exit 3, naming them) until
    /// `--convert TABLE.COLUMN` allows it (issue 25, item 3).
    @Test func convertAllowsATypeChangeThatAltersValues() throws {
        let directory = try TemporaryDirectory()
        let path = try database(
            in: directory,
            "CREATE TABLE product(id INTEGER PRIMARY KEY, code TEXT); INSERT INTO product VALUES (1, '0042');")
        let schema = try schemaFile(in: directory, "CREATE TABLE product(id INTEGER PRIMARY KEY, code INTEGER);")
        let before = try bytes(path)
        let refused = try run(["migrate", path, "--schema", schema])
        #expect(refused.status == 3)
        #expect(refused.errors.contains("'0042' → 42 (rows with rowid 1)"), "\(refused.errors)")
        #expect(try bytes(path) == before)
        #expect(try run(["migrate", path, "--schema", schema, "--convert", "nodot"]).status == 2)
        let converted = try run(["migrate", path, "--schema", schema, "--convert", "product.code"])
        #expect(converted.status == 0, "\(converted.errors)")
        #expect(
            try DatabaseQueue(path: path).read { db in
                try db.fetchOne(DatabaseValue.self, sql: "SELECT code FROM product")
            } == .integer(42))
    }
}
