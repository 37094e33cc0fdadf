import Foundation
import SerialDB
import SerialDBSyncWire
import SerialDBTestSupport
import Testing

@testable import SerialDBSync

/// A fetch skips the known-version lookups of a page only when nothing but its own earlier
/// pages can have written the table's known versions, and the page's changes are all above
/// them (`Download.KnownVersionBound`). A write between pages, or a page that goes back below
/// the versions applied, makes the page look its keys up again, so a stale row never overwrites
/// a newer one.
@Suite("Known versions skipped only where they cannot matter", .timeLimit(.minutes(2)))
struct KnownVersionBoundTests {
    private func knownVersion(_ device: Device, _ id: String) throws -> Int64? {
        try device.queue.read { db in
            try SyncMetadata.knownVersion(db, table: "note", key: try CanonicalKey.make(db, values: [.text(id)]))
        }
    }

    /// A server with notes n1...n4 from the phone, and a laptop that has not synced, with
    /// pages of 2: its first download is page 1 (n1, n2), then page 2 (n3, n4, the last).
    private func fourNotes(in directory: TemporaryDirectory) async throws -> (InProcessSyncServer, Device, Device) {
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let laptop = try Device(.file, in: directory, name: "laptop", server: server, pageSize: 2)
        _ = try await phone.client.sync()
        for id in 1...4 { try phone.insertNote("n\(id)", "first") }
        _ = try await phone.client.sync()
        return (server, phone, laptop)
    }

    @Test(
        "a page that was built before another client stored a newer version does not overwrite it",
        arguments: [false, true])
    func anotherClientBetweenPages(throughAnotherConnection: Bool) async throws {
        let directory = try TemporaryDirectory()
        let (server, phone, laptop) = try await fourNotes(in: directory)
        // Once page 2 is built, and page 1 committed, n3 changes on the server and a second client
        // of the laptop's database downloads it; then page 2, now stale, reaches the laptop.
        let second: SyncClient
        if throughAnotherConnection {
            let queue = try DatabaseQueue(path: directory.path("laptop.sqlite"))
            second = try SyncClient(queue: queue, transport: server.transport(token: "t-alice"))
        } else {
            second = try SyncClient(queue: laptop.queue, transport: server.transport(token: "t-alice"))
        }
        laptop.transport.once("fetch-data", .after) {}
        laptop.transport.once("fetch-data", .after) {
            try await waitUntil(timeout: .seconds(20)) { (try? laptop.cursor()) == 2 }
            try phone.execute("UPDATE note SET title = 'second' WHERE id = 'n3'")
            _ = try await phone.client.sync()
            let report = try await second.sync()
            #expect(report.downloaded >= 1)
        }
        _ = try await laptop.client.sync()
        let newest = try #require(try knownVersion(phone, "n3"))
        #expect(try laptop.titles()["n3"] == "second")
        #expect(try knownVersion(laptop, "n3") == newest)
        #expect(try laptop.titles() == phone.titles())
    }

    @Test("a page that goes back below the versions already applied still meets them")
    func aPageBelowTheAppliedVersions() async throws {
        let directory = try TemporaryDirectory()
        let (_, phone, laptop) = try await fourNotes(in: directory)
        // Page 2 also carries n1 at a version below the one page 1 applied: stale.
        laptop.transport.once("fetch-data", .after) {}
        laptop.transport.once("fetch-data", .after) {
            laptop.transport.rewriteNextPage.withLock {
                $0 = { page in
                    var page = page
                    page.changes.append(
                        SyncChange(version: 0, deleted: false, row: ["id": .text("n1"), "title": .text("stale")]))
                    return page
                }
            }
        }
        _ = try await laptop.client.sync()
        #expect(try laptop.titles()["n1"] == "first")
        #expect(try knownVersion(laptop, "n1") == knownVersion(phone, "n1"))
    }
}
