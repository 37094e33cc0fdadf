import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// What `migrate` would refuse, `plan` refuses first, with the same message (issue 25,
/// item 4): a foreign key SQLite cannot enforce, references to a table the new schema lacks,
/// duplicates under a new unique index, rows an added CHECK refuses.
@Suite struct PlanPredictsMigrateTests {
    private func run(_ arguments: [String]) async throws -> ToolRun { try await ToolRun("serialdb", arguments) }

    private func file(in directory: TemporaryDirectory, _ name: String, _ text: String) throws -> String {
        let path = directory.path(name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private func database(in directory: TemporaryDirectory, _ sql: String) throws -> String {
        let path = directory.path("db.sqlite")
        var configuration = Configuration()
        configuration.journalMode = .delete
        try DatabaseQueue(path: path, configuration: configuration).write { db in try db.execute(sql: sql) }
        return path
    }

    /// Runs `plan` then `migrate`; both must be refused (exit 3) with the same refusals, each
    /// containing `expected`, and the file must be unchanged.
    private func expectRefusedAlike(_ sql: String, _ schema: String, containing expected: String) async throws {
        let directory = try TemporaryDirectory()
        let path = try database(in: directory, sql)
        let schemaPath = try file(in: directory, "schema.sql", schema)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let plan = try await run(["plan", path, "--schema", schemaPath])
        let migrate = try await run(["migrate", path, "--schema", schemaPath])
        #expect(plan.status == 3, "\(plan.output)\(plan.errors)")
        #expect(migrate.status == 3, "\(migrate.errors)")
        plan.checkPlanPredicts(migrate)
        #expect(plan.errors.contains(expected), "\(plan.errors)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }

    @Test func aForeignKeyToColumnsThatAreNoKeyIsRefusedByPlanAndMigrateAlike() async throws {
        try await expectRefusedAlike(
            """
            CREATE TABLE author(id INTEGER PRIMARY KEY, email TEXT);
            INSERT INTO author VALUES (1, 'a@example.com');
            CREATE TABLE book(id INTEGER PRIMARY KEY, title TEXT);
            """,
            """
            CREATE TABLE author(id INTEGER PRIMARY KEY, email TEXT);
            CREATE TABLE book(id INTEGER PRIMARY KEY, title TEXT, author_email TEXT REFERENCES author(email));
            """,
            containing: "Table book has a foreign key (author_email) → author(email) that SQLite cannot enforce")
    }

    @Test func aForeignKeyToATableWithoutPrimaryKeyIsRefusedNamingIt() async throws {
        try await expectRefusedAlike(
            "CREATE TABLE tag(label TEXT); CREATE TABLE note(id INTEGER PRIMARY KEY);",
            "CREATE TABLE tag(label TEXT); CREATE TABLE note(id INTEGER PRIMARY KEY, tag REFERENCES tag);",
            containing: "Table note has a foreign key (tag) → tag()")
    }

    @Test func referencesToATableTheNewSchemaLacksAreRefusedNamingTheRows() async throws {
        try await expectRefusedAlike(
            "CREATE TABLE note(id INTEGER PRIMARY KEY, folder INTEGER); INSERT INTO note VALUES (1, 7), (2, NULL);",
            "CREATE TABLE note(id INTEGER PRIMARY KEY, folder INTEGER REFERENCES folder(id));",
            containing: "1 row(s) refer to no row of folder (rows with rowid 1)")
    }

    @Test func duplicatesUnderANewUniqueIndexAreRefusedByThePlan() async throws {
        try await expectRefusedAlike(
            "CREATE TABLE user(id INTEGER PRIMARY KEY, email TEXT); INSERT INTO user VALUES (1, 'a'), (2, 'a'), (3, 'b');",
            "CREATE TABLE user(id INTEGER PRIMARY KEY, email TEXT); CREATE UNIQUE INDEX user_email ON user(email);",
            containing: "'a' in 2 rows")
    }

    @Test func rowsAnAddedColumnsCheckRefusesAreRefusedByThePlan() async throws {
        try await expectRefusedAlike(
            "CREATE TABLE player(id INTEGER PRIMARY KEY, score INTEGER); INSERT INTO player VALUES (1, 0), (2, 70);",
            "CREATE TABLE player(id INTEGER PRIMARY KEY, score INTEGER, level INTEGER DEFAULT 1 CHECK (level >= score));",
            containing: "Table player gets CHECK (level >= score), but 1 row(s) would fail it (rows with rowid 2)")
    }

    @Test func rowsARebuiltTablesCheckRefusesAreRefusedByThePlanNamingThem() async throws {
        try await expectRefusedAlike(
            "CREATE TABLE t(id INTEGER PRIMARY KEY, x TEXT); INSERT INTO t VALUES (1, '5'), (2, '50'), (3, 'x');",
            "CREATE TABLE t(id INTEGER PRIMARY KEY, x INTEGER CHECK (t.x < 10));",
            containing: "2 row(s) would fail it (rows with rowid 2, 3)")
    }

    /// A CHECK whose outcome depends on the affinity a converted value gets in the new table
    /// (`n > s` compares 10 with 9 as numbers there, but as text without the affinity) is
    /// left to the copy rather than refused wrongly: the change applies.
    @Test func aCheckWhoseOutcomeDependsOnTheNewAffinityIsNotRefusedWrongly() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(
                sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, n TEXT, s TEXT); INSERT INTO t VALUES (1, '10', '9')")
        }
        try queue.inDatabase { db in
            _ = try db.changeSchemaAsPlanned(
                to: "CREATE TABLE t(id INTEGER PRIMARY KEY, n INTEGER, s TEXT, CHECK (n > s))")
        }
        #expect(try queue.read { db in try db.fetchOne(DatabaseValue.self, sql: "SELECT n FROM t") } == .integer(10))
    }

    /// A database whose live schema already holds a key SQLite cannot enforce can still be
    /// migrated to a schema that fixes it.
    @Test(arguments: DatabaseKind.allCases)
    func aSchemaThatFixesAnUnenforceableKeyApplies(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        var configuration = Configuration()
        configuration.foreignKeysEnabled = false
        let queue = try kind.makeQueue(in: directory, configuration: configuration)
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE parent(code TEXT); CREATE TABLE child(code TEXT REFERENCES parent(code));
                    INSERT INTO parent VALUES ('a'); INSERT INTO child VALUES ('a');
                    """)
        }
        let fixed = "CREATE TABLE parent(code TEXT UNIQUE); CREATE TABLE child(code TEXT REFERENCES parent(code));"
        let broken = try queue.inDatabase { db in
            try db.planSchemaChange(
                to: "CREATE TABLE parent(code TEXT, n INTEGER); CREATE TABLE child(code TEXT REFERENCES parent(code));")
        }
        #expect(broken.refusals.contains { $0.contains("cannot enforce") }, "\(broken.refusals)")
        try queue.inDatabase { db in _ = try db.changeSchemaAsPlanned(to: fixed) }
        try queue.read { db throws in
            #expect(try db.fetchAll(Row.self, sql: "PRAGMA foreign_key_check").isEmpty)
            #expect(try db.fetchOne(String.self, sql: "SELECT code FROM child") == "a")
        }
    }

    /// A closure step that creates such a key is refused at the final check, clearly.
    @Test func aClosureThatCreatesAnUnenforceableKeyIsRefused() throws {
        let queue = try DatabaseQueue()
        let error = #expect(throws: SerialDBError.self) {
            try queue.inDatabase { db in
                try db.inSchemaChangeTransaction { db in
                    try db.execute(sql: "CREATE TABLE p(x); CREATE TABLE c(y REFERENCES p(x))")
                }
            }
        }
        #expect(error?.code == .schemaChangeRefused)
        #expect(error?.message.contains("cannot enforce") == true)
        #expect(try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master") } == 0)
    }
}
