import Foundation
import SerialDB
import SerialDBSyncWire
import SerialDBTestSupport
import Synchronization
import Testing

@testable import SerialDBSync

/// A downloaded page is written with the connection's triggers off when the only triggers are
/// the sync's own outbox triggers, which ignore server rows anyway. Every other trigger the
/// page's writes could reach still fires: the app's on the synced table, one on a child table
/// that a foreign-key cascade reaches, the mirror of a `prepareMigration` copy. And triggers
/// are back on after a page, even one that fails half-way: the outbox sees the next local write.
@Suite("Triggers while a page is applied", .timeLimit(.minutes(2)))
struct DownloadTriggerTests {
    /// A phone that uploaded `count` notes and a laptop that has synced once (its `note` table
    /// exists and is empty), both on files.
    private func devices(_ directory: TemporaryDirectory, _ server: InProcessSyncServer, pageSize: Int = 500)
        throws -> (phone: Device, laptop: Device)
    {
        let phone = try Device(.file, in: directory, name: "phone", server: server, pageSize: pageSize)
        let laptop = try Device(.file, in: directory, name: "laptop", server: server, pageSize: pageSize)
        return (phone, laptop)
    }

    private func insertNotes(_ device: Device, _ ids: some Sequence<Int>, title: String = "from the phone") throws {
        try device.queue.write { db in
            for id in ids {
                try db.execute(
                    sql: "INSERT INTO note(id, title) VALUES (?, ?)", arguments: ["n\(id)", "\(title) \(id)"])
            }
        }
    }

    private func strings(_ device: Device, _ sql: String) throws -> [String] {
        try device.queue.read { db in try db.fetchAll(String.self, sql: sql) }
    }

