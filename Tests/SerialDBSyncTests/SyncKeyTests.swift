import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

@testable import SerialDBSync

/// Canonical keys are exact for every value SQLite stores, in the triggers and in Swift alike.
@Suite("Canonical keys")
struct SyncKeyTests {
    static let oddValues: [DatabaseValue] = [
        .text("k"), .text("k\u{0}z"), .text("\u{0}"), .text(""), .text("a'b,c"), .text("x\u{301}'\u{301}y"),
        .text("日本語 ✓"), .integer(0), .integer(-12), .integer(.min), .integer(.max), .real(2.5), .real(1.0 / 3),
        .real(-0.0), .real(3e300), .real(.infinity), .real(-.infinity), .blob(Data()), .blob(Data([0, 255, 39, 44])),
        .null,
    ]

    @Test("a canonical key reads back as exactly the values it was made of", arguments: oddValues)
    func canonicalKeyRoundTrips(value: DatabaseValue) throws {
        let queue = try DatabaseQueue()
        for values in [[value], [value, .text("k\u{0}"), value]] {
            let key = try queue.read { db in try CanonicalKey.make(db, values: values) }
            let parsed = try #require(CanonicalKey.parse(key))
            // (-0.0 reads back as 0.0, which is equal: one key to SQLite's index too.)
            #expect(parsed == values)
        }
    }

    @Test("a key that is not in canonical form reads back as nothing, a key of several integers as all of them")
    func malformedKeysAreRefused() {
        for malformed in ["", "I", "Ix", "I12x", "I 1", "I1,", "I1,,I2", "I99999999999999999999", "i1", "X1"] {
            #expect(CanonicalKey.parse(malformed) == nil, "\(malformed)")
        }
        #expect(CanonicalKey.parse("I1,I-2") == [.integer(1), .integer(-2)])
        #expect(CanonicalKey.parse("I7,T6B") == [.integer(7), .text("k")])
        #expect(CanonicalKey.parse("I-9223372036854775808") == [.integer(.min)])
    }

    @Test("the outbox triggers compute the same key as Swift for every kind of value")
    func triggersAndSwiftAgree() async throws {
        let directory = try TemporaryDirectory()
        // No declared type: the key column keeps every value as it was given.
        let table = InProcessSyncServer.Table(
            name: "anything", schema: "CREATE TABLE anything(k PRIMARY KEY, v TEXT)")
        let device = try Device(.file, in: directory, name: "phone", server: try InProcessSyncServer(tables: [table]))
        _ = try await device.client.sync()
        // NULL is not a key here, and -0.0 is the same key as 0 to SQLite's index.
        let values = Self.oddValues.filter { $0 != .null && $0 != .real(-0.0) }
        for value in values {
            try device.execute("INSERT INTO anything(k, v) VALUES (?, 'x')", [value])
        }
        let keys = try await device.queue.read { db in
            try db.fetchAll(String.self, sql: "SELECT key FROM serialdb_sync_outbox ORDER BY seq")
        }
        let expected = try await device.queue.read { db in try values.map { try CanonicalKey.make(db, values: [$0]) } }
        #expect(keys == expected)
        #expect(Set(keys).count == values.count)
    }

