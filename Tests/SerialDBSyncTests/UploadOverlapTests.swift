import Foundation
import SerialDB
import SerialDBSyncWire
import SerialDBTestSupport
import Synchronization
import Testing

@testable import SerialDBSync

/// While a batch is on its way to the server, the next one is read from the outbox. That batch
/// leaves for later what depends on the answer: a key of the batch on its way (its base version
/// comes with the answer), an entry it would reject (the sync may yet fail and never report
/// it); and it is never a retry of the batch on its way.
@Suite("The next batch, made while one is sent", .timeLimit(.minutes(2)))
struct UploadOverlapTests {
    /// A device whose outbox holds upserts of n1...n4, in that order.
    private func device(_ directory: TemporaryDirectory, _ server: InProcessSyncServer) async throws -> Device {
        let device = try Device(.file, in: directory, name: "device", server: server)
        _ = try await device.client.sync()
        for id in 1...4 { try device.insertNote("n\(id)", "note \(id)") }
        return device
    }

    private func ids(_ batch: Outbox.Batch) -> [String] {
        batch.mutations.map { mutation in
            if case .text(let id)? = mutation.row?["id"] { return id }
            return "?"
        }
    }

    @Test("it stops before a key of the batch on its way, and holds no retry of that batch")
    func itStopsBeforeAKeyOnItsWay() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let device = try await device(directory, server)
        let sending = try await device.queue.write { db in try Outbox.nextBatch(db, limit: 2, through: .max) }
        #expect(ids(sending) == ["n1", "n2"])
        #expect(sending.keys.count == 2)
        // The app changes n1 again while that batch is on its way: a new entry after n4.
        try device.execute("UPDATE note SET title = 'again' WHERE id = 'n1'")
        let next = try await device.queue.write { db in
            try Outbox.nextBatch(db, limit: 10, through: .max, sending: sending.keys)
        }
        #expect(next.isRetry == false)
        #expect(ids(next) == ["n3", "n4"])
        // Without a batch on its way: first the batch sent without an answer, as it was sent
        // (each kept batch is retried on its own).
        let retry = try await device.queue.write { db in try Outbox.nextBatch(db, limit: 10, through: .max) }
        #expect(retry.isRetry)
        #expect(ids(retry) == ["n1", "n2"])
        #expect(retry.encodedMutations == sending.encodedMutations)
    }

    @Test("it stops before an entry it would reject, which the next batch rejects and reports")
    func itLeavesRejectionsForLater() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let device = try await device(directory, server)
        let sending = try await device.queue.write { db in try Outbox.nextBatch(db, limit: 2, through: .max) }
        // Too large to travel: rejected by a batch made without one on its way.
        let huge = String(repeating: "x", count: Outbox.maximumBatchBytes + 10)
        try device.execute("UPDATE note SET body = ? WHERE id = 'n3'", [huge])
        try device.execute("INSERT INTO note(id, title) VALUES ('n5', 'note 5')")
        let next = try await device.queue.write { db in
            try Outbox.nextBatch(db, limit: 10, through: .max, sending: sending.keys)
        }
        #expect(ids(next) == ["n4"])
        #expect(next.rejected.isEmpty)
        // Settle the first two, then a plain batch: n3 is rejected (and reported), n5 goes.
        let results = sending.mutations.map { SyncMutationResult(seq: $0.seq, status: .applied, version: 1) }
        _ = try await device.queue.write { db in
            try Outbox.settle(db, batch: sending.mutations, results: results, resolver: nil)
        }
        let plain = try await device.queue.write { db in try Outbox.nextBatch(db, limit: 10, through: .max) }
        #expect(plain.isRetry, "n4, marked sent, goes first as it was kept")
        let results4 = plain.mutations.map { SyncMutationResult(seq: $0.seq, status: .applied, version: 2) }
        _ = try await device.queue.write { db in
            try Outbox.settle(db, batch: plain.mutations, results: results4, resolver: nil)
        }
        let last = try await device.queue.write { db in try Outbox.nextBatch(db, limit: 10, through: .max) }
        #expect(ids(last) == ["n5"])
        #expect(last.rejected.map(\.key) == [["id": .text("n3")]])
    }

    @Test("rows changed while a batch is on its way go up with the next sync, without a conflict")
    func rowsChangedWhileABatchIsSentGoUpNext() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let device = try Device(.file, in: directory, name: "device", server: server, pageSize: 3)
        let other = try Device(.file, in: directory, name: "other", server: server)
        _ = try await device.client.sync()
        for id in 1...8 { try device.insertNote("n\(id)", "note \(id)") }
        _ = try await device.client.sync()
        for id in 1...8 { try device.execute("UPDATE note SET title = 'second' WHERE id = ?", ["n\(id)"]) }
        // While the first batch (n1...n3) is on its way, n1 and n5 change again.
        let queue = device.queue
        device.transport.once("post-data") {
            try await queue.write { db in
                try db.execute(sql: "UPDATE note SET title = 'third' WHERE id IN ('n1', 'n5')")
            }
        }
        let report = try await device.client.sync()
        #expect(report.conflicts.isEmpty)
        // The hook's write races the reading of the next batch (n4...n6), which happens while
        // the first is on its way: read first, n5 goes up as 'second' (8 uploaded); written
        // first, n5's entry moves past this sync's high-water mark (7 uploaded). Either way:
        #expect([7, 8].contains(report.uploaded), "uploaded \(report.uploaded)")
        // Written after the upload began: they go with the next sync, on the versions just seen.
        #expect(try device.outboxCount() == 2)
        let again = try await device.client.sync()
        #expect(again.conflicts.isEmpty)
        #expect(again.uploaded == 2)
        #expect(try device.outboxCount() == 0)
        _ = try await other.client.sync()
        #expect(try other.titles() == device.titles())
        #expect(try other.titles()["n1"] == "third")
        #expect(try other.titles()["n5"] == "third")
    }

    @Test("a batch that fails to be made while one is on its way throws only once that one is answered")
    func aFailureWaitsForTheRequestInFlight() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let device = try Device(.file, in: directory, name: "device", server: server, pageSize: 2)
        _ = try await device.client.sync()
        for id in 1...2 { try device.insertNote("n\(id)", "note \(id)") }
        // An entry whose key is not one of `note`'s: the second batch cannot be made.
        try device.execute(
            "INSERT INTO serialdb_sync_outbox(table_name, key, op) VALUES ('note', 'not a key', 'upsert')")
        let events = Mutex<[String]>([])
        device.transport.once("post-data") {
            events.withLock { $0.append("first batch sent") }
            try await Task.sleep(for: .milliseconds(300))
        }
        device.transport.once("post-data", .after) { events.withLock { $0.append("first batch answered") } }
        await #expect(throws: SyncError.self) { try await device.client.sync() }
        events.withLock { $0.append("sync threw") }
        try await waitUntil(timeout: .seconds(10)) { events.withLock { $0.contains("first batch answered") } }
        #expect(events.withLock { $0 } == ["first batch sent", "first batch answered", "sync threw"])
        // Once the bad entry is gone, the first batch goes again as it was sent: applied once.
        try device.execute("DELETE FROM serialdb_sync_outbox WHERE key = 'not a key'")
        let report = try await device.client.sync()
        #expect(report.uploaded == 2)
        #expect(try device.outboxCount() == 0)
        #expect(try server.rows(of: "note", account: "alice").count == 2)
    }
}

