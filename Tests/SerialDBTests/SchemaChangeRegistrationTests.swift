import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// A declarative schema change compiles the desired schema in a scratch database: it must
/// know the collations and functions the live connection has, also those the application
/// registered on it after it opened (not in `prepareDatabase`).
@Suite struct SchemaChangeRegistrationTests {
    private static let reverse = DatabaseCollation("REVERSE") { a, b in
        switch a.compare(b) {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }

    private static let slug = DatabaseFunction("slug", argumentCount: 1, deterministic: true) { arguments in
        guard case .text(let text) = arguments[0] else { return nil }
        return text.lowercased().replacingOccurrences(of: " ", with: "-")
    }

    private static let initial = "CREATE TABLE post(id INTEGER PRIMARY KEY, title TEXT NOT NULL);"

    /// Every place a schema can use a collation or a function: a column's collation, a CHECK,
    /// an index expression, a generated column and a default.
    private static let desired = """
        CREATE TABLE post(
            id INTEGER PRIMARY KEY,
            title TEXT NOT NULL COLLATE REVERSE CHECK (slug(title) <> ''),
            kind TEXT NOT NULL DEFAULT (slug('Blog Post')),
            path TEXT GENERATED ALWAYS AS ('/' || slug(title)) VIRTUAL);
        CREATE UNIQUE INDEX post_slug ON post(slug(title));
        CREATE INDEX post_title_reverse ON post(title COLLATE REVERSE);
        """

    private func register(_ db: Database) throws {
        try db.add(collation: Self.reverse)
        try db.add(function: Self.slug)
    }

    private func checkChanged(_ queue: DatabaseQueue) throws {
        try queue.write { db in
            try db.execute(sql: "INSERT INTO post(title) VALUES ('Zed Post')")
            let rows = try db.fetchAll(Row.self, sql: "SELECT title, kind, path FROM post ORDER BY title")
            #expect(try rows.map { try $0.decode(String.self, at: 0) } == ["Zed Post", "Hello World", "Alpha"])
            #expect(try rows.map { try $0.decode(String.self, at: 1) } == ["blog-post", "blog-post", "blog-post"])
            #expect(try rows.map { try $0.decode(String.self, at: 2) } == ["/zed-post", "/hello-world", "/alpha"])
            // The unique index on slug(title) holds.
            let duplicate = #expect(throws: DatabaseError.self) {
                try db.execute(sql: "INSERT INTO post(title) VALUES ('HELLO world')")
            }
            #expect(duplicate?.resultCode == .SQLITE_CONSTRAINT)
            // The CHECK holds.
            #expect(throws: DatabaseError.self) { try db.execute(sql: "INSERT INTO post(title) VALUES ('')") }
        }
    }

    private func makeQueue(kind: DatabaseKind, in directory: TemporaryDirectory) throws -> DatabaseQueue {
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(sql: Self.initial)
            try db.execute(sql: "INSERT INTO post(title) VALUES ('Alpha'), ('Hello World')")
        }
        return queue
    }

    @Test(arguments: DatabaseKind.allCases)
    func aChangeOnAConnectionThatRegisteredThemLaterCompiles(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try makeQueue(kind: kind, in: directory)
        try queue.inDatabase { db in
            try register(db)
            let plan = try db.planSchemaChange(to: Self.desired)
            #expect(!plan.isRefused, "\(plan.refusals)")
            try db.applySchemaChange(plan)
        }
        try checkChanged(queue)
    }

    @Test(arguments: DatabaseKind.allCases)
    func aSchemaStepOfAMigrationSeesThemToo(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try makeQueue(kind: kind, in: directory)
        try queue.inDatabase { db in try register(db) }
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1", schema: Self.initial)
        migrator.registerMigration("v2", schema: Self.desired)
        try queue.migrate(migrator)
        try checkChanged(queue)
    }

    /// The scratch database has only what the connection has: a schema naming a collation the
    /// connection lacks is still refused, before anything is touched.
    @Test func aCollationTheConnectionLacksIsStillRefused() throws {
        let directory = try TemporaryDirectory()
        let queue = try makeQueue(kind: .file, in: directory)
        let error = #expect(throws: SerialDBError.self) {
            try queue.inDatabase { db in try db.changeSchema(to: Self.desired) }
        }
        #expect(error?.code == .schemaChangeRefused)
        #expect("\(error.map { "\($0)" } ?? "")".contains("no such collation sequence: REVERSE"))
        let titles = try queue.read { db in try db.fetchAll(String.self, sql: "SELECT title FROM post ORDER BY id") }
        #expect(titles == ["Alpha", "Hello World"])
    }
}
