import Foundation
import SerialDB
import SerialDBSyncWire
import SerialDBTestSupport
import Synchronization
import Testing

@testable import SerialDBSync

@Suite("Resync and keys", .timeLimit(.minutes(5)))
struct SyncResyncTests {
    @Test("a resync fetches from 0 and deletes local rows the server no longer has, except unsent ones")
    func resyncDeletesVanishedRows() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let laptop = try Device(.file, in: directory, name: "laptop", server: server, pageSize: 2)
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        for id in ["a", "b", "c", "d", "e"] { try phone.insertNote(id, id) }
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        try phone.execute("DELETE FROM note WHERE id IN ('a', 'b')")
        try phone.execute("UPDATE note SET title = 'C' WHERE id = 'c'")
        _ = try await phone.client.sync()
        try server.purgeTombstones(through: try server.latestVersion())
        // An unsent local row the server never had must survive the resync.
        let queue = laptop.queue
        laptop.transport.once("fetch-data") {
            try await queue.write { db in try db.execute(sql: "INSERT INTO note(id, title) VALUES ('local', 'unsent')")
            }
        }
        let report = try await laptop.client.sync()
        #expect(try laptop.titles() == ["c": "C", "d": "d", "e": "e", "local": "unsent"])
        #expect(report.downloaded == 3)  // the edit, and the two deletes found by the resync
        let leftovers = try await laptop.queue.read { db in
            try db.fetchOne(Int.self, sql: "SELECT count(*) FROM serialdb_sync_seen") ?? -1
        }
        #expect(leftovers == 0)
        _ = try await laptop.client.sync()
        #expect(try server.rows(of: "note", account: "alice").count == 4)
    }

    @Test("a resync interrupted between pages resumes and still deletes what it should")
    func interruptedResyncResumes() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let laptop = try Device(.file, in: directory, name: "laptop", server: server, pageSize: 2)
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        for id in ["a", "b", "c", "d", "e", "f"] { try phone.insertNote(id, id) }
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        try phone.execute("DELETE FROM note WHERE id = 'a'")
        try phone.execute("UPDATE note SET title = 'F' WHERE id = 'f'")
        _ = try await phone.client.sync()
        try server.purgeTombstones(through: try server.latestVersion())
        // The first fetch answers "resync"; the fetch from 0 fails.
        laptop.transport.once("fetch-data") {}
        laptop.transport.failOnce("fetch-data")
        await #expect(throws: SyncError.self) { _ = try await laptop.client.sync() }
        #expect(try laptop.titles()["a"] == "a")
        #expect(try laptop.cursor() == 0)
        _ = try await laptop.client.sync()
        #expect(try laptop.titles() == ["b": "b", "c": "c", "d": "d", "e": "e", "f": "F"])
    }

    @Test("a resync the server's pages cannot finish fails with a typed error instead of looping")
    func endlessResyncFails() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        _ = try await phone.client.sync()
        for id in ["a", "b", "c", "d", "e"] { try phone.insertNote(id, id) }
        _ = try await phone.client.sync()
        // Pages of 2 and a floor above every version: each page cursor is below the floor, and
        // a server that predates "resyncing" sends every page after the first back to 0.
        server.bends.withLock { bends in
            bends.pageCap = 2
            bends.ignoresResyncing = true
        }
        try server.purgeTombstones(through: 1000)
        let laptop = try Device(.file, in: directory, name: "laptop", server: server)
        let client = laptop.client
        let outcome = Mutex<Result<SyncReport, any Error>?>(nil)
        let task = Task {
            let result: Result<SyncReport, any Error>
            do {
                result = .success(try await client.sync())
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
        }
        do {
            try await waitUntil(timeout: .seconds(60)) { outcome.withLock { $0 != nil } }
        } catch {
            task.cancel()
            throw error
        }
        let result = try #require(outcome.withLock { $0 })
        #expect(throws: SyncError.self) { _ = try result.get() }
        #expect(try laptop.titles().count <= 2)
    }

    @Test(
        "a resync stops, saying so exactly, once 5000 changes lie below the floor, and goes through at 4999",
        arguments: [4999, 5000])
    func resyncLimitIsStatedExactly(changesBelowTheFloor: Int) async throws {
        try await resyncBelowAFloor(changesBelowTheFloor: changesBelowTheFloor, honorsResyncing: false)
    }

    @Test("a resync's pages say resyncing, so a server that honors it lets any number of changes through")
    func resyncingPagesPassAnyFloor() async throws {
        try await resyncBelowAFloor(changesBelowTheFloor: 5000, honorsResyncing: true)
    }

    @Test("a fetch-data request says resyncing only when it is part of a resync")
    func resyncingIsWrittenOnlyWhenTrue() throws {
        func written(_ request: FetchDataRequest) throws -> String {
            var writer = JSONWriter()
            try request.write(to: &writer)
            return writer.string
        }
        #expect(
            try written(FetchDataRequest(table: "note", since: 5, limit: 10))
                == #"{"table":"note","since":5,"limit":10}"#)
        #expect(
            try written(FetchDataRequest(table: "note", since: 5, limit: 10, resyncing: true))
                == #"{"table":"note","since":5,"limit":10,"resyncing":true}"#)
    }

    private func resyncBelowAFloor(changesBelowTheFloor: Int, honorsResyncing: Bool) async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        server.bends.withLock { $0.ignoresResyncing = !honorsResyncing }
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let laptop = try Device(.file, in: directory, name: "laptop", server: server)
        _ = try await phone.client.sync()
        try phone.insertNote("first", "t")
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        #expect(try laptop.cursor() == 1)
        try await phone.queue.write { db in
            for index in 0..<5000 {
                try db.execute(sql: "INSERT INTO note(id, title) VALUES (?, 't')", arguments: ["n\(index)"])
            }
        }
        _ = try await phone.client.sync()
        // Versions 1...5001; the laptop's cursor 1 is below the floor, so it resyncs in pages
        // of 5000, whose first ends at version 5000.
        try server.purgeTombstones(through: Int64(changesBelowTheFloor) + 1)
        if changesBelowTheFloor < 5000 || honorsResyncing {
            _ = try await laptop.client.sync()
            #expect(try laptop.titles().count == 5001)
        } else {
            let error = await #expect(throws: SyncError.self) { _ = try await laptop.client.sync() }
            #expect(error?.code == .invalidResponse)
            #expect(error?.message.contains("5000 or more of its changes lie below") == true)
        }
    }

    @Test("BLOB, integer and composite keys sync, update and delete by their canonical form")
    func blobAndCompositeKeys() async throws {
        let directory = try TemporaryDirectory()
        let table = InProcessSyncServer.Table(
            name: "cell",
            schema:
                "CREATE TABLE cell(sheet BLOB NOT NULL, n INTEGER NOT NULL, label TEXT, value REAL, PRIMARY KEY(sheet, n))"
        )
        let server = try InProcessSyncServer(tables: [table])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let laptop = try Device(.memory, in: directory, name: "laptop", server: server)
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        let sheet = Data([0, 39, 44, 255])
        try phone.execute("INSERT INTO cell VALUES (?, 1, 'it''s, odd', 2.5), (?, 2, NULL, 3)", [sheet, sheet])
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        try laptop.execute("UPDATE cell SET value = 7.25 WHERE sheet = ? AND n = 1", [sheet])
        try laptop.execute("DELETE FROM cell WHERE n = 2")
        let report = try await laptop.client.sync()
        #expect(report.uploaded == 2 && report.conflicts.isEmpty)
        _ = try await phone.client.sync()
        let rows = try await phone.queue.read { db in
            try db.fetchAll(Row.self, sql: "SELECT sheet, n, label, value FROM cell").map { row in
                (0..<4).map { row[$0] }
            }
        }
        #expect(rows.count == 1)
        #expect(rows.first?[0] == .blob(sheet))
        #expect(rows.first?[2] == .text("it's, odd"))
        #expect(rows.first?[3] == .real(7.25))
    }

    @Test("SHA-256 matches the standard's test vectors")
    func sha256MatchesVectors() {
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex([UInt8]()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }
}
