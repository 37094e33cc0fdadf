import Foundation
import SerialDB
import SerialDBSyncServer
import SerialDBTestSupport
import Testing

@testable import SerialDBSync

@Suite("Table definitions from the server", .timeLimit(.minutes(5)))
struct SyncSchemaTests {
    @Test(
        "a new table is created with its indexes, TableVersion row and outbox triggers",
        arguments: DatabaseKind.allCases)
    func newTableIsCreated(kind: DatabaseKind) async throws {
        let directory = try TemporaryDirectory()
        var table = noteTable
        table.schema += "; CREATE INDEX note_title ON note(title)"
        let server = try InProcessSyncServer(tables: [table, countryTable])
        let phone = try Device(kind, in: directory, name: "phone", server: server)
        let report = try await phone.client.sync()
        #expect(report.schemaChanges.map(\.table).sorted() == ["country", "note"])
        #expect(report.schemaChanges.allSatisfy { $0.isApplied && $0.fromStructVersion == nil })
        let (versions, objects) = try await phone.queue.read { db in
            (
                try db.fetchAll(
                    Row.self,
                    sql: "SELECT TableName, OwnerType, Owner, StructVersion, Version FROM TableVersion ORDER BY 1"
                ).map { row in (0..<5).map { row[$0] } },
                try db.fetchAll(
                    String.self, sql: "SELECT name FROM sqlite_master WHERE type IN ('index', 'trigger') ORDER BY 1")
            )
        }
        #expect(versions.map { $0[0] } == [.text("country"), .text("note")])
        #expect(versions.map { $0[1] } == [.text("global"), .text("account")])
        #expect(versions.map { $0[2] } == [.text(""), .text("alice")])
        #expect(objects.contains("note_title"))
        #expect(objects.filter { $0.hasPrefix("serialdb_sync_") && $0.hasSuffix("_note") }.count == 3)
        #expect(!objects.contains { $0.hasSuffix("_country") })
    }

