import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

@Suite struct TableRebuildTests {
    static let parentAndChild = """
        CREATE TABLE author(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, born INTEGER);
        CREATE TABLE book(id INTEGER PRIMARY KEY, author_id INTEGER NOT NULL REFERENCES author(id) ON DELETE CASCADE, title TEXT);
        CREATE INDEX author_name ON author(name);
        CREATE VIEW author_books AS SELECT author.name AS name, count(book.id) AS books FROM author LEFT JOIN book ON book.author_id = author.id GROUP BY author.id;
        CREATE TABLE audit(message TEXT);
        CREATE TRIGGER author_renamed AFTER UPDATE OF name ON author BEGIN INSERT INTO audit VALUES ('renamed ' || new.name); END;
        """

    private func seededParentAndChild(_ kind: DatabaseKind, in directory: TemporaryDirectory) throws -> DatabaseQueue {
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(sql: Self.parentAndChild)
            for id in 1...100 {
                try db.execute(
                    sql: "INSERT INTO author(id, name, born) VALUES (?, ?, ?)",
                    arguments: [id, "author-\(id)", 1900 + id])
                for book in 0..<3 {
                    try db.execute(
                        sql: "INSERT INTO book(author_id, title) VALUES (?, ?)", arguments: [id, "book-\(id)-\(book)"])
                }
            }
            // Ids 101...105 were used and deleted: AUTOINCREMENT must never hand them out again.
            for id in 101...105 {
                try db.execute(sql: "INSERT INTO author(id, name) VALUES (?, 'gone')", arguments: [id])
            }
            try db.execute(sql: "DELETE FROM author WHERE id > 100")
        }
        return queue
    }

    @Test(arguments: DatabaseKind.allCases)
    func rebuildingAParentKeepsItsViewTriggerIndexAndEveryChildRow(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try seededParentAndChild(kind, in: directory)
        // born becomes TEXT and name gets a CHECK: only a rebuild can do that.
        let newSchema = Self.parentAndChild.replacingOccurrences(
            of: "name TEXT NOT NULL, born INTEGER", with: "name TEXT NOT NULL CHECK (length(name) > 0), born TEXT")
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v2", schema: newSchema)
        try queue.migrate(migrator)
        try queue.write { db throws in
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM book") == 300)
            #expect(try db.fetchAll(Row.self, sql: "PRAGMA foreign_key_check").isEmpty)
            #expect(try db.fetchOne(Int.self, sql: "SELECT books FROM author_books WHERE name = 'author-7'") == 3)
            #expect(
                try db.fetchOne(String.self, sql: "SELECT type FROM sqlite_master WHERE name = 'author_name'")
                    == "index")
            #expect(try db.fetchOne(String.self, sql: "SELECT typeof(born) FROM author WHERE id = 1") == "text")
            try db.execute(sql: "UPDATE author SET name = 'renamed' WHERE id = 1")
            #expect(try db.fetchAll(String.self, sql: "SELECT message FROM audit") == ["renamed renamed"])
            // The foreign key still points at the rebuilt table, and cascades from it.
            try db.execute(sql: "DELETE FROM author WHERE id = 2")
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM book WHERE author_id = 2") == 0)
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM book") == 297)
            // AUTOINCREMENT continues above the old maximum, including deleted ids.
            try db.execute(sql: "INSERT INTO author(name) VALUES ('next')")
            #expect(db.lastInsertedRowID == 106)
            #expect(
                try db.fetchOne(String.self, sql: "SELECT sql FROM sqlite_master WHERE name = 'author'")?.contains(
                    "serialdb") == false)
        }
    }

    @Test func theRebuildNeverRenamesTheLiveTable() throws {
        let directory = try TemporaryDirectory()
        let queue = try seededParentAndChild(.file, in: directory)
        let statements = Locked<[String]>([])
        var configuration = Configuration()
        configuration.trace = { sql in statements.withLock { $0.append(sql) } }
        try queue.close()
        let traced = try DatabaseQueue(path: directory.path("test.sqlite"), configuration: configuration)
        let plan = try traced.inDatabase { db in
            try db.changeSchemaAsPlanned(
                to: Self.parentAndChild.replacingOccurrences(of: "born INTEGER", with: "born REAL"))
        }
        #expect(plan.rebuiltTables == ["author"])
        let renames = statements.withLock { $0 }.filter { $0.uppercased().hasPrefix("ALTER TABLE") }
        #expect(renames == ["ALTER TABLE \"serialdb_new_author\" RENAME TO \"author\""])
        #expect(try traced.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM book") } == 300)
    }

    @Test(arguments: DatabaseKind.allCases)
    func rowidsOfATableWithoutIntegerPrimaryKeyArePreserved(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE note(body TEXT, tag TEXT)")
            for index in 0..<500 {
                try db.execute(
                    sql: "INSERT INTO note(rowid, body, tag) VALUES (?, ?, ?)",
                    arguments: [index * 7 + 3, "n\(index)", "t"])
            }
            try db.execute(sql: "DELETE FROM note WHERE rowid % 2 = 0")
        }
        let before = try queue.read { db in
            try db.fetchAll(Row.self, sql: "SELECT rowid, body FROM note ORDER BY rowid")
        }
        try queue.inDatabase { db in
            _ = try db.changeSchemaAsPlanned(
                to: "CREATE TABLE note(body TEXT NOT NULL, created INTEGER)", options: allowDroppingTag())
        }
        let after = try queue.read { db in try db.fetchAll(Row.self, sql: "SELECT rowid, body FROM note ORDER BY rowid")
        }
        #expect(after.map { [$0[0], $0[1]] } == before.map { [$0[0], $0[1]] })
        #expect(after.count == 250)
    }

    private func allowDroppingTag() -> SchemaChangeOptions {
        var options = SchemaChangeOptions()
        options.allowDropping(column: "tag", inTable: "note")
        return options
    }

    @Test(arguments: DatabaseKind.allCases)
    func renamedColumnsAndTablesKeepTheirValues(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try Player.createTable(db, rows: 200)
        }
        var options = SchemaChangeOptions()
        options.renameTable("player", to: "gamer")
        options.renameColumn("score", to: "points", inTable: "gamer")
        try queue.inDatabase { db in
            _ = try db.changeSchemaAsPlanned(
                to: "CREATE TABLE gamer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, points INTEGER NOT NULL DEFAULT 0)",
                options: options)
        }
        try queue.read { db throws in
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'player'") == 0)
            #expect(try db.fetchOne(Int.self, sql: "SELECT sum(points) FROM gamer") == 20_100)
            #expect(try db.fetchOne(String.self, sql: "SELECT name FROM gamer WHERE id = 17") == "player-17")
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func namesWithQuotesAndSpacesAreRebuilt(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        let table = "my \"odd\" table"
        let column = "the 'value'"
        try queue.write { db in
            try db.execute(
                sql:
                    "CREATE TABLE \(table.quotedDatabaseIdentifier)(id INTEGER PRIMARY KEY, \(column.quotedDatabaseIdentifier) INTEGER)"
            )
            try db.execute(
                sql:
                    "CREATE INDEX \"odd index\" ON \(table.quotedDatabaseIdentifier)(\(column.quotedDatabaseIdentifier))"
            )
            for id in 1...50 {
                try db.execute(
                    sql: "INSERT INTO \(table.quotedDatabaseIdentifier) VALUES (?, ?)", arguments: [id, id * 2])
            }
        }
        let newSchema = """
            CREATE TABLE \(table.quotedDatabaseIdentifier)(id INTEGER PRIMARY KEY, \(column.quotedDatabaseIdentifier) TEXT NOT NULL);
            CREATE INDEX "odd index" ON \(table.quotedDatabaseIdentifier)(\(column.quotedDatabaseIdentifier));
            """
        let plan = try queue.inDatabase { db in try db.changeSchemaAsPlanned(to: newSchema) }
        #expect(plan.rebuiltTables == [table])
        try queue.read { db throws in
            #expect(
                try db.fetchOne(
                    Int.self,
                    sql: "SELECT sum(\(column.quotedDatabaseIdentifier)) FROM \(table.quotedDatabaseIdentifier)")
                    == 2550)
            #expect(try db.planSchemaChange(to: newSchema).isEmpty)
        }
    }

    /// Keywords and types in any case, and references to a name in another case than its
    /// declaration: no work. (The case of a declared name is part of the schema, see
    /// `SchemaSpellingTests`.)
    @Test func caseQuotingWhitespaceAndCommentsDoNotTriggerWork() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in try db.execute(sql: Self.parentAndChild) }
        let restyled = """
            create table "author" ( "id" integer primary key autoincrement , [name] text not null, `born` INTEGER ) ;
            -- the books
            CREATE   TABLE book(id INTEGER PRIMARY KEY, author_id INTEGER NOT NULL REFERENCES AUTHOR(ID) ON DELETE CASCADE, title TEXT);
            create index author_name on AUTHOR ( NAME ) ;
            CREATE VIEW author_books AS SELECT author.name AS name, count(book.id) AS books FROM author LEFT JOIN book ON book.author_id = author.id GROUP BY author.id;
            CREATE TABLE audit(message TEXT /* free text */);
            CREATE TRIGGER author_renamed AFTER UPDATE OF name ON author BEGIN INSERT INTO audit VALUES ('renamed ' || new.name); END;
            """
        let plan = try queue.inDatabase { db in try db.planSchemaChange(to: restyled) }
        #expect(plan.isEmpty, "unexpected steps: \(plan.sql)")
        let changedLiteral = restyled.replacingOccurrences(of: "'renamed '", with: "'Renamed '")
        let literalPlan = try queue.inDatabase { db in try db.planSchemaChange(to: changedLiteral) }
        #expect(
            literalPlan.steps.map(\.summary) == [
                "drop trigger \"author_renamed\"", "create trigger \"author_renamed\"",
            ])
    }

    @Test(arguments: DatabaseKind.allCases)
    func appendedNullableColumnsUseAddColumnAndKeepTheRest(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try seededParentAndChild(kind, in: directory)
        let newSchema =
            Self.parentAndChild.replacingOccurrences(
                of: "born INTEGER)", with: "born INTEGER, country TEXT, verified INTEGER NOT NULL DEFAULT 0)")
            + "CREATE INDEX book_title ON book(title);"
        let plan = try queue.inDatabase { db in try db.changeSchemaAsPlanned(to: newSchema) }
        #expect(plan.rebuiltTables.isEmpty)
        #expect(
            plan.steps.map(\.summary) == [
                "add column country to \"author\"", "add column verified to \"author\"", "create index \"book_title\"",
            ])
        try queue.read { db throws in
            #expect(
                try db.fetchOne(Int.self, sql: "SELECT count(*) FROM author WHERE verified = 0 AND country IS NULL")
                    == 100)
            #expect(try db.planSchemaChange(to: newSchema).isEmpty)
        }
    }

    @Test func aNotNullColumnWithoutDefaultOnAPopulatedTableIsRefusedAndTheFileIsUnchanged() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("refused.sqlite")
        var configuration = Configuration()
        configuration.journalMode = .delete
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.write { db in try Player.createTable(db, rows: 20) }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let newSchema =
            "CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL DEFAULT 0, team TEXT NOT NULL)"
        var migrator = DatabaseMigrator()
        migrator.registerMigration("add-team", schema: newSchema)
        let error = #expect(throws: SerialDBError.self) { try queue.migrate(migrator) }
        let cause = error?.underlying as? SerialDBError
        #expect(cause?.code == .schemaChangeRefused)
        #expect(cause?.message.contains("player.team") == true)
        #expect(cause?.message.contains("20 row(s)") == true)
        try queue.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)

        // With a fill value the same change goes through.
        var options = SchemaChangeOptions()
        options.fill(column: "team", inTable: "player", with: "unassigned")
        var filled = DatabaseMigrator()
        filled.registerMigration("add-team", schema: newSchema, options: options)
        let reopened = try DatabaseQueue(path: path, configuration: configuration)
        try reopened.migrate(filled)
        #expect(
            try reopened.read { db in
                try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player WHERE team = 'unassigned'")
            } == 20)
    }

    @Test func columnsAndTablesHoldingDataAreNotDroppedUnlessAllowed() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try Player.createTable(db, rows: 5)
            try db.execute(
                sql: "CREATE TABLE empty_table(x); CREATE TABLE full_table(x); INSERT INTO full_table VALUES (1)")
        }
        let newSchema = "CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL)"
        let plan = try queue.inDatabase { db in try db.planSchemaChange(to: newSchema) }
        #expect(plan.refusals.count == 2)
        #expect(plan.refusals.contains { $0.contains("player.score holds 5 non-NULL value(s)") })
        #expect(plan.refusals.contains { $0.contains("\"full_table\" holds 1 row(s)") })
        #expect(throws: SerialDBError.self) { try queue.inDatabase { db in try db.applySchemaChange(plan) } }
        #expect(
            try queue.read { db in
                try db.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE type = 'table'")
            } == 3)

        var options = SchemaChangeOptions()
        options.allowDropping(column: "score", inTable: "player")
        options.allowDropping(table: "full_table")
        try queue.inDatabase { db in _ = try db.changeSchemaAsPlanned(to: newSchema, options: options) }
        #expect(
            try queue.read { db in
                try db.fetchAll(String.self, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
            } == ["player"])
    }

    @Test func aTableThatKeepsNoColumnKeepsItsRowsOrIsRefused() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t(a TEXT PRIMARY KEY, b TEXT) WITHOUT ROWID")
            for index in 1...7 { try db.execute(sql: "INSERT INTO t VALUES (?, ?)", arguments: ["k\(index)", "v"]) }
        }
        var options = SchemaChangeOptions()
        options.allowDropping(column: "a", inTable: "t")
        options.allowDropping(column: "b", inTable: "t")
        // A rowid table keeps the rows, each with a fresh rowid and the new column's default.
        try queue.inDatabase { db in
            _ = try db.changeSchemaAsPlanned(to: "CREATE TABLE t(c INTEGER DEFAULT 5)", options: options)
        }
        #expect(
            try queue.read { db in try db.fetchAll(Int.self, sql: "SELECT c FROM t") } == Array(repeating: 5, count: 7))
        // A WITHOUT ROWID table could not key them: refused, nothing touched.
        options.allowDropping(column: "c", inTable: "t")
        let plan = try queue.inDatabase { db in
            try db.planSchemaChange(to: "CREATE TABLE t(d TEXT PRIMARY KEY) WITHOUT ROWID", options: options)
        }
        #expect(plan.refusals.contains { $0.contains("would have no key") })
    }

    @Test func rowsThatDoNotFitTheNewDefinitionRollEverythingBack() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("check.sqlite")
        var configuration = Configuration()
        configuration.journalMode = .delete
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.write { db in
            try Player.createTable(db, rows: 100)
            try db.execute(sql: "CREATE TABLE other(x INTEGER)")
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        // `other` is rebuilt first and would succeed; `player` fails on the CHECK half-way.
        let newSchema = """
            CREATE TABLE other(x TEXT);
            CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL DEFAULT 0 CHECK (score < 50));
            """
        let error = #expect(throws: SerialDBError.self) {
            try queue.inDatabase { db in try db.changeSchemaAsPlanned(to: newSchema) }
        }
        #expect(error?.code == .schemaChangeRefused)
        // The plan evaluates the new CHECK over the rows: the refusal comes before any copy.
        #expect(error?.message.contains("Table player gets CHECK (score < 50), but 51 row(s) would fail it") == true)
        try queue.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }

    @Test func rebuildsReportRowsCopiedThroughTheMigrationProgress() async throws {
        let queue = try DatabaseQueue()
        try await queue.write { db in try Player.createTable(db, rows: 120_000) }
        var migrator = DatabaseMigrator()
        migrator.registerMigration(
            "score-real",
            schema: "CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score REAL NOT NULL DEFAULT 0)")
        let upgrade = queue.startMigration(migrator)
        var units: [Int] = []
        for await report in upgrade.progress where report.event == .stepProgress {
            #expect(report.totalUnits == 120_000)
            units.append(report.completedUnits ?? -1)
        }
        try await upgrade.wait()
        #expect(units == [50_000, 100_000, 120_000])
    }

    @Test func theDryRunPrintsTheStatementsItWillRun() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in try Player.createTable(db, rows: 3) }
        let plan = try queue.inDatabase { db in
            try db.planSchemaChange(
                to: "CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score REAL NOT NULL DEFAULT 0)")
        }
        #expect(
            plan.sql == """
                -- rebuild "player" (3 rows): column score: type INTEGER → REAL
                CREATE TABLE "serialdb_new_player"(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score REAL NOT NULL DEFAULT 0);
                INSERT OR ABORT INTO "serialdb_new_player"("id", "name", "score") SELECT "id", "name", "score" FROM "player";
                DROP TABLE "player";
                ALTER TABLE "serialdb_new_player" RENAME TO "player";
                """)
    }
}
