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
    private func run(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> ToolRun {
        guard arguments.first == "migrate", arguments.count > 1, FileManager.default.fileExists(atPath: arguments[1])
        else { return try await ToolRun("serialdb", arguments) }
        let plan = try await ToolRun("serialdb", ["plan"] + arguments.dropFirst())
        let migrate = try await ToolRun("serialdb", arguments)
        plan.checkPlanPredicts(migrate, sourceLocation: sourceLocation)
        return migrate
    }

    /// The first row `sql` reads from the file, read synchronously: a `Row` is not `Sendable`,
    /// so the async `read` cannot return one.
    private func firstRow(in path: String, _ sql: String) throws -> Row? {
        try DatabaseQueue(path: path).read { db in try db.fetchOne(Row.self, sql: sql) }
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

    @Test func rerunningTheSameRenameIsANoOp() async throws {
        let directory = try TemporaryDirectory()
        let path = try database(
            in: directory,
            "CREATE TABLE player(id INTEGER PRIMARY KEY, score INTEGER); INSERT INTO player VALUES (1, 10);")
        let schema = try schemaFile(in: directory, "CREATE TABLE player(id INTEGER PRIMARY KEY, points INTEGER);")
        let first = try await run(["migrate", path, "--schema", schema, "--rename", "player.score=points"])
        #expect(first.status == 0, "\(first.errors)")
        let again = try await run(["migrate", path, "--schema", schema, "--rename", "player.score=points"])
        #expect(again.status == 0, "\(again.errors)")
        #expect(again.output.contains("nothing to do"))
    }

    @Test func fillValuesTakeTheColumnsTypeAffinity() async throws {
        let directory = try TemporaryDirectory()
        let path = try database(in: directory, "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1);")
        let schema = try schemaFile(
            in: directory,
            "CREATE TABLE t(id INTEGER PRIMARY KEY, code TEXT NOT NULL, n INTEGER NOT NULL, r REAL NOT NULL);")
        // Quoted, 007 is text; bare, it is the number 7; nan is a bare word, so text.
        let outcome = try await run([
            "migrate", path, "--schema", schema, "--fill", "t.code='007'", "--fill", "t.n=007", "--fill", "t.r=nan",
        ])
        #expect(outcome.status == 0, "\(outcome.errors)")
        let row = try firstRow(in: path, "SELECT code, typeof(code), n, typeof(n), r FROM t")
        #expect(row?[0] == .text("007"))
        #expect(row?[1] == .text("text"))
        #expect(row?[2] == .integer(7))
        #expect(row?[3] == .text("integer"))
        #expect(row?[4] == .text("nan"))
    }

    @Test func fillValuesAreSQLLiteralsStoredWithTheirType() async throws {
        let directory = try TemporaryDirectory()
        let path = try database(in: directory, "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1);")
        let columns = ["e", "s", "q", "i", "r", "b", "w", "u", "k", "x"]
        let schema = try schemaFile(
            in: directory,
            "CREATE TABLE t(id INTEGER PRIMARY KEY, e TEXT NOT NULL, s TEXT NOT NULL, q TEXT NOT NULL, "
                + "i INTEGER NOT NULL, r REAL NOT NULL, b BLOB NOT NULL, w TEXT NOT NULL, u NOT NULL, "
                + "k TEXT NOT NULL, x NOT NULL);")
        let fills = [
            "t.e=''", "t.s='a b'", "t.q='it''s'", "t.i=42", "t.r=-1.5e1", "t.b=X'00ff'", "t.w=none", "t.u=0x10",
            "t.k='Grüße, ☕'", "t.x=TRUE",
        ]
        let outcome = try await run(["migrate", path, "--schema", schema] + fills.flatMap { ["--fill", $0] })
        #expect(outcome.status == 0, "\(outcome.errors)")
        let row = try #require(
            try firstRow(
                in: path, "SELECT " + columns.map { "\($0), typeof(\($0))" }.joined(separator: ", ") + " FROM t"))
        let expected: [(DatabaseValue, String)] = [
            (.text(""), "text"), (.text("a b"), "text"), (.text("it's"), "text"), (.integer(42), "integer"),
            (.real(-15), "real"), (.blob(Data([0, 255])), "blob"), (.text("none"), "text"), (.integer(16), "integer"),
            (.text("Grüße, ☕"), "text"), (.integer(1), "integer"),
        ]
        for (index, (value, type)) in expected.enumerated() {
            #expect(row[2 * index] == value, "\(columns[index])")
            #expect(row[2 * index + 1] == .text(type), "\(columns[index])")
        }
    }

    /// NULL is read as SQL's null, not the text "NULL": a NOT NULL column refuses it when
    /// planning (plan and migrate both exit 3, with the same refusal), and nothing changes.
    @Test func aNullFillIsNullAndANotNullColumnRefusesIt() async throws {
        let directory = try TemporaryDirectory()
        let path = try database(in: directory, "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1);")
        let schema = try schemaFile(in: directory, "CREATE TABLE t(id INTEGER PRIMARY KEY, c TEXT NOT NULL);")
        let before = try bytes(path)
        let outcome = try await run(["migrate", path, "--schema", schema, "--fill", "t.c=null"])
        #expect(outcome.status == 3, "\(outcome.errors)")
        #expect(outcome.errors.contains("NOT NULL"), "\(outcome.errors)")
        #expect(try bytes(path) == before)
    }

    /// Anything but a literal or a single word is refused before SQLite sees it, so no
    /// expression or subquery runs.
    @Test(arguments: [
        ("t.c=", "write '' for the empty text"), ("t.c=abs(1)", "neither an SQL literal"),
        ("t.c=(SELECT 1)", "neither an SQL literal"), ("t.c='open", "neither an SQL literal"),
        ("t.c=1 + 1", "neither an SQL literal"), ("t.c='a'||'b'", "neither an SQL literal"),
        ("t.c=CURRENT_TIMESTAMP", "is an SQL expression"), ("t.c=X'0'", "not a value SQLite can read"),
        ("t.c=--1", "neither an SQL literal"), ("t.c=1e", "neither an SQL literal"),
        ("t.c=0x", "neither an SQL literal"), ("t=1", "wants TABLE.COLUMN=VALUE"),
    ])
    func aFillThatIsNotAValueIsAUsageError(fill: String, message: String) async throws {
        let directory = try TemporaryDirectory()
        let path = try database(in: directory, "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1);")
        let schema = try schemaFile(in: directory, "CREATE TABLE t(id INTEGER PRIMARY KEY, c TEXT NOT NULL);")
        let before = try bytes(path)
        let outcome = try await run(["migrate", path, "--schema", schema, "--fill", fill])
        #expect(outcome.status == 2, "\(fill): \(outcome.errors)")
        #expect(outcome.errors.contains(message), "\(fill): \(outcome.errors)")
        #expect(outcome.errors.contains("Run `serialdb --help`"), "\(fill)")
        #expect(try bytes(path) == before)
    }

    @Test func aDropRolledBackForAForeignKeyExitsAsARefusal() async throws {
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
        let outcome = try await run(["migrate", path, "--schema", schema, "--allow-drop", "parent"])
        #expect(outcome.status == 3, "\(outcome.errors)")
        #expect(try bytes(path) == before)
    }

    @Test func aMissingSchemaFileIsAUsageError() async throws {
        let directory = try TemporaryDirectory()
        let path = try database(in: directory, "CREATE TABLE t(id INTEGER PRIMARY KEY);")
        let outcome = try await run(["plan", path, "--schema", directory.path("missing.sql")])
        #expect(outcome.status == 2)
        #expect(outcome.errors.contains("missing.sql"))
    }

    @Test func planReportsRowsThatWouldBeRefusedBeforeAnythingStarts() async throws {
        let directory = try TemporaryDirectory()
        let path = try database(
            in: directory,
            "CREATE TABLE user(id INTEGER PRIMARY KEY, email TEXT); INSERT INTO user VALUES (1, 'a'), (2, 'a'), (3, 'b');"
        )
        let schema = try schemaFile(
            in: directory, "CREATE TABLE user(id INTEGER PRIMARY KEY, email TEXT UNIQUE ON CONFLICT REPLACE);")
        let before = try bytes(path)
        let plan = try await run(["plan", path, "--schema", schema])
        #expect(plan.status == 3)
        #expect(plan.errors.contains("'a' in 2 rows"), "\(plan.errors)")
        #expect(try await run(["migrate", path, "--schema", schema]).status == 3)
        #expect(try bytes(path) == before)
    }

    @Test func aViewWithAnInsteadOfTriggerIsCreatedThroughTheTool() async throws {
        let directory = try TemporaryDirectory()
        let path = try database(
            in: directory, "CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO item VALUES (1, 'a');")
        let schema = try schemaFile(in: directory, SchemaObjectOrderTests.viewSchema)
        let outcome = try await run(["migrate", path, "--schema", schema, "--fill", "item.price=1"])
        #expect(outcome.status == 0, "\(outcome.errors)")
        try await DatabaseQueue(path: path).write { db in
            try db.execute(sql: "INSERT INTO cheap_item(name) VALUES ('b')")
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM cheap_item") == 2)
        }
    }

    /// A type change that would alter stored values is refused (exit 3, naming them) until
    /// `--convert TABLE.COLUMN` allows it (issue 25, item 3).
    @Test func convertAllowsATypeChangeThatAltersValues() async throws {
        let directory = try TemporaryDirectory()
        let path = try database(
            in: directory,
            "CREATE TABLE product(id INTEGER PRIMARY KEY, code TEXT); INSERT INTO product VALUES (1, '0042');")
        let schema = try schemaFile(in: directory, "CREATE TABLE product(id INTEGER PRIMARY KEY, code INTEGER);")
        let before = try bytes(path)
        let refused = try await run(["migrate", path, "--schema", schema])
        #expect(refused.status == 3)
        #expect(refused.errors.contains("'0042' → 42 (rows with rowid 1)"), "\(refused.errors)")
        #expect(try bytes(path) == before)
        #expect(try await run(["migrate", path, "--schema", schema, "--convert", "nodot"]).status == 2)
        let converted = try await run(["migrate", path, "--schema", schema, "--convert", "product.code"])
        #expect(converted.status == 0, "\(converted.errors)")
        #expect(
            try await DatabaseQueue(path: path).read { db in
                try db.fetchOne(DatabaseValue.self, sql: "SELECT code FROM product")
            } == .integer(42))
    }
}
