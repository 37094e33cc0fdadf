import Foundation
import SerialDB
import SerialDBSyncWire
import SerialDBTestSupport
import Synchronization
import Testing

@testable import SerialDBSync

/// The next page is asked for while the current one is applied. A page that fails to apply,
/// or whose rows cannot be read, still waits for that request's answer: no request outlives the sync, and the page it brought
/// is not applied.
@Suite("The next page, asked for while a page is applied", .timeLimit(.minutes(2)))
struct PagePrefetchTests {
    /// How the first page fails.
    enum Failure: String, CaseIterable, Sendable, CustomStringConvertible {
        /// A column the table lacks: the page fails to apply.
        case apply
        /// A change whose "deleted" is a string: the page's cursor reads, its rows do not.
        case read

        var description: String { rawValue }
    }

    @Test(
        "a page that fails to apply, or whose rows cannot be read, throws only once the next page's request is answered",
        arguments: Failure.allCases)
    func aFailedPageWaitsForTheRequestInFlight(failure: Failure) async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let laptop = try Device(.file, in: directory, name: "laptop", server: server, pageSize: 2)
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        for id in 1...5 { try phone.insertNote("n\(id)", "note \(id)") }
        _ = try await phone.client.sync()
        // The first page fails; the second page's request takes a while to answer.
        let events = Mutex<[String]>([])
        laptop.transport.once("fetch-data", .before) {}
        laptop.transport.once("fetch-data", .after) {}
        laptop.transport.once("fetch-data", .before) {
            events.withLock { $0.append("second request sent") }
            try await Task.sleep(for: .milliseconds(300))
        }
        laptop.transport.once("fetch-data", .after) { events.withLock { $0.append("second request answered") } }
        switch failure {
        case .apply:
            laptop.transport.spoilNextPage(atChange: 1)
        case .read:
            laptop.transport.rewriteNextAnswerBytes.withLock {
                $0 = { bytes in
                    let text = String(decoding: bytes, as: UTF8.self)
                    return Array(text.replacing(#""deleted":false"#, with: #""deleted":"no""#).utf8)
                }
            }
        }
        let error = await #expect(throws: SyncError.self) { try await laptop.client.sync() }
        events.withLock { $0.append("sync threw") }
        if failure == .read { #expect(error?.code == .invalidResponse) }
        try await waitUntil(timeout: .seconds(10)) { events.withLock { $0.contains("second request answered") } }
        #expect(events.withLock { $0 } == ["second request sent", "second request answered", "sync threw"])
        // Nothing of either page was applied; the next sync fetches all from the same cursor.
        #expect(try laptop.titles() == [:])
        let report = try await laptop.client.sync()
        #expect(report.downloaded == 5)
        #expect(try laptop.titles() == phone.titles())
        #expect(try laptop.cursor() == server.latestVersion())
    }

    @Test("pages fetched ahead are applied in order, each with its cursor", arguments: [1, 2, 7])
    func pagesAreAppliedInOrder(pageSize: Int) async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let laptop = try Device(.file, in: directory, name: "laptop", server: server, pageSize: pageSize)
        _ = try await phone.client.sync()
        for id in 1...15 { try phone.insertNote("n\(id)", "note \(id)") }
        _ = try await phone.client.sync()
        // Later versions of some rows, and a delete: a page applied out of order would leave
        // an older title or bring a deleted row back.
        try phone.execute("UPDATE note SET title = 'second' WHERE id IN ('n1', 'n9')")
        try phone.execute("DELETE FROM note WHERE id = 'n4'")
        _ = try await phone.client.sync()
        let report = try await laptop.client.sync()
        #expect(report.downloaded == 14)
        #expect(try laptop.titles() == phone.titles())
        #expect(try laptop.titles()["n9"] == "second")
        #expect(try laptop.cursor() == server.latestVersion())
        #expect(try laptop.outboxCount() == 0)
    }
}