    @Test("keys that differ only after a NUL byte stay two rows, and an edit of one uploads that one")
    func keysWithNulAreExact() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let laptop = try Device(.file, in: directory, name: "laptop", server: server)
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        try phone.insertNote("k", "plain")
        try phone.insertNote("k\u{0}z", "with a NUL")
        #expect(try phone.outboxCount() == 2)
        #expect(try await phone.client.sync().uploaded == 2)
        _ = try await laptop.client.sync()
        #expect(try laptop.titles() == ["k": "plain", "k\u{0}z": "with a NUL"])
        try laptop.execute("UPDATE note SET title = 'edited' WHERE id = ?", ["k\u{0}z"])
        let edit = try await laptop.client.sync()
        #expect(edit.uploaded == 1 && edit.conflicts.isEmpty && edit.rejected.isEmpty)
        #expect(try laptop.outboxCount() == 0)
        let onServer = try server.rows(of: "note", account: "alice").first { $0["id"] == .text("k\u{0}z") }
        #expect(onServer?["title"] == .text("edited"))
        _ = try await phone.client.sync()
        #expect(try phone.titles() == ["k": "plain", "k\u{0}z": "edited"])
        try phone.execute("DELETE FROM note WHERE id = 'k'")
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        #expect(try laptop.titles() == ["k\u{0}z": "edited"])
    }

    @Test("a database synced with the keys of before is rewritten once, its triggers too, and syncs on")
    func legacyKeysAreMigrated() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        _ = try await phone.client.sync()
        try phone.insertNote("a'1", "synced")
        try phone.insertNote("b", "synced")
        _ = try await phone.client.sync()
        let laptop = try Device(.file, in: directory, name: "laptop", server: server)
        _ = try await laptop.client.sync()
        try phone.insertNote("c", "unsent")
        try phone.execute("UPDATE note SET title = 'unsent edit' WHERE id = 'b'")
        // Turn the phone's database into what the version before wrote: keys are quote() of
        // the key, no key_format column, triggers that record quote().
        try phone.execute("UPDATE serialdb_sync_row SET key = (SELECT quote(id) FROM note WHERE 'T' || hex(id) = key)")
        try phone.execute(
            "UPDATE serialdb_sync_outbox SET key = (SELECT quote(id) FROM note WHERE 'T' || hex(id) = key)")
        try phone.execute("ALTER TABLE serialdb_sync_state DROP COLUMN key_format")
        try await phone.queue.write { db in
            for (event, row) in [("insert", "NEW"), ("update", "NEW"), ("delete", "OLD")] {
                try db.execute(sql: "DROP TRIGGER serialdb_sync_\(event)_note")
                try db.execute(
                    sql: """
                        CREATE TRIGGER serialdb_sync_\(event)_note AFTER \(event.uppercased()) ON note
                        WHEN (SELECT applying FROM serialdb_sync_state) = 0 BEGIN
                        INSERT INTO serialdb_sync_outbox(table_name, key, op)
                        VALUES ('note', quote(\(row).id), '\(event == "delete" ? "delete" : "upsert")');
                        END
                        """)
            }
        }
        let legacy = try await phone.queue.read { db in
            try db.fetchAll(String.self, sql: "SELECT key FROM serialdb_sync_row ORDER BY key")
        }
        #expect(legacy == ["'a''1'", "'b'"])
        let reopened = try SyncClient(queue: phone.queue, transport: server.transport(token: "t-alice"))
        let (rows, outbox) = try await phone.queue.read { db in
            (
                try db.fetchAll(String.self, sql: "SELECT key FROM serialdb_sync_row ORDER BY key"),
                try db.fetchAll(String.self, sql: "SELECT key FROM serialdb_sync_outbox ORDER BY seq")
            )
        }
        #expect(rows == ["T612731", "T62"])
        #expect(outbox == ["T63", "T62"])
        // The triggers now record the new form: a later edit replaces the unsent entry of its key.
        try phone.execute("UPDATE note SET title = 'edited again' WHERE id = 'c'")
        #expect(try phone.outboxCount() == 2)
        let report = try await reopened.sync()
        #expect(report.uploaded == 2 && report.conflicts.isEmpty)
        _ = try await laptop.client.sync()
        #expect(try laptop.titles() == ["a'1": "synced", "b": "unsent edit", "c": "edited again"])
        // Opening again changes nothing more.
        _ = try SyncClient(queue: phone.queue, transport: server.transport(token: "t-alice"))
        #expect(
            try await phone.queue.read { db in
                try db.fetchOne(Int.self, sql: "SELECT key_format FROM serialdb_sync_state")
            } == 2)
    }
}
