import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

@testable import SerialDBSync

/// The fetch after an upload leaves alone, without looking their keys up, the rows this sync
/// uploaded that come back at the version the server answered for them
/// (`Download.isOwnRow`). Another version of such a key is decided as any change: another
/// device wrote it in between, or another client of the database applied a newer state.
@Suite("The rows a sync uploaded, fetched back", .serialized, .timeLimit(.minutes(5)))
struct OwnRowsLookupTests {
    private static func key(_ db: Database, _ id: String) throws -> String {
        try CanonicalKey.make(db, values: [.text(id)])
    }

    private struct Devices: Sendable {
        let directory: TemporaryDirectory
        let server: SyncServerProcess
        let phone: DatabaseQueue
        let laptop: DatabaseQueue
        let laptopClient: SyncClient

        /// The laptop downloads n1, changes it with `sql` and uploads that.
        func laptopChangesN1(_ sql: String) async throws {
            #expect(try await laptopClient.sync().downloaded == 1)
            try await laptop.write { db in try db.execute(sql: sql) }
            #expect(try await laptopClient.sync().uploaded == 1)
        }

        func close() async throws {
            try await phone.close()
            try await laptop.close()
            try await server.stop()
        }
    }

    /// A server, a phone and a laptop that synced a seed row (cursors above 0: the fetch after
    /// an upload is incremental), and n1 inserted on the phone, not uploaded. The phone's
    /// note writes are logged in `note_writes`.
    private func devices(_ kind: ServerStoreKind) async throws -> (Devices, SyncClient, RecordingTransport) {
        let directory = try TemporaryDirectory()
        let server = try await SyncServerProcess(in: directory, store: try kind.storeArguments(in: directory))
        let phone = try DatabaseQueue(path: directory.path("phone.sqlite"))
        let transport = RecordingTransport(server.transport())
        let phoneClient = try SyncClient(queue: phone, transport: transport)
        let laptop = try DatabaseQueue(path: directory.path("laptop.sqlite"))
        let laptopClient = try SyncClient(queue: laptop, transport: server.transport())
        _ = try await phoneClient.sync()
        _ = try await laptopClient.sync()
        try await laptop.write { db in try db.execute(sql: "INSERT INTO note(id, title) VALUES ('seed', 's')") }
        _ = try await laptopClient.sync()
        #expect(try await phoneClient.sync().downloaded == 1)
        try await phone.write { db in
            try db.execute(sql: "CREATE TABLE note_writes(id TEXT NOT NULL, op TEXT NOT NULL)")
            for op in ["insert", "update", "delete"] {
                try db.execute(
                    sql: """
                        CREATE TRIGGER note_\(op)d AFTER \(op.uppercased()) ON note
                        BEGIN INSERT INTO note_writes VALUES (\(op == "delete" ? "OLD" : "NEW").id, '\(op)'); END
                        """)
            }
            try db.execute(sql: "INSERT INTO note(id, title) VALUES ('n1', 'phone''s')")
        }
        let devices = Devices(
            directory: directory, server: server, phone: phone, laptop: laptop, laptopClient: laptopClient)
        return (devices, phoneClient, transport)
    }

    /// Another client of the phone's database: on the phone's queue, or on a connection of its own.
    private func secondClient(_ devices: Devices, ownConnection: Bool) throws -> (SyncClient, DatabaseQueue) {
        let queue = ownConnection ? try DatabaseQueue(path: devices.directory.path("phone.sqlite")) : devices.phone
        return (try SyncClient(queue: queue, transport: devices.server.transport()), queue)
    }

    private func writes(_ queue: DatabaseQueue) async throws -> [String] {
        try await queue.read { db in
            try db.fetchAll(String.self, sql: "SELECT id || ' ' || op FROM note_writes ORDER BY rowid")
        }
    }

    private func state(_ queue: DatabaseQueue) async throws -> (title: String?, known: Int64?, cursor: Int64?) {
        try await queue.read { db in
            (
                try db.fetchOne(String.self, sql: "SELECT title FROM note WHERE id = 'n1'"),
                try SyncMetadata.knownVersion(db, table: "note", key: try Self.key(db, "n1")),
                try db.fetchOne(Int64.self, sql: "SELECT Version FROM TableVersion WHERE TableName = 'note'")
            )
        }
    }

