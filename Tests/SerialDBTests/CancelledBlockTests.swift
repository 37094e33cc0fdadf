import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// An async block cancelled while it runs leaves no trace and no open transaction: the
/// statements that end or undo its work still run, and the connection is ready at once.
@Suite struct CancelledBlockTests {
    enum Entry: String, CaseIterable, CustomStringConvertible {
        case write, inTransaction, read, inSavepoint
        var description: String { rawValue }
    }

    /// Runs `entry` as an async call whose block writes (or reads, for `read`), waits until
    /// its task is cancelled, then tries one more statement; returns how the call ended.
    private func runCancelledWhileItRuns(_ entry: Entry, on queue: DatabaseQueue) async throws -> Result<
        Void, any Error
    > {
        let started = Locked(false)
        let cancelled = Locked(false)
        let block: @Sendable (Database) throws -> Void = { db in
            if entry == .read {
                _ = try db.fetchAll(String.self, sql: "SELECT name FROM item")
            } else {
                try db.execute(sql: "INSERT INTO item(id, name) VALUES (10, 'ten')")
            }
            started.withLock { $0 = true }
            // Bounded: if cancellation never arrives, the test fails instead of hanging.
            let deadline = Date().addingTimeInterval(20)
            while !cancelled.withLock({ $0 }) && Date() < deadline { Thread.sleep(forTimeInterval: 0.002) }
            _ = try db.fetchAll(String.self, sql: "SELECT name FROM item")
        }
        let task = Task { () -> Result<Void, any Error> in
            do {
                switch entry {
                case .write: try await queue.write(block)
                case .read: try await queue.read(block)
                case .inTransaction:
                    try await queue.inTransaction { db in
                        try block(db)
                        return .commit
                    }
                case .inSavepoint:
                    try await queue.inSavepoint { db in
                        try block(db)
                        return .commit
                    }
                }
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try await waitUntil(timeout: .seconds(20)) { started.withLock { $0 } }
        task.cancel()
        cancelled.withLock { $0 = true }
        return await task.value
    }

    private func seed(_ queue: DatabaseQueue) throws {
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
            try db.execute(sql: "INSERT INTO item(id, name) VALUES (1, 'one'), (2, 'two')")
        }
    }

    @Test(arguments: Entry.allCases, DatabaseKind.allCases)
    func aBlockCancelledWhileItRunsLeavesNoTraceAndTheQueueReady(entry: Entry, kind: DatabaseKind) async throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try seed(queue)
        let outcome = try await runCancelledWhileItRuns(entry, on: queue)
        #expect(throws: CancellationError.self) { try outcome.get() }
        let state = try await queue.inDatabase { db in
            (db.isInsideTransaction, try db.fetchAll(String.self, sql: "SELECT name FROM item ORDER BY id"))
        }
        #expect(state.0 == false)
        #expect(state.1 == ["one", "two"])
        // The next block of every kind runs.
        try await queue.write { db in try db.execute(sql: "INSERT INTO item(id, name) VALUES (3, 'three')") }
        #expect(
            try await queue.read { db in try db.fetchAll(String.self, sql: "SELECT name FROM item ORDER BY id") }
                == ["one", "two", "three"])
    }

    @Test(arguments: Entry.allCases)
    func anotherConnectionCanWriteRightAfterACancelledBlock(entry: Entry) async throws {
        let directory = try TemporaryDirectory()
        let queue = try DatabaseKind.file.makeQueue(in: directory)
        try seed(queue)
        _ = try await runCancelledWhileItRuns(entry, on: queue)
        // No busy timeout: a write lock still held by the idle queue fails at once.
        var config = Configuration()
        config.busyTimeout = .zero
        let other = try DatabaseKind.file.makeQueue(in: directory, configuration: config)
        try await other.write { db in try db.execute(sql: "INSERT INTO item(id, name) VALUES (4, 'four')") }
        #expect(try await other.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM item") } == 3)
    }

    @Test func rollbackStatementsRunInACancelledBlockThatCatchesTheCancellation() async throws {
        let queue = try DatabaseQueue()
        try seed(queue)
        let started = Locked(false)
        let cancelled = Locked(false)
        let task = Task {
            try await queue.inDatabase { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                try db.execute(sql: "DELETE FROM item")
                started.withLock { $0 = true }
                let deadline = Date().addingTimeInterval(20)
                while !cancelled.withLock({ $0 }) && Date() < deadline { Thread.sleep(forTimeInterval: 0.002) }
                #expect(throws: SerialDBError.self) { try db.execute(sql: "DELETE FROM item WHERE id = 1") }
                // Undoing is never refused.
                try db.execute(sql: "ROLLBACK")
            }
        }
        try await waitUntil(timeout: .seconds(20)) { started.withLock { $0 } }
        task.cancel()
        cancelled.withLock { $0 = true }
        _ = await task.result
        #expect(try await queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM item") } == 2)
    }
}
