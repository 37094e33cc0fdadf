import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

@testable import SerialDBSync

/// The fetch that follows an upload in the same sync: a fetch from 0 (a first sync, or after a
/// definition change) writes again the rows the device knew before, but not the rows this
/// sync has just uploaded, which the server stored as they were read here.
@Suite("The fetch after an upload", .timeLimit(.minutes(2)))
struct SyncFetchAfterUploadTests {
    /// App triggers that log every write the sync makes to `note` (they fire for server rows;
    /// only the outbox triggers are quiet then).
    private func logWrites(_ device: Device) throws {
        try device.execute("CREATE TABLE note_writes(id TEXT NOT NULL, op TEXT NOT NULL)")
        try device.execute(
            "CREATE TRIGGER note_inserted AFTER INSERT ON note BEGIN INSERT INTO note_writes VALUES (NEW.id, 'insert'); END"
        )
        try device.execute(
            "CREATE TRIGGER note_updated AFTER UPDATE ON note BEGIN INSERT INTO note_writes VALUES (NEW.id, 'update'); END"
        )
    }

    private func writes(_ device: Device) throws -> [String] {
        try device.queue.read { db in
            try db.fetchAll(String.self, sql: "SELECT id || ' ' || op FROM note_writes ORDER BY rowid")
        }
    }

    @Test(
        "a fetch from 0 writes the other device's row and not the rows this sync uploaded",
        arguments: DatabaseKind.allCases)
    func uploadedRowsAreNotWrittenAgain(kind: DatabaseKind) async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(kind, in: directory, name: "phone", server: server)
        let laptop = try Device(kind, in: directory, name: "laptop", server: server)
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        #expect(try laptop.cursor() == 0, "an empty first fetch leaves the cursor at 0: the next fetch is from 0")
        try phone.insertNote("from-phone", "phone's")
        _ = try await phone.client.sync()
        for id in ["ä\u{0}1", "laptop-2", "laptop-3"] { try laptop.insertNote(id, "laptop's \(id)") }
        try logWrites(laptop)
        let report = try await laptop.client.sync()
        #expect(report.uploaded == 3)
        #expect(report.downloaded == 1)
        #expect(try writes(laptop) == ["from-phone insert"])
        #expect(
            try laptop.titles()
                == phone.titles().merging([
                    "ä\u{0}1": "laptop's ä\u{0}1", "laptop-2": "laptop's laptop-2", "laptop-3": "laptop's laptop-3",
                ]) { $1 })
        #expect(try laptop.cursor() == server.latestVersion())
        // The next fetch from 0 (a definition change) writes every known row again, the
        // uploaded ones included: they are this sync's own no more.
        var changed = noteTable
        changed.structVersion = 2
        try server.replaceTable(changed)
        try laptop.execute("DELETE FROM note_writes")
        _ = try await laptop.client.sync()
        #expect(
            try Set(writes(laptop)) == ["from-phone update", "ä\u{0}1 update", "laptop-2 update", "laptop-3 update"])
    }
}

/// The fetch that follows an upload asks for pages as large as what the upload stored of the
/// table (up to the protocol's largest page): those rows come back and cost nothing to apply.
@Suite("The page size of the fetch after an upload", .timeLimit(.minutes(2)))
struct FetchAfterUploadPageSizeTests {
    @Test("a page is the client's size, or what the upload stored, at most the protocol's largest")
    func pageSizeFollowsTheUpload() {
        #expect(SyncClient.fetchPageSize(500, ownRows: 0) == 500)
        #expect(SyncClient.fetchPageSize(500, ownRows: 20) == 500)
        #expect(SyncClient.fetchPageSize(500, ownRows: 1_200) == 1_200)
        #expect(SyncClient.fetchPageSize(500, ownRows: 100_000) == SyncLimits.maximumPageSize)
        #expect(SyncClient.fetchPageSize(3, ownRows: 2) == 3)
    }

    @Test("1,200 rows uploaded come back in pages of 1,200 with another device's row between them, which is applied")
    func uploadedRowsComeBackInLargerPages() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let laptop = try Device(.file, in: directory, name: "laptop", server: server)
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        try await laptop.queue.write { db in
            for id in 1...1_200 {
                try db.execute(sql: "INSERT INTO note(id, title) VALUES (?, ?)", arguments: ["l\(id)", "laptop's"])
            }
        }
        // The phone's row lands between the laptop's second and third batch.
        laptop.transport.once("post-data", .after) {}
        laptop.transport.once("post-data", .after) {
            try phone.insertNote("from-phone", "phone's")
            _ = try await phone.client.sync()
        }
        laptop.transport.fetchRequests.withLock { $0.removeAll() }
        let report = try await laptop.client.sync()
        #expect(report.uploaded == 1_200)
        #expect(report.downloaded == 1)
        let limits = laptop.transport.fetchRequests.withLock { $0.map(\.limit) }
        #expect(limits == [1_200, 1_200])
        #expect(try laptop.titles()["from-phone"] == "phone's")
        #expect(try laptop.titles().count == 1_201)
        #expect(try laptop.cursor() == server.latestVersion())
        // The next fetch, with nothing uploaded, asks for the client's page size again.
        try phone.insertNote("again", "phone's")
        _ = try await phone.client.sync()
        laptop.transport.fetchRequests.withLock { $0.removeAll() }
        _ = try await laptop.client.sync()
        #expect(laptop.transport.fetchRequests.withLock { $0.map(\.limit) } == [SyncLimits.defaultPageSize])
    }
}
