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

    /// Runs `entry` as an async call whose block writes (or reads, for `read`), then cancels
    /// its own task, then tries one more statement; returns how the call ended.
    ///
    /// The block cancels its task itself, so the moment of cancellation depends on no other
    /// thread being scheduled (the test suites share two cooperative threads).
    private func runCancelledWhileItRuns(_ entry: Entry, on queue: DatabaseQueue) async -> Result<Void, any Error> {
        let running = CancellableTask()
        let block: @Sendable (Database) throws -> Void = { db in
            if entry == .read {
                _ = try db.fetchAll(String.self, sql: "SELECT name FROM item")
            } else {
                try db.execute(sql: "INSERT INTO item(id, name) VALUES (10, 'ten')")
            }
            running.cancel()
            _ = try db.fetchAll(String.self, sql: "SELECT name FROM item")
        }
        running.start {
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
        }
        return await running.result()
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
        let outcome = await runCancelledWhileItRuns(entry, on: queue)
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
        _ = await runCancelledWhileItRuns(entry, on: queue)
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
        let running = CancellableTask()
        running.start {
            try await queue.inDatabase { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                try db.execute(sql: "DELETE FROM item")
                running.cancel()
                #expect(throws: SerialDBError.self) { try db.execute(sql: "DELETE FROM item WHERE id = 1") }
                // Undoing is never refused.
                try db.execute(sql: "ROLLBACK")
            }
        }
        _ = await running.result()
        #expect(try await queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM item") } == 2)
    }
}

/// A task that its own work can cancel: the work waits until the task is stored, so that
/// `cancel()` from inside it always reaches the task.
private final class CancellableTask: Sendable {
    private let task = Locked<Task<Void, any Error>?>(nil)

    func start(_ work: @escaping @Sendable () async throws -> Void) {
        let stored = Locked(false)
        task.withLock { slot in
            slot = Task {
                // The slot is filled before this lock is released, so this wait is short.
                while !stored.withLock({ $0 }) { await Task.yield() }
                try await work()
            }
        }
        stored.withLock { $0 = true }
    }

    /// Cancels the task, as `Task.cancel()` from any thread would.
    func cancel() {
        task.withLock { $0 }?.cancel()
    }

    func result() async -> Result<Void, any Error> {
        guard let task = task.withLock({ $0 }) else { return .success(()) }
        return await task.result
    }
}