    @Test("a changed definition is applied as a rebuild that keeps rows, unsent changes and the triggers")
    func changedDefinitionRebuildsAndKeepsRows() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        _ = try await phone.client.sync()
        for index in 0..<20 { try phone.insertNote("n\(index)", "title \(index)") }
        _ = try await phone.client.sync()
        try phone.insertNote("unsent", "local only")
        var changed = noteTable
        changed.structVersion = 2
        // title gains a CHECK and a new column arrives: a rebuild, not an ADD COLUMN.
        changed.schema = """
            CREATE TABLE note(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL CHECK (length(title) < 100), body TEXT,
                pinned INTEGER NOT NULL DEFAULT 0);
            CREATE INDEX note_pinned ON note(pinned)
            """
        try server.replaceTable(changed)
        let report = try await phone.client.sync()
        let change = try #require(report.schemaChanges.first)
        #expect(change.fromStructVersion == 1 && change.toStructVersion == 2)
        #expect(change.isApplied)
        #expect(change.steps.contains { $0.hasPrefix("rebuild") })
        #expect(try phone.titles().count == 21)
        #expect(try phone.outboxCount() == 0)
        let structVersion = try await phone.queue.read { db in
            try db.fetchOne(Int.self, sql: "SELECT StructVersion FROM TableVersion WHERE TableName = 'note'")
        }
        #expect(structVersion == 2)
        // The triggers came back after the rebuild: a new write is captured.
        try phone.execute("UPDATE note SET pinned = 1 WHERE id = 'n1'")
        #expect(try phone.outboxCount() == 1)
        _ = try await phone.client.sync()
        #expect(
            try server.rows(of: "note", account: "alice").first { $0["id"] == .text("n1") }?["pinned"] == .integer(1))
    }

    @Test("a table fetched again after its definition changed gets every row from 0")
    func changedDefinitionRefetchesFromZero() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let laptop = try Device(.file, in: directory, name: "laptop", server: server)
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        for index in 0..<5 { try phone.insertNote("n\(index)", "t") }
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        var changed = noteTable
        changed.structVersion = 2
        changed.schema = "CREATE TABLE note(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, body TEXT, tag TEXT)"
        try server.replaceTable(changed)
        let before = laptop.transport.calls.withLock { $0.count }
        _ = try await laptop.client.sync()
        let requests = laptop.transport.calls.withLock { Array($0[before...]) }
        #expect(requests == ["check-update", "fetch-schema", "fetch-data"])
        #expect(try laptop.cursor() == 5)
    }

    @Test("a change the local rows do not fit is refused, reported, and changes nothing")
    func unfitChangeIsRefused() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        _ = try await phone.client.sync()
        try phone.insertNote("a", "keep me", body: "precious")
        _ = try await phone.client.sync()
        var unfit = noteTable
        unfit.structVersion = 2
        unfit.schema =
            "CREATE TABLE note(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, body TEXT, n INTEGER NOT NULL)"
        // The server refuses a definition its own stored rows do not fit, so the phone meets
        // it at a server whose store does not hold its row (a new deployment).
        #expect(throws: SyncServerError.self) { try server.replaceTable(unfit) }
        let moved = try InProcessSyncServer(tables: [unfit])
        let client = try SyncClient(queue: phone.queue, transport: moved.transport(token: "t-alice"))
        let schemaBefore = try await phone.queue.read { db in
            try db.fetchAll(String.self, sql: "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name")
        }
        let report = try await client.sync()
        let change = try #require(report.schemaChanges.first)
        #expect(!change.isApplied)
        #expect(change.refusals.joined().contains("note.n"))
        let schemaAfter = try await phone.queue.read { db in
            try db.fetchAll(String.self, sql: "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name")
        }
        #expect(schemaAfter == schemaBefore)
        let row = try await phone.queue.read { db in
            try db.fetchOne(String.self, sql: "SELECT body FROM note WHERE id = 'a'")
        }
        #expect(row == "precious")
        #expect(try phone.cursor() == 1)
    }

    @Test("the desired schema restates the app's other objects and leaves SerialDB's out")
    func desiredSchemaReplacesOneTable() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            _ = try SyncMetadata.install(db)
            try db.execute(
                sql: """
                    CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT);
                    CREATE INDEX note_title ON note(title);
                    CREATE TABLE other(id INTEGER PRIMARY KEY, note_id TEXT REFERENCES note(id));
                    CREATE INDEX other_note ON other(note_id);
                    CREATE VIEW titles AS SELECT title FROM note;
                    """)
        }
        let sql = try queue.read { db in
            try TableSchemaChange.desiredSchema(
                db, replacing: ["note"], with: "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT, x)")
        }
        #expect(sql.contains("CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT, x)"))
        #expect(!sql.contains("note_title"))
        #expect(sql.contains("other_note"))
        #expect(sql.contains("CREATE VIEW titles"))
        #expect(sql.contains("TableVersion"))
        #expect(!sql.contains("serialdb_"))
    }

    @Test(
        "a new definition of a table keeps the app's full-text index over it, refilled",
        arguments: DatabaseKind.allCases)
    func fullTextIndexOfTheAppSurvivesASyncedTableChange(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT);
                    CREATE VIRTUAL TABLE note_fts USING fts5(title, content='note');
                    CREATE TRIGGER note_ai AFTER INSERT ON note BEGIN
                        INSERT INTO note_fts(rowid, title) VALUES (new.rowid, new.title);
                    END;
                    """)
            for index in 1...50 {
                try db.execute(
                    sql: "INSERT INTO note(id, title) VALUES (?, ?)",
                    arguments: ["n\(index)", index % 5 == 0 ? nil : "title \(index)"])
            }
        }
        try queue.inDatabase { db in
            // The server adds a column before title: a rebuild, planned the way a sync plans it.
            let desired = try TableSchemaChange.desiredSchema(
                db, replacing: ["note"],
                with: "CREATE TABLE note(id TEXT PRIMARY KEY, done INTEGER NOT NULL DEFAULT 0, title TEXT)")
            let plan = try db.planSchemaChange(to: desired)
            #expect(plan.refusals.isEmpty, "\(plan.refusals)")
            try db.applySchemaChange(plan)
            #expect(plan.rebuiltTables == ["note"])
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM note_fts WHERE note_fts MATCH 'title'") == 40)
            try db.execute(sql: "INSERT INTO note(id, title) VALUES ('new', 'fresh')")
            #expect(
                try db.fetchOne(
                    String.self,
                    sql: "SELECT id FROM note WHERE rowid = (SELECT rowid FROM note_fts WHERE note_fts MATCH 'fresh')")
                    == "new")
        }
    }
}
