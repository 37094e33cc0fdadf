import Foundation
import SerialDB
import SerialDBTestSupport
import Synchronization
import Testing

@testable import SerialDBSync

@Suite("SyncClient against an in-memory server", .timeLimit(.minutes(5)))
struct SyncClientTests {
    @Test("two devices of one account converge through inserts, updates and deletes", arguments: DatabaseKind.allCases)
    func twoDevicesConverge(kind: DatabaseKind) async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(kind, in: directory, name: "phone", server: server)
        let laptop = try Device(kind, in: directory, name: "laptop", server: server)
        let first = try await phone.client.sync()
        #expect(first.schemaChanges.map(\.table) == ["note"])
        _ = try await laptop.client.sync()

        for index in 0..<30 { try phone.insertNote("p\(index)", "phone \(index)") }
        try laptop.insertNote("l1", "laptop")
        let upload = try await phone.client.sync()
        #expect(upload.uploaded == 30)
        #expect(upload.downloaded == 0)
        let download = try await laptop.client.sync()
        #expect(download.uploaded == 1)
        #expect(download.downloaded == 30)

        try laptop.execute("UPDATE note SET title = 'edited' WHERE id = 'p3'")
        try laptop.execute("DELETE FROM note WHERE id = 'p4'")
        _ = try await laptop.client.sync()
        let last = try await phone.client.sync()
        #expect(last.downloaded == 3)  // l1, the edit, the delete
        #expect(try phone.titles() == laptop.titles())
        #expect(try phone.titles()["p3"] == "edited")
        #expect(try phone.titles()["p4"] == nil)
        #expect(try phone.titles().count == 30)
        #expect(try phone.outboxCount() == 0)
        #expect(try laptop.outboxCount() == 0)
    }

    @Test("rows applied from the server never feed the outbox", arguments: DatabaseKind.allCases)
    func serverRowsDoNotFeedTheOutbox(kind: DatabaseKind) async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(kind, in: directory, name: "phone", server: server)
        let laptop = try Device(kind, in: directory, name: "laptop", server: server)
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        for index in 0..<10 { try phone.insertNote("n\(index)", "t") }
        #expect(try phone.outboxCount() == 10)
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        #expect(try laptop.titles().count == 10)
        #expect(try laptop.outboxCount() == 0)
        let again = try await laptop.client.sync()
        #expect(again.uploaded == 0)
        #expect(server.receivedSeqs.withLock { $0.count } == 10)
    }

    @Test("two accounts never see each other's rows, even with the same keys")
    func accountsAreSeparate() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let alice = try Device(.file, in: directory, name: "alice", server: server, token: "t-alice")
        let bob = try Device(.file, in: directory, name: "bob", server: server, token: "t-bob")
        _ = try await alice.client.sync()
        _ = try await bob.client.sync()
        try alice.insertNote("same", "alice's")
        try bob.insertNote("same", "bob's")
        try bob.insertNote("b", "bob only")
        _ = try await alice.client.sync()
        let bobReport = try await bob.client.sync()
        #expect(bobReport.conflicts.isEmpty)
        _ = try await alice.client.sync()
        #expect(try alice.titles() == ["same": "alice's"])
        #expect(try bob.titles() == ["same": "bob's", "b": "bob only"])
    }

    @Test("a database synced for one account refuses another account's token before uploading anything")
    func anotherAccountIsRefused() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let alice = try Device(.file, in: directory, name: "shared", server: server, token: "t-alice")
        _ = try await alice.client.sync()
        try alice.insertNote("a", "alice's, unsent")
        let intruder = try SyncClient(queue: alice.queue, transport: server.transport(token: "t-bob"))
        await #expect(throws: SyncError.self) {
            do { _ = try await intruder.sync() } catch let error as SyncError where error.code == .accountMismatch {
                throw error
            }
        }
        #expect(try server.rows(of: "note", account: "bob").isEmpty)
        #expect(try alice.outboxCount() == 1)
    }

    @Test("concurrent edits of one row come back as a conflict that adopts the server's row")
    func concurrentEditsAreAConflict() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let laptop = try Device(.memory, in: directory, name: "laptop", server: server)
        _ = try await phone.client.sync()
        try phone.insertNote("a", "original")
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        try phone.execute("UPDATE note SET title = 'phone edit' WHERE id = 'a'")
        try laptop.execute("UPDATE note SET title = 'laptop edit' WHERE id = 'a'")
        _ = try await phone.client.sync()
        let report = try await laptop.client.sync()
        let conflict = try #require(report.conflicts.first)
        #expect(report.conflicts.count == 1)
        #expect(conflict.table == "note")
        #expect(conflict.key == ["id": .text("a")])
        #expect(conflict.localRow?["title"] == .text("laptop edit"))
        #expect(conflict.serverRow?["title"] == .text("phone edit"))
        #expect(conflict.serverVersion > conflict.localBaseVersion)
        #expect(conflict.resolution == .keepServer)
        #expect(try laptop.titles()["a"] == "phone edit")
        #expect(try laptop.outboxCount() == 0)
        let quiet = try await laptop.client.sync()
        #expect(quiet.conflicts.isEmpty && quiet.uploaded == 0)
    }

    @Test("a conflict resolver may keep the local row, which goes up again on the server's version")
    func resolverKeepsLocalRow() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let laptop = try Device(.file, in: directory, name: "laptop", server: server, resolver: { _ in .keepLocal })
        _ = try await phone.client.sync()
        try phone.insertNote("a", "original")
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        try phone.execute("UPDATE note SET title = 'phone edit' WHERE id = 'a'")
        try laptop.execute("UPDATE note SET title = 'laptop wins' WHERE id = 'a'")
        _ = try await phone.client.sync()
        let report = try await laptop.client.sync()
        #expect(report.conflicts.map(\.resolution) == [.keepLocal])
        #expect(report.uploaded == 1)
        #expect(try laptop.outboxCount() == 0)
        _ = try await phone.client.sync()
        #expect(try phone.titles()["a"] == "laptop wins")
        #expect(try server.rows(of: "note", account: "alice").first?["title"] == .text("laptop wins"))
    }

    @Test("a download never overwrites a row that still has unsent local changes")
    func downloadKeepsUnsentChanges() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let laptop = try Device(.file, in: directory, name: "laptop", server: server)
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        try phone.insertNote("a", "from phone")
        _ = try await phone.client.sync()
        // The app writes the same row on the laptop while its sync is between upload and download.
        let queue = laptop.queue
        laptop.transport.once("fetch-data") {
            try await queue.write { db in
                try db.execute(sql: "INSERT INTO note(id, title) VALUES ('a', 'laptop, unsent')")
            }
        }
        _ = try await laptop.client.sync()
        #expect(try laptop.titles()["a"] == "laptop, unsent")
        #expect(try laptop.outboxCount() == 1)
        let next = try await laptop.client.sync()
        #expect(next.conflicts.count == 1)
    }

    @Test("an upload whose answer was lost is sent again with the same seqs and applied once")
    func retriedUploadIsAppliedOnce() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        _ = try await phone.client.sync()
        try phone.insertNote("a", "x")
        try phone.insertNote("b", "y")
        phone.transport.failOnce("post-data", .after)
        await #expect(throws: SyncError.self) { _ = try await phone.client.sync() }
        // Edited after the lost answer: a new change, not a rewrite of the one in flight.
        try phone.execute("UPDATE note SET title = 'x2' WHERE id = 'a'")
        let retry = try await phone.client.sync()
        #expect(retry.conflicts.isEmpty)
        #expect(retry.uploaded == 3)
        let received = server.receivedSeqs.withLock { $0 }
        #expect(received.count == 5)
        #expect(Set(received).count == 3)
        #expect(try server.latestVersion() == 3)
        #expect(try server.rows(of: "note", account: "alice").first { $0["id"] == .text("a") }?["title"] == .text("x2"))
    }

    @Test("an upload left unanswered under the outbox layout before (mutation kept in the entry) is retried as it was")
    func retryKeptByTheLayoutBeforeIsSentAsItWas() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        _ = try await phone.client.sync()
        try phone.insertNote("a", "as sent")
        try phone.insertNote("b", "as sent too")
        phone.transport.failOnce("post-data", .after)
        await #expect(throws: SyncError.self) { _ = try await phone.client.sync() }
        // What an earlier version left: each kept mutation in an outbox column, no kept batch,
        // sent entries flagged.
        try phone.revertToSentFlagLayout()
        try phone.execute("ALTER TABLE serialdb_sync_outbox ADD COLUMN mutation TEXT")
        try phone.execute(
            """
            UPDATE serialdb_sync_outbox SET mutation = (
                SELECT element.value FROM serialdb_sync_sent AS sent, json_each(sent.mutations) AS element
                WHERE json_extract(element.value, '$.seq') = serialdb_sync_outbox.seq)
            """)
        try phone.execute("DELETE FROM serialdb_sync_sent")
        // The local row changed since: without the kept copy, the retry would send this text
        // under the seq the server already applied.
        try phone.execute("UPDATE note SET title = 'edited after' WHERE id = 'a'")
        let reopened = try SyncClient(queue: phone.queue, transport: phone.transport)
        let moved = try await phone.queue.read { db in
            (
                try db.fetchAll(String.self, sql: "SELECT mutations FROM serialdb_sync_sent"),
                try db.fetchOne(Int.self, sql: "SELECT count(*) FROM serialdb_sync_outbox WHERE mutation IS NOT NULL")
            )
        }
        #expect(moved.0.count == 1, "both in one batch")
        #expect(moved.0.first?.contains("as sent too") == true && moved.0.first?.contains("edited") == false)
        #expect(moved.1 == 0)
        let retry = try await reopened.sync()
        #expect(retry.conflicts.isEmpty && retry.rejected.isEmpty)
        #expect(retry.uploaded == 3, "the retry of two, then the edit as a change of its own")
        let received = server.receivedSeqs.withLock { $0 }
        #expect(received.count == 5 && Set(received).count == 3)
        #expect(try server.latestVersion() == 3)
        let titles = Dictionary(
            try server.rows(of: "note", account: "alice").map { ($0["id"], $0["title"]) }, uniquingKeysWith: { $1 })
        #expect(titles[.text("a")] == .text("edited after") && titles[.text("b")] == .text("as sent too"))
        #expect(try phone.outboxCount() == 0)
        let kept = try await phone.queue.read { db in
            try db.fetchOne(Int.self, sql: "SELECT count(*) FROM serialdb_sync_sent")
        }
        #expect(kept == 0)
    }

    @Test("an upload unanswered under the release that flagged sent entries is retried; later changes keep theirs")
    func retryFlaggedByTheReleaseBeforeIsSentAsItWas() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        _ = try await phone.client.sync()
        try phone.insertNote("a", "as sent")
        try phone.insertNote("b", "as sent too")
        phone.transport.failOnce("post-data", .after)
        await #expect(throws: SyncError.self) { _ = try await phone.client.sync() }
        try phone.revertToSentFlagLayout()
        // Under that release's trigger, a change of a sent key adds an entry of its own.
        try phone.execute("UPDATE note SET title = 'edited before' WHERE id = 'a'")
        #expect(try phone.outboxCount() == 3)
        let reopened = try SyncClient(queue: phone.queue, transport: phone.transport)
        let (sentThrough, triggers) = try await phone.queue.read { db in
            (
                try db.fetchOne(Int64.self, sql: "SELECT " + SyncMetadata.sentThroughSQL),
                try db.fetchAll(
                    String.self, sql: "SELECT sql FROM sqlite_schema WHERE type = 'trigger' AND sql LIKE '%sent = 0%'")
            )
        }
        #expect(sentThrough == 2, "the two sent entries")
        #expect(triggers.isEmpty, "the triggers test sent_through now")
        let upgraded = try await reopened.sync()
        #expect(upgraded.uploaded == 3 && upgraded.conflicts.isEmpty, "the retry of two, then the edit")
        // A batch sent and unanswered after the upgrade is not flagged: a trigger left as it was
        // would replace its entry, and the retry would find nothing to send.
        try phone.insertNote("c", "after the upgrade")
        phone.transport.failOnce("post-data", .after)
        await #expect(throws: SyncError.self) { _ = try await reopened.sync() }
        try phone.execute("UPDATE note SET title = 'edited after' WHERE id = 'c'")
        let retry = try await reopened.sync()
        #expect(retry.conflicts.isEmpty && retry.rejected.isEmpty)
        #expect(try phone.outboxCount() == 0)
        let titles = Dictionary(
            try server.rows(of: "note", account: "alice").map { ($0["id"], $0["title"]) }, uniquingKeysWith: { $1 })
        #expect(
            titles == [
                .text("a"): .text("edited before"), .text("b"): .text("as sent too"), .text("c"): .text("edited after"),
            ])
        let received = server.receivedSeqs.withLock { $0 }
        #expect(Set(received).count == 5, "a, b, a again, c, c again: \(received)")
    }

    @Test("a kept copy of an unanswered upload, damaged or deleted by hand, stops the upload and says what to do")
    func damagedKeptCopyIsReported() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        _ = try await phone.client.sync()
        try phone.insertNote("a", "x")
        phone.transport.failOnce("post-data", .after)
        await #expect(throws: SyncError.self) { _ = try await phone.client.sync() }
        try phone.execute("UPDATE serialdb_sync_sent SET mutations = '[{\"seq\": 1'")
        let unreadable = await #expect(throws: SyncError.self) { _ = try await phone.client.sync() }
        #expect(unreadable?.message.contains("Delete the outbox entries with seq 1 to 1") == true)
        try phone.execute("DELETE FROM serialdb_sync_outbox WHERE seq = 1")
        // Nothing is left of that batch: its copy is dropped, and the next change goes up.
        try phone.insertNote("b", "y")
        let next = try await phone.client.sync()
        #expect(next.uploaded == 1)
        try phone.insertNote("c", "z")
        phone.transport.failOnce("post-data", .after)
        await #expect(throws: SyncError.self) { _ = try await phone.client.sync() }
        try phone.execute("DELETE FROM serialdb_sync_sent")
        let gone = await #expect(throws: SyncError.self) { _ = try await phone.client.sync() }
        #expect(gone?.message.contains("its kept copy is gone") == true)
        #expect(try phone.outboxCount() == 1, "nothing sent under that seq with today's row")
        // As the message says: those entries go, and the outbox moves on.
        #expect(gone?.message.contains("Delete the outbox entries with seq 3 to 3") == true, "\(gone?.message ?? "")")
        try phone.execute("DELETE FROM serialdb_sync_outbox WHERE seq BETWEEN 3 AND 3")
        try phone.insertNote("d", "after")
        let after = try await phone.client.sync()
        #expect(after.uploaded == 1 && after.conflicts.isEmpty)
        #expect(try phone.outboxCount() == 0)
    }

    @Test("an upload retried after the server dropped its results is a duplicate: it leaves the outbox, no error")
    func retriedUploadWhoseResultsExpiredLeavesTheOutbox() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let laptop = try Device(.file, in: directory, name: "laptop", server: server)
        _ = try await phone.client.sync()
        try phone.insertNote("a", "x")
        phone.transport.failOnce("post-data", .after)
        await #expect(throws: SyncError.self) { _ = try await phone.client.sync() }
        #expect(try phone.outboxCount() == 1)
        try server.expireResults()
        let retry = try await phone.client.sync()
        #expect(retry.rejected.isEmpty)
        #expect(retry.conflicts.isEmpty)
        #expect(try phone.outboxCount() == 0, "the duplicate left the outbox")
        #expect(try phone.titles()["a"] == "x")
        #expect(try server.latestVersion() == 1, "applied once")
        _ = try await laptop.client.sync()
        #expect(try laptop.titles()["a"] == "x")
        // The next local change is based on the version fetch-data brought, not a conflict.
        _ = try await phone.client.sync()
        try phone.execute("UPDATE note SET title = 'x2' WHERE id = 'a'")
        let next = try await phone.client.sync()
        #expect(next.conflicts.isEmpty)
        #expect(try server.rows(of: "note", account: "alice").first?["title"] == .text("x2"))
    }

    @Test("a network error is typed and leaves nothing half-applied")
    func networkErrorIsTyped() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let laptop = try Device(.file, in: directory, name: "laptop", server: server, pageSize: 10)
        _ = try await phone.client.sync()
        for index in 0..<35 { try phone.insertNote(String(format: "n%02d", index), "t") }
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        for index in 0..<35 {
            try phone.execute("UPDATE note SET title = 'v2' WHERE id = ?", [String(format: "n%02d", index)])
        }
        _ = try await phone.client.sync()
        laptop.transport.once("fetch-data") {}
        laptop.transport.once("fetch-data") {}
        laptop.transport.failOnce("fetch-data")
        // hooks run in order: the third page fails
        do {
            _ = try await laptop.client.sync()
            Issue.record("the sync should have failed")
        } catch let error as SyncError {
            #expect(error.code == .network)
        }
        let titles = try laptop.titles()
        #expect(titles.values.filter { $0 == "v2" }.count == 20)
        #expect(try laptop.cursor() == (try server.latestVersion()) - 15)
        let rest = try await laptop.client.sync()
        #expect(rest.downloaded == 15)
        #expect(try laptop.titles().values.allSatisfy { $0 == "v2" })
    }

    @Test("cancelling the task stops between pages with rows and cursor consistent")
    func cancellationStopsBetweenPages() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let laptop = try Device(.file, in: directory, name: "laptop", server: server, pageSize: 10)
        _ = try await phone.client.sync()
        for index in 0..<45 { try phone.insertNote(String(format: "n%02d", index), "t") }
        _ = try await phone.client.sync()
        let client = laptop.client
        let syncTask = Mutex<Task<SyncReport, any Error>?>(nil)
        laptop.transport.once("fetch-data", .after) {}
        laptop.transport.once("fetch-data", .after) {
            // Cancel the sync's task once the second page has arrived (the hook may run in a
            // child task of it: the next page is fetched while the one before is applied).
            try await waitUntil(timeout: .seconds(60)) { syncTask.withLock { $0 != nil } }
            syncTask.withLock { $0?.cancel() }
        }
        let task = Task { try await client.sync() }
        syncTask.withLock { $0 = task }
        await #expect(throws: CancellationError.self) { _ = try await task.value }
        let count = try laptop.titles().count
        let cursor = try #require(try laptop.cursor())
        #expect(count < 45)
        #expect(count % 10 == 0)
        // The cursor covers exactly the rows applied: versions 1...45 in key order.
        #expect(cursor == Int64(count))
        let rest = try await laptop.client.sync()
        #expect(rest.downloaded == 45 - count)
        #expect(try laptop.titles().count == 45)
    }

    @Test("one sync at a time per client")
    func oneSyncAtATime() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let client = phone.client
        let entered = Mutex(false)
        let release = Mutex(false)
        phone.transport.once("check-update") {
            entered.withLock { $0 = true }
            try await waitUntil(timeout: .seconds(120)) { release.withLock { $0 } }
        }
        let first = Task { try await client.sync() }
        try await waitUntil(timeout: .seconds(120)) { entered.withLock { $0 } }
        await #expect(throws: SyncError.self) { _ = try await client.sync() }
        release.withLock { $0 = true }
        _ = try await first.value
        _ = try await client.sync()
    }

    @Test("a mutation the server rejects leaves the outbox and is reported with the server's message")
    func rejectedMutationIsReported() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        _ = try await phone.client.sync()
        // The server now requires a body: its definition changed without a new struct_version,
        // so the phone keeps its own and uploads a row the server refuses.
        try server.replaceTable(
            InProcessSyncServer.Table(
                name: "note",
                schema: "CREATE TABLE note(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL)"))
        try phone.insertNote("a", "no body")
        try phone.insertNote("b", "with body", body: "text")
        let report = try await phone.client.sync()
        #expect(report.uploaded == 1)
        #expect(report.rejected.count == 1)
        #expect(report.rejected.first?.key == ["id": .text("a")])
        #expect(report.rejected.first?.message == "column \"body\" is NOT NULL")
        #expect(try phone.outboxCount() == 0)
        #expect(try phone.titles()["a"] == "no body")
    }

    @Test("progress reports tables and rows")
    func progressIsReported() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable, countryTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let seen = Mutex<[SyncProgress]>([])
        _ = try await phone.client.sync { progress in seen.withLock { $0.append(progress) } }
        let last = try #require(seen.withLock { $0.last })
        #expect(last.phase == .finished)
        #expect(last.tablesTotal == 2)
        #expect(last.tablesCompleted == 2)
        #expect(seen.withLock { $0.contains { $0.phase == .downloading(table: "country") } })
    }
}
