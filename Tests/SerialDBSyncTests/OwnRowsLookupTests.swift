import Foundation
import SerialDB
import SerialDBTestSupport
import Synchronization
import Testing

@testable import SerialDBSync

/// The fetch after an upload looks the page's keys up as differences from the versions the
/// upload recorded (`SyncMetadata.knownVersions(_:table:keys:expected:)`): only the keys whose
/// entry says otherwise come back. An entry changed since the upload (another client of the
/// same database downloaded a newer version) must still decide, never the upload's memory.
@Suite("The known versions of the rows a sync uploaded", .serialized, .timeLimit(.minutes(5)))
struct OwnRowsLookupTests {
    private static func key(_ db: Database, _ id: String) throws -> String {
        try CanonicalKey.make(db, values: [.text(id)])
    }

    @Test("the lookup returns the entries as stored, whatever was expected of them")
    func lookupAgainstExpectations() throws {
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.path("device.sqlite"))
        defer { try? queue.close() }
        try queue.write { db in
            _ = try SyncMetadata.install(db)
            let key = { (id: String) in try Self.key(db, id) }
            // Entries: a at 5, b at 7, d at 9; c and e have none.
            for (id, version) in [("a", Int64(5)), ("b", 7), ("d", 9)] {
                try SyncMetadata.setKnownVersion(db, table: "note", key: try key(id), version: version)
            }
            // Another table's entry for c must not answer for note's c.
            try SyncMetadata.setKnownVersion(db, table: "other", key: try key("c"), version: 3)
            let keys = try ["a", "b", "c", "d", "e", "a"].map(key)
            let expected = [try key("a"): Int64(5), try key("b"): 6, try key("c"): 3]
            let known = try SyncMetadata.knownVersions(db, table: "note", keys: keys, expected: expected)
            #expect(try known[key("a")] == 5, "as expected")
            #expect(try known[key("b")] == 7, "the entry differs from the expectation: the entry decides")
            #expect(try known[key("c")] == nil, "expected, but the entry is gone")
            #expect(try known[key("d")] == 9, "no expectation: read")
            #expect(try known[key("e")] == nil)
            #expect(!known.isEmpty)
            let plain = try SyncMetadata.knownVersions(db, table: "note", keys: keys)
            for id in ["a", "b", "c", "d", "e"] {
                #expect(try plain[key(id)] == known[key(id)], "\(id): the same answer without expectations")
            }
            // A table without entries has none, expectations or not.
            let none = try SyncMetadata.knownVersions(db, table: "empty", keys: keys, expected: expected)
            #expect(none.isEmpty)
            #expect(try none[key("a")] == nil)
        }
    }

    @Test(
        "a row uploaded, then changed elsewhere and downloaded by another client of the database, is not written again",
        arguments: ServerStoreKind.allCases, [false, true])
    func ownRowDownloadedNewerByAnotherClient(_ kind: ServerStoreKind, throughAnotherConnection: Bool) async throws {
        let directory = try TemporaryDirectory()
        let server = try await SyncServerProcess(in: directory, store: try kind.storeArguments(in: directory))
        let phoneTransport = RecordingTransport(server.transport())
        let phone = try DatabaseQueue(path: directory.path("phone.sqlite"))
        let phoneClient = try SyncClient(queue: phone, transport: phoneTransport)
        let laptop = try DatabaseQueue(path: directory.path("laptop.sqlite"))
        let laptopClient = try SyncClient(queue: laptop, transport: server.transport())
        _ = try await phoneClient.sync()
        _ = try await laptopClient.sync()
        // A cursor above 0: the fetch after the upload is incremental, and a change at the
        // version known is not written.
        try await laptop.write { db in try db.execute(sql: "INSERT INTO note(id, title) VALUES ('seed', 's')") }
        _ = try await laptopClient.sync()
        #expect(try await phoneClient.sync().downloaded == 1)
        try await phone.write { db in
            try db.execute(sql: "CREATE TABLE note_writes(id TEXT NOT NULL, op TEXT NOT NULL)")
            try db.execute(
                sql:
                    "CREATE TRIGGER note_updated AFTER UPDATE ON note BEGIN INSERT INTO note_writes VALUES (NEW.id, 'update'); END"
            )
            try db.execute(
                sql:
                    "CREATE TRIGGER note_inserted AFTER INSERT ON note BEGIN INSERT INTO note_writes VALUES (NEW.id, 'insert'); END"
            )
            try db.execute(sql: "INSERT INTO note(id, title) VALUES ('n1', 'phone''s')")
        }
        let secondQueue = throughAnotherConnection ? try DatabaseQueue(path: directory.path("phone.sqlite")) : phone
        let second = try SyncClient(queue: secondQueue, transport: server.transport())
        // Once the upload is settled, before the fetch: the laptop changes n1, and another
        // client of the phone's database downloads that change (its entry moves past the
        // version the upload recorded).
        let writesBeforeFetch = Mutex(-1)
        phoneTransport.beforeFirstFetch.withLock {
            $0 = {
                #expect(try await laptopClient.sync().downloaded == 1)
                try await laptop.write { db in
                    try db.execute(sql: "UPDATE note SET title = 'laptop''s' WHERE id = 'n1'")
                }
                #expect(try await laptopClient.sync().uploaded == 1)
                #expect(try await second.sync().downloaded == 1)
                let written = try await phone.read { db in
                    try db.fetchOne(Int.self, sql: "SELECT count(*) FROM note_writes") ?? -1
                }
                writesBeforeFetch.withLock { $0 = written }
            }
        }
        let report = try await phoneClient.sync()
        if throughAnotherConnection { try await secondQueue.close() }
        #expect(report.uploaded == 1)
        #expect(report.downloaded == 0, "the other client downloaded the laptop's change; this fetch found it applied")
        let (writes, title, known, cursor) = try await phone.read { db in
            (
                try db.fetchAll(String.self, sql: "SELECT id || ' ' || op FROM note_writes ORDER BY rowid"),
                try db.fetchOne(String.self, sql: "SELECT title FROM note WHERE id = 'n1'"),
                try SyncMetadata.knownVersion(db, table: "note", key: try Self.key(db, "n1")),
                try db.fetchOne(Int64.self, sql: "SELECT Version FROM TableVersion WHERE TableName = 'note'")
            )
        }
        let before = writesBeforeFetch.withLock { $0 }
        #expect(before == 2, "the phone's insert and the other client's update of n1")
        #expect(writes.count == before, "the fetch wrote n1 again: \(writes)")
        #expect(title == "laptop's")
        let laptopKnown = try await laptop.read { db in
            try SyncMetadata.knownVersion(db, table: "note", key: try Self.key(db, "n1"))
        }
        #expect(known == laptopKnown)
        #expect(try #require(cursor) >= #require(known))
        try await phone.close()
        try await laptop.close()
        try await server.stop()
    }
}
