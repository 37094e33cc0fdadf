import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

@testable import SerialDBSync

/// Rows a table holds before the sync starts capturing it are local changes: uploaded, or met
/// as conflicts, never dropped.
@Suite("Rows written before a table is synced")
struct SyncAdoptedRowsTests {
    /// When the app creates its table: before the client is made, or after it (before the first sync).
    enum Moment: CaseIterable {
        case beforeTheClient, afterTheClient
    }

    @Test(
        "rows in a table the app created with the server's schema go up with the first sync", arguments: Moment.allCases
    )
    func rowsWrittenBeforeTheFirstSyncAreUploaded(moment: Moment) async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let queue = try DatabaseQueue(path: directory.path("phone.sqlite"))
        func createAndFill() throws {
            try queue.write { db in
                try db.execute(sql: noteTable.schema)
                try db.execute(
                    sql: "INSERT INTO note(id, title) VALUES ('a', 'first'), ('b', 'second'), ('c', 'third')")
            }
        }
        if moment == .beforeTheClient { try createAndFill() }
        let client = try SyncClient(queue: queue, transport: server.transport(token: "t-alice"))
        if moment == .afterTheClient { try createAndFill() }
        let first = try await client.sync()
        #expect(first.uploaded == 3)
        #expect(first.schemaChanges.first?.capturedRows == 3)
        #expect(first.conflicts.isEmpty && first.rejected.isEmpty)
        #expect(try server.rows(of: "note", account: "alice").count == 3)
        let second = try await client.sync()
        #expect(second.uploaded == 0 && second.downloaded == 0)
        // Another device gets them, and a resync keeps them: the server has them now.
        let laptop = try Device(.memory, in: directory, name: "laptop", server: server)
        _ = try await laptop.client.sync()
        #expect(try laptop.titles() == ["a": "first", "b": "second", "c": "third"])
        try laptop.execute("DELETE FROM note WHERE id = 'c'")
        _ = try await laptop.client.sync()
        try server.purgeTombstones(through: try server.latestVersion())
        _ = try await client.sync()
        let left = try await queue.read { db in try db.fetchAll(String.self, sql: "SELECT id FROM note ORDER BY id") }
        #expect(left == ["a", "b"])
    }

    @Test("a row the server already has under the same key is a reported conflict, settled by the resolver")
    func anAdoptedRowTheServerHasIsAConflict() async throws {
        for keepLocal in [false, true] {
            let directory = try TemporaryDirectory()
            let server = try InProcessSyncServer(tables: [noteTable])
            let phone = try Device(.file, in: directory, name: "phone", server: server)
            _ = try await phone.client.sync()
            try phone.insertNote("a", "phone's")
            _ = try await phone.client.sync()
            let queue = try DatabaseQueue(path: directory.path("laptop.sqlite"))
            try await queue.write { db in
                try db.execute(sql: noteTable.schema)
                try db.execute(sql: "INSERT INTO note(id, title) VALUES ('a', 'laptop''s'), ('b', 'laptop only')")
            }
            let client = try SyncClient(
                queue: queue, transport: server.transport(token: "t-alice"),
                conflictResolver: { _ in keepLocal ? .keepLocal : .keepServer })
            let report = try await client.sync()
            let conflict = try #require(report.conflicts.first)
            #expect(report.conflicts.count == 1)
            #expect(conflict.key == ["id": .text("a")])
            #expect(conflict.localRow?["title"] == .text("laptop's"))
            #expect(conflict.serverRow?["title"] == .text("phone's"))
            _ = try await client.sync()
            let expected = keepLocal ? "laptop's" : "phone's"
            let local = try await queue.read { db in
                try db.fetchOne(String.self, sql: "SELECT title FROM note WHERE id = 'a'")
            }
            #expect(local == expected)
            let onServer = try server.rows(of: "note", account: "alice").first { $0["id"] == .text("a") }
            #expect(onServer?["title"] == .text(expected))
            #expect(try server.rows(of: "note", account: "alice").count == 2)
        }
    }

    @Test("rows written while an app migration had dropped the triggers are captured when they come back")
    func rowsWrittenWithoutTriggersAreCapturedWhenTheyAreRestored() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        _ = try await phone.client.sync()
        try phone.insertNote("synced", "before")
        _ = try await phone.client.sync()
        try phone.execute("DROP TRIGGER serialdb_sync_insert_note")
        try phone.insertNote("unseen", "while the trigger was gone")
        #expect(try phone.outboxCount() == 0)
        let reopened = try SyncClient(queue: phone.queue, transport: server.transport(token: "t-alice"))
        #expect(try phone.outboxCount() == 1)
        #expect(try await reopened.sync().uploaded == 1)
        #expect(try server.rows(of: "note", account: "alice").count == 2)
    }

    @Test("`serialdb sync` uploads the rows of a table created with the server's schema before the first sync")
    func theToolUploadsRowsWrittenBeforeTheFirstSync() async throws {
        let directory = try TemporaryDirectory()
        let server = try await SyncServerProcess(in: directory)
        let path = directory.path("app.sqlite")
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            try db.execute(sql: "CREATE TABLE note(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, body TEXT)")
            try db.execute(sql: "INSERT INTO note(id, title) VALUES ('a', 'x'), ('b', 'y')")
        }
        try await queue.close()
        func runTool() async throws -> String {
            let tool = try RunningProcess(
                product: "serialdb",
                arguments: ["sync", path, "--server", server.url.absoluteString, "--token", "t-alice"])
            #expect(try await tool.waitForExit() == 0)
            // The report is one write; the pipe's reader may still be reading it.
            try await waitUntil(timeout: .seconds(60)) { tool.printed.contains("downloaded:") }
            return tool.printed
        }
        let first = try await runTool()
        #expect(first.contains("uploaded: 2"))
        #expect(first.contains("schema note: none -> 1 (2 rows already here queued for upload)"))
        #expect(try await runTool().contains("uploaded: 0"))
        let page = try await server.transport().fetchData(FetchDataRequest(table: "note", since: 0, limit: 10))
        #expect(page.changes.count == 2)
        try await server.stop()
    }
}
