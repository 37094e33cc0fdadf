import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

@testable import SerialDBSync

@Suite("A sync client on a DatabasePool, observed", .timeLimit(.minutes(5)))
struct SyncThroughPoolTests {
    @Test func aPoolSyncsWithAQueueAndAnObservationSeesTheDownloadedRows() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let pool = try DatabasePool(path: directory.path("laptop.sqlite"))
        let laptop = try SyncClient(database: pool, transport: server.transport(token: "t-alice"))

        // Observed before the table exists: the sync's schema change re-runs the fetch.
        var titles = pool.observe { db in
            try db.tableExists("note")
                ? try db.fetchAll(String.self, sql: "SELECT title FROM note ORDER BY id") : ["no table"]
        }.makeAsyncIterator()
        #expect(try await titles.next() == ["no table"])
        _ = try await phone.client.sync()
        let created = try await laptop.sync()
        #expect(created.schemaChanges.map(\.table) == ["note"])
        #expect(try await titles.next() == [])

        try phone.insertNote("n1", "from the phone")
        _ = try await phone.client.sync()
        let download = try await laptop.sync()
        #expect(download.downloaded == 1)
        #expect(try await titles.next() == ["from the phone"])

        // And back: a row written through the pool uploads and reaches the phone.
        try await pool.write { db in
            try db.execute(sql: "INSERT INTO note(id, title) VALUES ('n2', 'from the pool')")
        }
        #expect(try await titles.next() == ["from the phone", "from the pool"])
        let upload = try await laptop.sync()
        #expect(upload.uploaded == 1)
        _ = try await phone.client.sync()
        #expect(try phone.titles() == ["n1": "from the phone", "n2": "from the pool"])
    }
}