    @Test("a row uploaded comes back at its version: not written again", arguments: ServerStoreKind.allCases)
    func ownRowNotWrittenAgain(_ kind: ServerStoreKind) async throws {
        let (devices, phoneClient, _) = try await devices(kind)
        let report = try await phoneClient.sync()
        #expect(report.uploaded == 1)
        #expect(report.downloaded == 0)
        #expect(try await writes(devices.phone) == ["n1 insert"])
        let (title, known, cursor) = try await state(devices.phone)
        #expect(title == "phone's")
        #expect(try #require(cursor) >= #require(known))
        try await devices.close()
    }

    @Test(
        "a row uploaded, then changed by another device before the fetch: the other device's row is applied",
        arguments: ServerStoreKind.allCases)
    func ownRowChangedByAnotherDevice(_ kind: ServerStoreKind) async throws {
        let (devices, phoneClient, transport) = try await devices(kind)
        transport.beforeFirstFetch.withLock {
            $0 = {
                try await devices.laptopChangesN1("UPDATE note SET title = 'laptop''s' WHERE id = 'n1'")
            }
        }
        let report = try await phoneClient.sync()
        #expect(report.uploaded == 1)
        #expect(report.downloaded == 1)
        #expect(try await writes(devices.phone) == ["n1 insert", "n1 update"])
        let (title, known, _) = try await state(devices.phone)
        #expect(title == "laptop's")
        let laptopKnown = try await devices.laptop.read { db in
            try SyncMetadata.knownVersion(db, table: "note", key: try Self.key(db, "n1"))
        }
        #expect(known == laptopKnown)
        try await devices.close()
    }

    @Test(
        "a row uploaded whose page is overtaken by a delete another client of the database applied stays deleted",
        arguments: ServerStoreKind.allCases, [false, true])
    func ownRowDeletedByAnotherClient(_ kind: ServerStoreKind, throughAnotherConnection: Bool) async throws {
        let (devices, phoneClient, transport) = try await devices(kind)
        let (second, secondQueue) = try secondClient(devices, ownConnection: throughAnotherConnection)
        // The phone's page holds n1 as uploaded; before it is applied, the laptop deletes n1
        // and another client of the phone's database applies that delete.
        transport.afterNextFetch.withLock {
            $0 = {
                try await devices.laptopChangesN1("DELETE FROM note WHERE id = 'n1'")
                #expect(try await second.sync().downloaded == 1)
            }
        }
        let report = try await phoneClient.sync()
        #expect(report.uploaded == 1)
        #expect(report.downloaded == 0, "the stale page did not bring n1 back")
        #expect(try await writes(devices.phone) == ["n1 insert", "n1 delete"])
        #expect(try await state(devices.phone).title == nil)
        // The next sync finds the delete applied and changes nothing.
        let next = try await phoneClient.sync()
        #expect(next.downloaded == 0)
        #expect(try await writes(devices.phone) == ["n1 insert", "n1 delete"])
        let (title, known, _) = try await state(devices.phone)
        #expect(title == nil && known == nil)
        if throughAnotherConnection { try await secondQueue.close() }
        try await devices.close()
    }

    @Test(
        "a row uploaded, then changed elsewhere and downloaded by another client of the database, is not written again",
        arguments: ServerStoreKind.allCases, [false, true])
    func ownRowDownloadedNewerByAnotherClient(_ kind: ServerStoreKind, throughAnotherConnection: Bool) async throws {
        let (devices, phoneClient, transport) = try await devices(kind)
        let (second, secondQueue) = try secondClient(devices, ownConnection: throughAnotherConnection)
        // Once the upload is settled, before the fetch: the laptop changes n1, and another
        // client of the phone's database downloads that change (its entry moves past the
        // version the upload recorded).
        transport.beforeFirstFetch.withLock {
            $0 = {
                try await devices.laptopChangesN1("UPDATE note SET title = 'laptop''s' WHERE id = 'n1'")
                #expect(try await second.sync().downloaded == 1)
            }
        }
        let report = try await phoneClient.sync()
        #expect(report.uploaded == 1)
        #expect(report.downloaded == 0, "the other client downloaded the laptop's change; this fetch found it applied")
        #expect(try await writes(devices.phone) == ["n1 insert", "n1 update"], "the other client's write only")
        let (title, known, cursor) = try await state(devices.phone)
        #expect(title == "laptop's")
        let laptopKnown = try await devices.laptop.read { db in
            try SyncMetadata.knownVersion(db, table: "note", key: try Self.key(db, "n1"))
        }
        #expect(known == laptopKnown)
        #expect(try #require(cursor) >= #require(known))
        if throughAnotherConnection { try await secondQueue.close() }
        try await devices.close()
    }
}
