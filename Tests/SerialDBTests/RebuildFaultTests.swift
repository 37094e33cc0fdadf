import CSQLiteShims
import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// A disk that fails half-way through a rebuild: whichever write or sync fails, the error
/// surfaces and the database is exactly as it was before the migration.
@Suite(.serialized) struct RebuildFaultTests {
    static let oldSchema = """
        CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price INTEGER);
        CREATE INDEX item_name ON item(name);
        CREATE TABLE tag(item_id INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE, label TEXT);
        """
    static let newSchema = """
        CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL DEFAULT 0);
        CREATE INDEX item_name ON item(name);
        CREATE TABLE tag(item_id INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE, label TEXT);
        """

    private func makeDatabase(_ path: String, journalMode: Configuration.JournalMode) throws {
        var configuration = Configuration()
        configuration.journalMode = journalMode
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1", schema: Self.oldSchema)
        try queue.migrate(migrator)
        try queue.write { db in
            for id in 1...2000 {
                try db.execute(
                    sql: "INSERT INTO item(id, name, price) VALUES (?, ?, ?)",
                    arguments: [id, "item-\(id)", id % 7 == 0 ? nil : id])
                try db.execute(sql: "INSERT INTO tag(item_id, label) VALUES (?, ?)", arguments: [id, "label-\(id)"])
            }
        }
        try queue.close()
    }

    /// Schema and every row, as text: equal dumps mean an equal database. Opened read-write,
    /// as an app would, so a hot rollback journal left by the failure is rolled back.
    private func dump(_ path: String) throws -> String {
        var configuration = Configuration()
        configuration.journalMode = nil
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        return try queue.read { db in
            var text = try db.fetchAll(
                String.self,
                sql: "SELECT type || ' ' || name || ' ' || ifnull(sql, '') FROM sqlite_master ORDER BY name"
            )
            .joined(separator: "\n")
            text += try db.fetchAll(Row.self, sql: "SELECT * FROM item ORDER BY id").map {
                "\($0[0]) \($0[1]) \($0[2])"
            }.joined()
            text += try db.fetchAll(Row.self, sql: "SELECT rowid, * FROM tag ORDER BY rowid").map {
                "\($0[0]) \($0[1]) \($0[2])"
            }.joined()
            text += try db.fetchAll(String.self, sql: "SELECT identifier FROM serialdb_migrations").joined()
            #expect(try db.fetchOne(String.self, sql: "PRAGMA integrity_check") == "ok")
            return text
        }
    }

    @Test(arguments: [Configuration.JournalMode.wal, .delete])
    func anIOErrorAtAnyPointOfARebuildLeavesTheDatabaseAsItWas(journalMode: Configuration.JournalMode) throws {
        #expect(serialdb_faults_register() == 0)
        let directory = try TemporaryDirectory()
        let pristine = directory.path("pristine.sqlite")
        try makeDatabase(pristine, journalMode: journalMode)
        let before = try dump(pristine)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1", schema: Self.oldSchema)
        var options = SchemaChangeOptions()
        options.fill(column: "price", inTable: "item", with: 0)
        migrator.registerMigration("v2", schema: Self.newSchema, options: options)

        var configuration = Configuration()
        configuration.journalMode = journalMode
        configuration.vfsName = "serialdb-faults"
        // Count the writes and syncs of a successful upgrade on a copy.
        let counted = directory.path("counted.sqlite")
        try FileManager.default.copyItem(atPath: pristine, toPath: counted)
        let counting = try DatabaseQueue(path: counted, configuration: configuration)
        serialdb_faults_arm(SERIALDB_FAULT_WRITE | SERIALDB_FAULT_SYNC, 0, 0, 0)
        try counting.migrate(migrator)
        let operations = serialdb_faults_operations()
        serialdb_faults_disarm()
        try counting.close()
        #expect(operations > 10)

        // Fail each of a spread of those operations in turn, on a fresh copy each time.
        let step: Int64 = max(1, operations / 12)
        let points: [Int64] = Array(
            Set(Array(stride(from: Int64(1), through: operations, by: Int(step))) + [operations])
        ).sorted()
        for (index, point) in points.enumerated() {
            let path = directory.path("fault-\(index).sqlite")
            try FileManager.default.copyItem(atPath: pristine, toPath: path)
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            serialdb_faults_arm(SERIALDB_FAULT_WRITE | SERIALDB_FAULT_SYNC, point, SERIALDB_IOERR_WRITE, 1)
            var failure: (any Error)?
            do { try queue.migrate(migrator) } catch { failure = error }
            serialdb_faults_disarm()
            try? queue.close()
            let after = try dump(path)
            if let failure {
                let cause = (failure as? SerialDBError)?.underlying as? DatabaseError
                #expect(cause?.resultCode == .SQLITE_IOERR, "fault at \(point): \(failure)")
                #expect(after == before, "fault at operation \(point) of \(operations) changed the database")
            } else {
                // The fault hit after the commit point (a checkpoint or journal cleanup):
                // then the upgrade must be complete.
                #expect(after.contains("v2"), "fault at \(point): no error, but the upgrade is missing")
            }
        }
    }
}
