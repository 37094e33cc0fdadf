import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// Views with INSTEAD OF triggers, and table renames whose names collide (issue 17, items 5
/// and 7): the plan runs its steps in an order SQLite accepts, and keeps every row.
@Suite struct SchemaObjectOrderTests {
    static let viewSchema = """
        CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price INTEGER);
        CREATE VIEW cheap_item AS SELECT id, name FROM item WHERE price < 10;
        CREATE TRIGGER cheap_item_insert INSTEAD OF INSERT ON cheap_item
        BEGIN INSERT INTO item(name, price) VALUES (new.name, 1); END;
        """

    private func insertThroughTheView(_ queue: DatabaseQueue, _ name: String) throws -> Int? {
        try queue.write { db in
            try db.execute(sql: "INSERT INTO cheap_item(name) VALUES (?)", arguments: [name])
            return try db.fetchOne(Int.self, sql: "SELECT price FROM item WHERE name = ?", arguments: [name])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aViewWithAnInsteadOfTriggerIsCreatedFromScratchRebuiltAndChanged(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1", schema: Self.viewSchema)
        try queue.migrate(migrator)
        #expect(try insertThroughTheView(queue, "first") == 1)

        // A rebuild of the table drops and recreates the view and its trigger.
        migrator.registerMigration(
            "v2",
            schema: Self.viewSchema.replacingOccurrences(of: "price INTEGER", with: "price INTEGER NOT NULL DEFAULT 0"))
        try queue.migrate(migrator)
        #expect(try insertThroughTheView(queue, "second") == 1)

        // Only the view changes: dropping it drops its trigger, which must come back.
        migrator.registerMigration(
            "v3",
            schema: Self.viewSchema.replacingOccurrences(of: "price INTEGER", with: "price INTEGER NOT NULL DEFAULT 0")
                .replacingOccurrences(of: "price < 10", with: "price < 20"))
        try queue.migrate(migrator)
        #expect(try insertThroughTheView(queue, "third") == 1)
        #expect(try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM item") } == 3)
    }

    private func seededEvents(_ kind: DatabaseKind, in directory: TemporaryDirectory) throws -> DatabaseQueue {
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE events(id INTEGER PRIMARY KEY, what TEXT)")
            try db.execute(sql: "CREATE TABLE other(id INTEGER PRIMARY KEY, label TEXT)")
            for id in 1...50 {
                try db.execute(sql: "INSERT INTO events VALUES (?, ?)", arguments: [id, "event-\(id)"])
                try db.execute(sql: "INSERT INTO other VALUES (?, ?)", arguments: [id, "other-\(id)"])
            }
        }
        return queue
    }

    @Test(arguments: DatabaseKind.allCases)
    func aTableRenamedAwayFreesItsNameForAFreshTable(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try seededEvents(kind, in: directory)
        var options = SchemaChangeOptions()
        options.renameTable("events", to: "events_archive")
        try queue.inDatabase { db in
            _ = try db.changeSchema(
                to: """
                    CREATE TABLE events(id INTEGER PRIMARY KEY, what TEXT, at TEXT);
                    CREATE TABLE events_archive(id INTEGER PRIMARY KEY, what TEXT);
                    CREATE TABLE other(id INTEGER PRIMARY KEY, label TEXT);
                    """, options: options)
        }
        try queue.read { db throws in
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM events_archive") == 50)
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM events") == 0)
            #expect(
                try db.fetchAll(String.self, sql: "SELECT name FROM pragma_table_info('events')") == [
                    "id", "what", "at",
                ])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aTableCanBeRenamedOntoATableTheNewSchemaDrops(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try seededEvents(kind, in: directory)
        var options = SchemaChangeOptions()
        options.renameTable("events", to: "other")
        options.allowDropping(table: "other")
        try queue.inDatabase { db in
            _ = try db.changeSchema(to: "CREATE TABLE other(id INTEGER PRIMARY KEY, what TEXT)", options: options)
        }
        try queue.read { db throws in
            #expect(try db.fetchOne(String.self, sql: "SELECT what FROM other WHERE id = 7") == "event-7")
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'events'") == 0)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func twoTablesCanSwapNames(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try seededEvents(kind, in: directory)
        var options = SchemaChangeOptions()
        options.renameTable("events", to: "other")
        options.renameTable("other", to: "events")
        try queue.inDatabase { db in
            _ = try db.changeSchema(
                to: """
                    CREATE TABLE events(id INTEGER PRIMARY KEY, label TEXT);
                    CREATE TABLE other(id INTEGER PRIMARY KEY, what TEXT);
                    """, options: options)
        }
        try queue.read { db throws in
            #expect(try db.fetchOne(String.self, sql: "SELECT what FROM other WHERE id = 7") == "event-7")
            #expect(try db.fetchOne(String.self, sql: "SELECT label FROM events WHERE id = 7") == "other-7")
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func runningTheSameRenamesAgainIsANoOp(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try seededEvents(kind, in: directory)
        var options = SchemaChangeOptions()
        options.renameTable("events", to: "log")
        options.renameColumn("what", to: "message", inTable: "log")
        let schema = """
            CREATE TABLE log(id INTEGER PRIMARY KEY, message TEXT);
            CREATE TABLE other(id INTEGER PRIMARY KEY, label TEXT);
            """
        let first = try queue.inDatabase { db in try db.changeSchema(to: schema, options: options) }
        #expect(first.rebuiltTables == ["log"])
        let again = try queue.inDatabase { db in try db.planSchemaChange(to: schema, options: options) }
        #expect(again.isEmpty && !again.isRefused, "\(again.refusals)")
        #expect(
            try queue.read { db in try db.fetchOne(String.self, sql: "SELECT message FROM log WHERE id = 3") }
                == "event-3")
    }
}
