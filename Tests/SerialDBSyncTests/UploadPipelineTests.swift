import Foundation
import SerialDB
import SerialDBSyncWire
import SerialDBTestSupport
import Synchronization
import Testing

@testable import SerialDBSync

/// An upload sends batch N+1 as soon as batch N is answered, settles N while N+1 travels, then
/// reads N+2. These tests hold the promises that ordering must keep: no batch goes up on a base
/// version an unsettled answer is about to change, an answer received is settled even when the
/// next request fails, and nothing throws while a request is in flight.
@Suite("Settling one batch while the next travels", .timeLimit(.minutes(2)))
struct UploadPipelineTests {
    private func sentCount(_ queue: DatabaseQueue) -> Int {
        (try? queue.read { db in
            try db.fetchOne(
                Int.self, sql: "SELECT count(*) FROM serialdb_sync_outbox WHERE seq <= \(SyncMetadata.sentThroughSQL)")
        }) ?? 0
    }

    @Test("entries sent without an answer, and an unsent one of a key, are found by a seek behind 20,000 waiting ones")
    func sentEntriesAreFoundWithoutReadingTheOutbox() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let device = try Device(.file, in: directory, name: "device", server: server)
        _ = try await device.client.sync()
        try await device.queue.write { db in
            for id in 0..<20_000 {
                try db.execute(
                    sql: "INSERT INTO note(id, title) VALUES (?, 't')", arguments: [String(format: "n%05d", id)])
            }
        }
        // The first batch's answer is lost: it and the batch read while it travelled stay
        // marked sent, the rest wait.
        device.transport.failOnce("post-data", .after)
        await #expect(throws: SyncError.self) { _ = try await device.client.sync() }
        #expect(sentCount(device.queue) == 1_000)
        // What the outbox trigger runs for each write of the app: the key's unsent entry.
        let replaced =
            "DELETE FROM serialdb_sync_outbox WHERE \(ChangeCapture.unsent) AND table_name = 'note' AND key = ?"
        // (A write block: the plan of a DELETE is asked for, although nothing runs.)
        let (first, inRange, plans, keyPlan) = try await device.queue.write { db in
            func plan(_ sql: String, _ arguments: StatementArguments) throws -> String {
                try db.fetchAll(Row.self, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments)
                    .map { try $0.decode(String.self, at: 3) }.joined(separator: "; ")
            }
            return (
                try db.fetchOne(Int64.self, sql: Outbox.firstSentEntrySQL),
                try db.fetchOne(Bool.self, sql: Outbox.sentEntryInRangeSQL, arguments: [1, 500]),
                [try plan(Outbox.firstSentEntrySQL, []), try plan(Outbox.sentEntryInRangeSQL, [1, 500])],
                try plan(replaced, ["Tn10000"])
            )
        }
        #expect(first == 1 && inRange == true)
        for plan in plans {
            #expect(plan.contains("USING INTEGER PRIMARY KEY (rowid"), "\(plan)")
        }
        #expect(keyPlan.contains("USING INDEX serialdb_sync_outbox_key (table_name=? AND key=?)"), "\(keyPlan)")
        let retry = try await device.client.sync()
        #expect(retry.uploaded == 20_000)
        #expect(sentCount(device.queue) == 0)
    }

    @Test("the batch read once one is settled holds no key of the batch then on its way")
    func aBatchReadWhileOneTravelsHoldsNoneOfItsKeys() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let device = try Device(
            .file, in: directory, name: "device", server: server, resolver: { _ in .keepLocal }, pageSize: 2)
        let other = try Device(.file, in: directory, name: "other", server: server)
        _ = try await device.client.sync()
        for id in 1...4 { try device.insertNote("n\(id)", "note \(id)") }
        _ = try await device.client.sync()
        _ = try await other.client.sync()
        // The other device changes n1 and n2 first: the device's first batch conflicts on both,
        // and the resolver queues them again, which moves this sync's high-water mark past
        // whatever the app writes meanwhile.
        try other.execute("UPDATE note SET title = 'other' WHERE id IN ('n1', 'n2')")
        _ = try await other.client.sync()
        try device.execute("UPDATE note SET title = 'device'")
        let queue = device.queue
        device.transport.once("post-data", .after) {
            // The first batch (n1, n2) is answered; once the second (n3, n4) is read and marked
            // sent, the app changes n3 again: a new entry, inside this sync once the conflicts
            // are queued again. It must wait for the answer about n3 (its base version).
            try await waitUntil(timeout: .seconds(30)) { sentCount(queue) == 4 }
            try await queue.write { db in try db.execute(sql: "UPDATE note SET title = 'again' WHERE id = 'n3'") }
        }
        let report = try await device.client.sync()
        #expect(Set(report.conflicts.map { $0.key["id"] }) == [.text("n1"), .text("n2")])
        #expect(report.uploaded == 5, "n3, n4, then n3 again, n1 and n2 on the server's versions")
        #expect(try device.outboxCount() == 0)
        let titles = Dictionary(
            uniqueKeysWithValues: try server.rows(of: "note", account: "alice").map { row in
                (row["id"], row["title"])
            })
        #expect(
            titles == [
                .text("n1"): .text("device"), .text("n2"): .text("device"), .text("n3"): .text("again"),
                .text("n4"): .text("device"),
            ])
        _ = try await other.client.sync()
        #expect(try other.titles() == device.titles())
    }

    @Test("a batch answered is settled even when the request sent after it fails")
    func anAnswerIsSettledWhenTheNextRequestFails() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let device = try Device(.file, in: directory, name: "device", server: server, pageSize: 2)
        _ = try await device.client.sync()
        for id in 1...4 { try device.insertNote("n\(id)", "note \(id)") }
        let transport = device.transport
        transport.once("post-data") { transport.failOnce("post-data") }
        await #expect(throws: SyncError.self) { try await device.client.sync() }
        // n1 and n2 were answered and settled; n3 and n4 wait, kept as they were sent.
        #expect(try server.rows(of: "note", account: "alice").count == 2)
        #expect(try device.outboxCount() == 2)
        #expect(sentCount(device.queue) == 2)
        let report = try await device.client.sync()
        #expect(report.uploaded == 2)
        #expect(report.conflicts.isEmpty)
        #expect(try device.outboxCount() == 0)
        // The settled batch never went again; the one that failed went again with its seqs.
        let sent = server.receivedSeqs.withLock { $0 }
        #expect(sent.count == 6, "\(sent)")
        #expect(Set(sent).count == 4)
        #expect(try server.rows(of: "note", account: "alice").count == 4)
    }

    @Test("a sync cancelled while one batch is settled and the next travels throws once that one is answered")
    func aCancelledSettleWaitsForTheRequestInFlight() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let device = try Device(.file, in: directory, name: "device", server: server, pageSize: 2)
        _ = try await device.client.sync()
        for id in 1...6 { try device.insertNote("n\(id)", "note \(id)") }
        let queue = device.queue
        let events = Mutex<[String]>([])
        let sync = Mutex<Task<SyncReport, any Error>?>(nil)
        let blocking = Mutex(false)
        let release = DispatchSemaphore(value: 0)
        let transport = device.transport
        transport.once("post-data", .after) {
            // The first batch is answered and the second read: the database's queue is held, so
            // that settling the first cannot start before the sync is cancelled.
            try await waitUntil(timeout: .seconds(30)) { sentCount(queue) == 4 }
            Thread.detachNewThread {
                try? queue.write { _ in
                    blocking.withLock { $0 = true }
                    _ = release.wait(timeout: .now() + 30)
                }
            }
            try await waitUntil(timeout: .seconds(30)) { blocking.withLock { $0 } }
            transport.once("post-data") {
                events.withLock { $0.append("second batch sent") }
                try await waitUntil(timeout: .seconds(30)) { sync.withLock { $0 != nil } }
                sync.withLock { $0?.cancel() }
                release.signal()
                try await Task.sleep(for: .milliseconds(300))
            }
            transport.once("post-data", .after) { events.withLock { $0.append("second batch answered") } }
        }
        let task = Task { try await device.client.sync() }
        sync.withLock { $0 = task }
        await #expect(throws: CancellationError.self) { try await task.value }
        events.withLock { $0.append("sync threw") }
        #expect(events.withLock { $0 } == ["second batch sent", "second batch answered", "sync threw"])
        // Nothing is lost: both batches go again as they were sent, then the rest.
        let report = try await device.client.sync()
        #expect(report.uploaded == 6)
        #expect(try device.outboxCount() == 0)
        #expect(try server.rows(of: "note", account: "alice").count == 6)
    }
}
