import Dispatch
import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// An async call cancelled while it waits for its turn throws `CancellationError` at once, not
/// when the work ahead of it ends, and its block never runs.
@Suite struct CancellationWhileWaitingTests {
    /// How long the work ahead of a cancelled call holds the queue at most. Long: when sync
    /// tests running in parallel occupy the cooperative threads, this test's own steps can be
    /// late by many seconds, and the holder must not give up before the test has cancelled.
    private static let holdBound: Double = 120

    /// A migrator at the user ladder's step 1 plus a step that runs until `release` is signalled.
    private func upgradeHeldUntilReleased(started: Locked<Bool>, release: DispatchSemaphore) -> DatabaseMigrator {
        var migrator = UserLadder.migrator(steps: 1)
        migrator.registerMigration("2-held") { db in
            started.withLock { $0 = true }
            _ = release.wait(seconds: Self.holdBound)
            try db.execute(sql: "ALTER TABLE T_User ADD COLUMN email TEXT")
        }
        return migrator
    }

    private func userCount(_ queue: DatabaseQueue) async throws -> Int {
        try await queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM T_User") ?? -1 }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aTaskCancelledBehindAnUpgradeThrowsWhileTheUpgradeStillRunsAndNeverWrites(kind: DatabaseKind) async throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try await queue.migrate(UserLadder.migrator(steps: 1))
        try await queue.write { db in try UserLadder.insertUsers(db, count: 10) }
        let started = Locked(false)
        let release = DispatchSemaphore(value: 0)
        let upgrade = queue.startMigration(upgradeHeldUntilReleased(started: started, release: release))
        try await waitUntil(timeout: .seconds(deadlockBound)) { started.withLock { $0 } }
        let ran = Locked(false)
        let waiting = Task {
            try await queue.write { db in
                ran.withLock { $0 = true }
                try db.execute(sql: "INSERT INTO T_User(id, name) VALUES (500, 'cancelled')")
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        // The upgrade is held until this returns: only a prompt cancellation can get here.
        let outcome = try await result(of: waiting)
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(!upgrade.isFinished)
        release.signal()
        try await upgrade.wait()
        #expect(!ran.withLock { $0 })
        #expect(try await userCount(queue) == 10)
    }

    @Test func aTaskCancelledBehindABlockingCallThrowsWhileThatCallStillRuns() async throws {
        let queue = try DatabaseQueue()
        try await queue.migrate(UserLadder.migrator(steps: 1))
        let holding = Locked(false)
        let release = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? queue.inDatabase { _ in
                holding.withLock { $0 = true }
                _ = release.wait(seconds: Self.holdBound)
                holding.withLock { $0 = false }
            }
        }
        try await waitUntil(timeout: .seconds(deadlockBound)) { holding.withLock { $0 } }
        let ran = Locked(false)
        let waiting = Task {
            try await queue.write { db in
                ran.withLock { $0 = true }
                try db.execute(sql: "INSERT INTO T_User(id, name) VALUES (1, 'cancelled')")
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        let outcome = try await result(of: waiting)
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(holding.withLock { $0 }, "the cancelled call returned only when the block ahead of it ended")
        release.signal()
        #expect(try await userCount(queue) == 0)
        #expect(!ran.withLock { $0 })
    }

    @Test func cancellingSomeOfManyWaitingTasksSkipsExactlyThoseAndRunsTheRest() async throws {
        let queue = try DatabaseQueue()
        try await queue.write { db in try db.execute(sql: "CREATE TABLE log(task INTEGER NOT NULL)") }
        let started = Locked(false)
        let release = DispatchSemaphore(value: 0)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("held") { _ in
            started.withLock { $0 = true }
            _ = release.wait(seconds: Self.holdBound)
        }
        let upgrade = queue.startMigration(migrator)
        try await waitUntil(timeout: .seconds(deadlockBound)) { started.withLock { $0 } }
        var tasks: [Task<Void, any Error>] = []
        for index in 0..<40 {
            tasks.append(
                Task {
                    try await queue.write { db in try db.execute(sql: "INSERT INTO log VALUES (?)", arguments: [index])
                    }
                })
        }
        try await Task.sleep(for: .milliseconds(100))
        for index in stride(from: 1, to: 40, by: 2) { tasks[index].cancel() }
        for index in stride(from: 1, to: 40, by: 2) {
            let outcome = try await result(of: tasks[index])
            #expect(throws: CancellationError.self) { try outcome.get() }
        }
        #expect(!upgrade.isFinished)
        release.signal()
        try await upgrade.wait()
        for index in stride(from: 0, to: 40, by: 2) { try await result(of: tasks[index]).get() }
        let logged = try await queue.read { db in try db.fetchAll(Int.self, sql: "SELECT task FROM log") }
        #expect(Set(logged) == Set(stride(from: 0, to: 40, by: 2)))
        #expect(logged.count == 20)
    }
}