    @Test("an app trigger on the synced table fires for every downloaded row, over several pages")
    func appTriggerOnTheSyncedTableFires() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let (phone, laptop) = try devices(directory, server, pageSize: 200)
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        try laptop.execute("CREATE TABLE note_log(id TEXT NOT NULL, op TEXT NOT NULL)")
        try laptop.execute(
            "CREATE TRIGGER note_inserted AFTER INSERT ON note BEGIN INSERT INTO note_log VALUES (NEW.id, 'insert'); END"
        )
        try laptop.execute(
            "CREATE TRIGGER note_updated AFTER UPDATE ON note BEGIN INSERT INTO note_log VALUES (NEW.id, 'update'); END"
        )
        try insertNotes(phone, 1...450)
        _ = try await phone.client.sync()
        let first = try await laptop.client.sync()
        #expect(first.downloaded == 450)
        let inserted = try strings(laptop, "SELECT id FROM note_log WHERE op = 'insert' ORDER BY id")
        #expect(inserted == (1...450).map { "n\($0)" }.sorted())
        try phone.execute("UPDATE note SET title = 'changed' WHERE id IN ('n3', 'n300')")
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        #expect(try strings(laptop, "SELECT id FROM note_log WHERE op = 'update' ORDER BY id") == ["n3", "n300"])
        // Server rows never enter the outbox, trigger or not.
        #expect(try laptop.outboxCount() == 0)
    }

    @Test("an app trigger on a child table fires when a downloaded delete cascades into it")
    func triggerReachedThroughACascadeFires() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let (phone, laptop) = try devices(directory, server)
        _ = try await phone.client.sync()
        try insertNotes(phone, 1...5)
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        // Local to the laptop: no trigger on `note` itself.
        try laptop.execute(
            """
            CREATE TABLE attachment(
                id INTEGER PRIMARY KEY, note_id TEXT NOT NULL REFERENCES note(id) ON DELETE CASCADE)
            """)
        try laptop.execute("CREATE TABLE attachment_log(note_id TEXT NOT NULL)")
        try laptop.execute(
            "CREATE TRIGGER attachment_deleted AFTER DELETE ON attachment BEGIN "
                + "INSERT INTO attachment_log VALUES (OLD.note_id); END")
        try laptop.execute("INSERT INTO attachment(note_id) VALUES ('n2'), ('n2'), ('n4')")
        try phone.execute("DELETE FROM note WHERE id IN ('n2', 'n4')")
        _ = try await phone.client.sync()
        let report = try await laptop.client.sync()
        #expect(report.downloaded == 2)
        #expect(try strings(laptop, "SELECT id FROM note ORDER BY id") == ["n1", "n3", "n5"])
        #expect(try strings(laptop, "SELECT note_id FROM attachment") == [])
        #expect(try strings(laptop, "SELECT note_id FROM attachment_log ORDER BY note_id") == ["n2", "n2", "n4"])
        #expect(try laptop.outboxCount() == 0)
    }

    @Test("a prepareMigration copy of a synced table stays exact across a download, and the swap uses it")
    func preparedCopyStaysExactAcrossADownload() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let (phone, laptop) = try devices(directory, server)
        _ = try await phone.client.sync()
        try insertNotes(phone, 1...300)
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        // The app's schema as the sync made it, then a step that rebuilds `note` (a new CHECK).
        let stored = try await laptop.queue.read { db in
            try db.fetchAll(
                String.self,
                sql:
                    "SELECT sql FROM sqlite_master WHERE type = 'table' AND name IN ('TableVersion', 'note') ORDER BY name"
            )
        }
        #expect(stored.count == 2)
        let v1 = stored.map { $0 + ";" }.joined(separator: "\n")
        let v2 = v1.replacingOccurrences(of: "body TEXT)", with: "body TEXT, CHECK (title <> ''))")
        #expect(v2 != v1, "\(v1)")
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1", schema: v1)
        migrator.registerMigration("v2", schema: v2)
        try laptop.queue.migrate(migrator, upTo: "v1")
        let prepared = try await laptop.queue.prepareMigration(migrator, rowsPerChunk: 100)
        #expect(prepared.preparedTables == ["note"])
        // While the copy waits for its swap: new rows, changed rows and deleted rows arrive.
        try insertNotes(phone, 301...900)
        try phone.execute("UPDATE note SET title = 'changed' WHERE id IN ('n7', 'n450')")
        try phone.execute("DELETE FROM note WHERE id IN ('n8', 'n451')")
        _ = try await phone.client.sync()
        let report = try await laptop.client.sync()
        // 599 new rows (n451 was deleted before it went up), n7 changed, n8 deleted.
        #expect(report.downloaded == 601)
        let outcomes = Mutex<[PreparedCopyOutcome]>([])
        try await laptop.queue.migrate(migrator) { progress in
            if let copy = progress.preparedCopy { outcomes.withLock { $0.append(copy) } }
        }
        #expect(outcomes.withLock { $0 } == [PreparedCopyOutcome(tables: ["note"])])
        #expect(try laptop.titles() == phone.titles())
        #expect(try laptop.titles().count == 898)
    }

    @Test("a page that fails half-way leaves triggers on: the next local write is captured")
    func aFailedPageLeavesTriggersOn() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let (phone, laptop) = try devices(directory, server)
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        try insertNotes(phone, 1...4)
        _ = try await phone.client.sync()
        // The third row carries a column the table does not have: its upsert throws after the
        // first two rows were written.
        laptop.transport.spoilNextPage(atChange: 2)
        await #expect(throws: SyncError.self) { try await laptop.client.sync() }
        #expect(try laptop.titles() == [:])
        try laptop.insertNote("local", "written after the failed page")
        #expect(try laptop.outboxCount() == 1)
        let report = try await laptop.client.sync()
        #expect(report.uploaded == 1)
        #expect(report.downloaded == 4)
        let phoneReport = try await phone.client.sync()
        #expect(phoneReport.downloaded == 1)
        #expect(try phone.titles() == laptop.titles())
    }

    @Test("only the outbox triggers, each on its own table, count as the sync's own")
    func onlyTheOutboxTriggersCount() throws {
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.path("only.sqlite"))
        _ = try SyncClient(
            queue: queue, transport: InProcessSyncServer(tables: [noteTable]).transport(token: "t-alice"))
        func only() throws -> Bool { try queue.write { db in try ChangeCapture.areTheOnlyTriggers(db) } }
        #expect(try only())
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE a(id INTEGER PRIMARY KEY)")
            try db.execute(sql: "CREATE TABLE b(id INTEGER PRIMARY KEY)")
            try ChangeCapture.install(db, table: try SyncedTable(db, name: "a"))
        }
        #expect(try only())
        // A trigger named as the sync names them, on another table, is not the sync's.
        try queue.write { db in
            try db.execute(sql: "CREATE TRIGGER \"serialdb_sync_insert_b\" AFTER INSERT ON a BEGIN SELECT 1; END")
        }
        #expect(try only() == false)
        try queue.write { db in try db.execute(sql: "DROP TRIGGER serialdb_sync_insert_b") }
        #expect(try only())
        // Nor is a temporary trigger, on any table.
        try queue.write { db in try db.execute(sql: "CREATE TEMP TRIGGER t_b AFTER INSERT ON b BEGIN SELECT 1; END") }
        #expect(try only() == false)
    }
}
