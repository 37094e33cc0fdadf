import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

@testable import SerialDBSync

/// A sync stopped inside the download leaves the cursor exactly over the rows applied, and no
/// download or resync takes a row with unsent local changes.
@Suite("Page boundaries and unsent rows")
struct SyncPageBoundaryTests {
    /// Makes the device's inserts of note `id` fail, as a full disk or a constraint would.
    private func failInserts(of id: String, on device: Device) throws {
        try device.execute(
            """
            CREATE TRIGGER planted_failure BEFORE INSERT ON note WHEN NEW.id = '\(id)'
            BEGIN SELECT RAISE(ABORT, 'planted failure'); END
            """)
    }

    @Test("a page that fails to apply leaves the cursor on the pages before it, and the next sync gets it")
    func aFailedPageLeavesTheCursorBehindIt() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let laptop = try Device(.file, in: directory, name: "laptop", server: server, pageSize: 10)
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        for index in 0..<40 { try phone.insertNote(String(format: "n%02d", index), "t") }
        _ = try await phone.client.sync()
        try failInserts(of: "n25", on: laptop)
        await #expect(throws: DatabaseError.self) { _ = try await laptop.client.sync() }
        // Versions 1...40 in key order: the first two pages are in, the third is not.
        #expect(try laptop.cursor() == 20)
        #expect(try laptop.titles().keys.sorted() == (0..<20).map { String(format: "n%02d", $0) })
        try laptop.execute("DROP TRIGGER planted_failure")
        let rest = try await laptop.client.sync()
        #expect(rest.downloaded == 20)
        #expect(try laptop.titles().count == 40)
    }

    @Test("`serialdb sync` stopped by a page it cannot apply leaves rows and cursor together")
    func theToolStoppedBetweenPagesResumesWithNoGap() async throws {
        let directory = try TemporaryDirectory()
        let server = try await SyncServerProcess(in: directory)
        let phone = try DatabaseQueue(path: directory.path("phone.sqlite"))
        let phoneClient = try SyncClient(queue: phone, transport: server.transport())
        _ = try await phoneClient.sync()
        try await phone.write { db in
            for index in 0..<300 {
                try db.execute(
                    sql: "INSERT INTO note(id, title) VALUES (?, 't')", arguments: [String(format: "n%03d", index)])
            }
        }
        _ = try await phoneClient.sync()
        let path = directory.path("laptop.sqlite")
        func runTool() async throws -> Int32 {
            let tool = try RunningProcess(
                product: "serialdb",
                arguments: [
                    "sync", path, "--server", server.url.absoluteString, "--token", "t-alice", "--page-size", "50",
                ])
            return try await tool.waitForExit()
        }
        // The app made the table before the first sync, with a trigger that fails one insert.
        let laptop = try DatabaseQueue(path: path)
        try await laptop.write { db in
            try db.execute(sql: "CREATE TABLE note(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, body TEXT)")
            try db.execute(
                sql: """
                    CREATE TRIGGER planted_failure BEFORE INSERT ON note WHEN NEW.id = 'n170'
                    BEGIN SELECT RAISE(ABORT, 'planted failure'); END
                    """)
        }
        #expect(try await runTool() == 1)
        let (ids, cursor) = try await laptop.read { db in
            (
                try db.fetchAll(String.self, sql: "SELECT id FROM note ORDER BY id"),
                try db.fetchOne(Int.self, sql: "SELECT Version FROM TableVersion WHERE TableName = 'note'") ?? -1
            )
        }
        #expect(cursor == 150)
        #expect(ids == (0..<150).map { String(format: "n%03d", $0) })
        try await laptop.write { db in try db.execute(sql: "DROP TRIGGER planted_failure") }
        #expect(try await runTool() == 0)
        let count = try await laptop.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM note") }
        #expect(count == 300)
        try await laptop.close()
        try await phone.close()
        try await server.stop()
    }

    @Test("a refetch after a definition change leaves rows with unsent edits or deletes alone")
    func aRefetchKeepsUnsentChanges() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let laptop = try Device(.file, in: directory, name: "laptop", server: server)
        _ = try await phone.client.sync()
        for id in ["a", "b", "c"] { try phone.insertNote(id, "original") }
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        try phone.execute("UPDATE note SET title = 'phone' WHERE id IN ('a', 'b')")
        _ = try await phone.client.sync()
        var changed = noteTable
        changed.structVersion = 2
        changed.schema = "CREATE TABLE note(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, body TEXT, n INTEGER)"
        try server.replaceTable(changed)
        // After the upload, before the refetch from 0 (the first fetch-data): the edits are unsent
        // while the rows arrive.
        let queue = laptop.queue
        laptop.transport.once("fetch-data") {
            try await queue.write { db in
                try db.execute(sql: "UPDATE note SET title = 'laptop' WHERE id = 'a'")
                try db.execute(sql: "DELETE FROM note WHERE id = 'b'")
            }
        }
        let report = try await laptop.client.sync()
        #expect(report.schemaChanges.first?.isApplied == true)
        #expect(try laptop.titles() == ["a": "laptop", "c": "original"])
        #expect(try laptop.outboxCount() == 2)
        let next = try await laptop.client.sync()
        #expect(Set(next.conflicts.map { $0.key["id"] }) == [.text("a"), .text("b")])
    }

    @Test("a resync spares a row whose unsent edit the server no longer has the row for")
    func aResyncSparesAnUnsentEditOfAPurgedRow() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let laptop = try Device(.file, in: directory, name: "laptop", server: server)
        _ = try await phone.client.sync()
        for id in ["x", "y", "z"] { try phone.insertNote(id, "original") }
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        try phone.execute("DELETE FROM note WHERE id IN ('x', 'y')")
        _ = try await phone.client.sync()
        try server.purgeTombstones(through: try server.latestVersion())
        let queue = laptop.queue
        laptop.transport.once("fetch-data") {
            try await queue.write { db in try db.execute(sql: "UPDATE note SET title = 'kept' WHERE id = 'x'") }
        }
        _ = try await laptop.client.sync()
        #expect(try laptop.titles() == ["x": "kept", "z": "original"])
        #expect(try laptop.outboxCount() == 1)
        #expect(try await laptop.client.sync().uploaded == 1)
        #expect(Set(try server.rows(of: "note", account: "alice").map { $0["id"] }) == [.text("x"), .text("z")])
    }
}