/// Settling an answer deletes the batch's entries as a range of seqs, and takes their keys
/// from the batch instead of reading them back, when the range holds just the batch's entries.
@Suite("An answer settled", .timeLimit(.minutes(2)))
struct SettleTests {
    @Test("an entry deleted by hand while its batch travelled is not settled, the others are")
    func anEntryDeletedByHandIsNotSettled() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let device = try Device(.file, in: directory, name: "device", server: server)
        _ = try await device.client.sync()
        for id in 1...4 { try device.insertNote("n\(id)", "note \(id)") }
        let batch = try await device.queue.write { db in try Outbox.nextBatch(db, limit: 10, through: .max) }
        #expect(batch.entryKeys.count == 4)
        // n2's entry is deleted by hand; the server applied all four.
        try device.execute("DELETE FROM serialdb_sync_outbox WHERE seq = ?", [batch.mutations[1].seq])
        let results = batch.mutations.enumerated().map { index, mutation in
            SyncMutationResult(seq: mutation.seq, status: .applied, version: Int64(11 + index))
        }
        let settled = try await device.queue.write { db in
            try Outbox.settle(db, batch: batch.mutations, entryKeys: batch.entryKeys, results: results, resolver: nil)
        }
        #expect(settled.uploaded == 3)
        let known = try await device.queue.read { db in
            try ["n1", "n2", "n3", "n4"].map { id in
                try SyncMetadata.knownVersion(db, table: "note", key: CanonicalKey.make(db, values: [.text(id)]))
            }
        }
        #expect(known == [11, nil, 13, 14])
        #expect(try device.outboxCount() == 0)
    }

    @Test("results in another order than the batch are settled by seq")
    func resultsInAnotherOrderAreSettledBySeq() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let device = try Device(.file, in: directory, name: "device", server: server)
        _ = try await device.client.sync()
        for id in 1...3 { try device.insertNote("n\(id)", "note \(id)") }
        let batch = try await device.queue.write { db in try Outbox.nextBatch(db, limit: 10, through: .max) }
        let results = batch.mutations.enumerated().map { index, mutation in
            SyncMutationResult(seq: mutation.seq, status: .applied, version: Int64(21 + index))
        }.reversed()
        _ = try await device.queue.write { db in
            try Outbox.settle(
                db, batch: batch.mutations, entryKeys: batch.entryKeys, results: Array(results), resolver: nil)
        }
        let known = try await device.queue.read { db in
            try ["n1", "n2", "n3"].map { id in
                try SyncMetadata.knownVersion(db, table: "note", key: CanonicalKey.make(db, values: [.text(id)]))
            }
        }
        #expect(known == [21, 22, 23])
    }
}
