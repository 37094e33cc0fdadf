import Dispatch
import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// A blocking call that has begun waiting counts as submitted: an upgrade or a `close()`
/// submitted after it does not overtake it.
@Suite struct SubmissionOrderTests {
    /// Holds the queue on a thread of its own until `release` is signalled.
    private final class Holder: Sendable {
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)

        init(_ queue: DatabaseQueue) {
            let holding = DispatchSemaphore(value: 0)
            Thread.detachNewThread { [release, finished] in
                try? queue.inDatabase { _ in
                    holding.signal()
                    _ = release.wait(seconds: deadlockBound)
                }
                finished.signal()
            }
            _ = holding.wait(seconds: deadlockBound)
        }
    }

    /// Starts `count` threads that each make one blocking write while the queue is held. The
    /// caller then gives them time to begin waiting (nothing tells from outside that a thread
    /// waits).
    private func startWaitingWriters(
        _ queue: DatabaseQueue, count: Int, outcomes: Locked<[String]>
    ) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        for writer in 0..<count {
            Thread.detachNewThread {
                do {
                    let steps = try queue.write { db -> Int in
                        try db.execute(
                            sql: "INSERT INTO T_User(id, name) VALUES (?, ?)", arguments: [1000 + writer, "waiting"])
                        return try db.fetchOne(Int.self, sql: "SELECT count(*) FROM serialdb_migrations") ?? -1
                    }
                    outcomes.withLock { $0.append("ran at step \(steps)") }
                } catch {
                    outcomes.withLock { $0.append("error: \(error)") }
                }
                done.signal()
            }
        }
        return done
    }

    @Test(arguments: DatabaseKind.allCases)
    func blockingWritesAlreadyWaitingRunBeforeAnUpgradeSubmittedAfterThem(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.migrate(UserLadder.migrator(steps: 1))
        try queue.write { db in try UserLadder.insertUsers(db, count: 20) }
        let holder = Holder(queue)
        let outcomes = Locked<[String]>([])
        let writersDone = startWaitingWriters(queue, count: 8, outcomes: outcomes)
        sleepSeconds(0.5)

        let upgrade = queue.startMigration(UserLadder.migrator())
        let late = Locked<Int?>(nil)
        let lateDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let steps = try? queue.read { db in
                try db.fetchOne(Int.self, sql: "SELECT count(*) FROM serialdb_migrations")
            }
            late.withLock { $0 = steps ?? -1 }
            lateDone.signal()
        }
        holder.release.signal()

        #expect(writersDone.wait(signals: 8), "a waiting writer never returned")
        try outcome { try upgrade.wait() }.get()
        #expect(lateDone.wait(seconds: deadlockBound))
        #expect(outcomes.withLock { $0 } == Array(repeating: "ran at step 1", count: 8))
        // A read submitted after the upgrade still waits for it.
        #expect(late.withLock { $0 } == 3)
        try queue.read { db throws in
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM T_User") == 28)
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM T_User WHERE pin = '111111'") == 28)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func blockingWritesAlreadyWaitingRunBeforeACloseSubmittedAfterThem(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("test.sqlite")
        let queue = try kind.makeQueue(in: directory)
        try queue.migrate(UserLadder.migrator(steps: 1))
        let holder = Holder(queue)
        let outcomes = Locked<[String]>([])
        let writersDone = startWaitingWriters(queue, count: 8, outcomes: outcomes)
        sleepSeconds(0.5)

        let closed = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? queue.close()
            closed.signal()
        }
        // Let close() be submitted while the writers still wait.
        sleepSeconds(0.3)
        holder.release.signal()

        #expect(writersDone.wait(signals: 8), "a waiting writer never returned")
        #expect(closed.wait(seconds: deadlockBound))
        #expect(outcomes.withLock { $0 } == Array(repeating: "ran at step 1", count: 8))
        let error = #expect(throws: SerialDBError.self) { try queue.read { _ in } }
        #expect(error?.code == .closed)
        if kind == .file {
            let reopened = try DatabaseQueue(path: path)
            #expect(try reopened.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM T_User") } == 8)
        }
    }

    // Async, so that waiting for the async write never blocks a thread of the cooperative pool
    // that the write itself may need.
    @Test func blockingCallsQueuedBehindAsyncWorkStillRunBeforeALaterUpgrade() async throws {
        let queue = try DatabaseQueue()
        try await queue.migrate(UserLadder.migrator(steps: 1))
        let holder = Holder(queue)
        // An async write in line makes the blocking calls after it queue behind it.
        let asyncWrite = Task {
            try await queue.write { db in try db.execute(sql: "INSERT INTO T_User(id, name) VALUES (1, 'async')") }
        }
        try await Task.sleep(for: .milliseconds(100))
        let outcomes = Locked<[String]>([])
        _ = startWaitingWriters(queue, count: 4, outcomes: outcomes)
        try await Task.sleep(for: .milliseconds(500))
        let upgrade = queue.startMigration(UserLadder.migrator())
        holder.release.signal()

        try await result(of: asyncWrite).get()
        try await result(of: Task { try await upgrade.wait() }).get()
        try await waitUntil(timeout: .seconds(deadlockBound)) { outcomes.withLock { $0.count == 4 } }
        #expect(outcomes.withLock { $0 } == Array(repeating: "ran at step 1", count: 4))
    }
}
