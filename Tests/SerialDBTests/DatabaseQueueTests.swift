import Dispatch
import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

// Every wait that a regression could make endless is bounded (`finishes(within:)`,
// `wait(seconds:)`, `result(of:)`), so that a broken serializer fails these tests with a
// message instead of hanging `swift test`.
@Suite struct DatabaseQueueTests {
    @Test(arguments: DatabaseKind.allCases)
    func reentrantCallsFromEveryEntryPointThrowWithinASecond(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.inDatabase { db in try Player.createTable(db, rows: 3) }
        let nestedCalls: [(String, @Sendable () throws -> Void)] = [
            ("inDatabase", { try queue.inDatabase { _ in } }),
            ("inTransaction", { try queue.inTransaction { _ in .commit } }),
            ("inSavepoint", { try queue.inSavepoint { _ in .commit } }),
            ("read", { try queue.read { _ in } }),
            ("write", { try queue.write { _ in } }),
            ("close", { try queue.close() }),
        ]
        let outerCalls: [(String, @Sendable (@escaping @Sendable () throws -> Void) throws -> Void)] = [
            ("inDatabase", { nested in try queue.inDatabase { _ in try nested() } }),
            (
                "inTransaction",
                { nested in
                    try queue.inTransaction { _ in
                        try nested()
                        return .commit
                    }
                }
            ),
            (
                "inSavepoint",
                { nested in
                    try queue.inSavepoint { _ in
                        try nested()
                        return .commit
                    }
                }
            ),
            ("read", { nested in try queue.read { _ in try nested() } }),
            ("write", { nested in try queue.write { _ in try nested() } }),
        ]
        for (outerName, outer) in outerCalls {
            for (nestedName, nested) in nestedCalls {
                let codes = Locked<[SerialDBError.Code]>([])
                let finished = finishes(within: 1) {
                    do {
                        try outer(nested)
                    } catch let error as SerialDBError {
                        codes.withLock { $0.append(error.code) }
                    } catch {}
                }
                #expect(finished, "\(nestedName) inside \(outerName) did not return within a second")
                #expect(codes.withLock { $0 } == [.reentrantCall], "\(nestedName) inside \(outerName)")
            }
        }
        // The queue is still usable, and nothing was written by the refused calls. Bounded: if
        // a nested call deadlocked, the queue is stuck for good.
        let count = try outcome(within: 1) {
            try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") }
        }
        #expect(try count.get() == 3)
    }

    @Test func aCycleThroughTwoQueuesThrowsInsteadOfDeadlocking() throws {
        let first = try DatabaseQueue()
        let second = try DatabaseQueue()
        let codes = Locked<[SerialDBError.Code]>([])
        let finished = finishes(within: 1) {
            do {
                try first.inDatabase { _ in
                    try second.inDatabase { _ in try first.inDatabase { _ in } }
                }
            } catch let error as SerialDBError {
                codes.withLock { $0.append(error.code) }
            } catch {}
        }
        #expect(finished)
        #expect(codes.withLock { $0 } == [.reentrantCall])
    }

    @Test func sixteenThreadsOfAThousandWritesLoseAndDuplicateNothing() async throws {
        let directory = try TemporaryDirectory()
        // synchronous NORMAL: this test is about order and exclusion, not about fsync.
        var configuration = Configuration()
        configuration.synchronous = .normal
        let queue = try DatabaseQueue(path: directory.path("threads.sqlite"), configuration: configuration)
        try await queue.inDatabase { db in
            try db.execute(
                sql: "CREATE TABLE log(id INTEGER PRIMARY KEY, writer INTEGER NOT NULL, seq INTEGER NOT NULL)")
        }
        let failures = Locked<[String]>([])
        let finished = Locked(0)
        // Sixteen real threads; the test itself awaits instead of blocking a cooperative thread,
        // which other async tests running at the same time need.
        for writer in 0..<16 {
            Thread.detachNewThread {
                for sequence in 0..<1000 {
                    do {
                        try queue.write { db in
                            try db.execute(
                                sql: "INSERT INTO log(writer, seq) VALUES (?, ?)", arguments: [writer, sequence])
                        }
                    } catch {
                        failures.withLock { $0.append("\(writer)/\(sequence): \(error)") }
                    }
                }
                finished.withLock { $0 += 1 }
            }
        }
        try await waitUntil(timeout: .seconds(300)) { finished.withLock { $0 } == 16 }
        #expect(failures.withLock { $0 }.isEmpty)
        try await queue.read { db in
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM log") == 16_000)
            #expect(
                try db.fetchOne(Int.self, sql: "SELECT count(*) FROM (SELECT DISTINCT writer, seq FROM log)") == 16_000)
            let perWriter = try db.fetchAll(Int.self, sql: "SELECT count(*) FROM log GROUP BY writer")
            #expect(perWriter == Array(repeating: 1000, count: 16))
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func twoHundredAsyncTasksLoseAndDuplicateNothing(kind: DatabaseKind) async throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try await queue.inDatabase { db in
            try db.execute(sql: "CREATE TABLE log(id INTEGER PRIMARY KEY, task INTEGER NOT NULL UNIQUE)")
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<200 {
                group.addTask {
                    try await queue.write { db in
                        try db.execute(sql: "INSERT INTO log(task) VALUES (?)", arguments: [task])
                    }
                }
            }
            try await group.waitForAll()
        }
        let tasks = try await queue.read { db in try db.fetchAll(Int.self, sql: "SELECT task FROM log ORDER BY task") }
        #expect(tasks == Array(0..<200))
    }

    @Test(arguments: DatabaseKind.allCases)
    func aRollbackLeavesNoTrace(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.inDatabase { db in try Player.createTable(db, rows: 100) }
        let before = try queue.read { db in try db.fetchAll(Player.self, sql: "SELECT * FROM player ORDER BY id") }
        try queue.inTransaction { db in
            try db.execute(sql: "UPDATE player SET score = score * 2")
            try db.execute(sql: "DELETE FROM player WHERE id % 3 = 0")
            try db.execute(sql: "INSERT INTO player(name) VALUES ('ghost')")
            return .rollback
        }
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try queue.write { db in
                try db.execute(sql: "DELETE FROM player")
                throw Refused()
            }
        }
        #expect(throws: Refused.self) {
            try queue.inTransaction(.exclusive) { db in
                try db.execute(sql: "DELETE FROM player")
                throw Refused()
            }
        }
        let after = try queue.read { db in try db.fetchAll(Player.self, sql: "SELECT * FROM player ORDER BY id") }
        #expect(after == before)
    }

    @Test func aReadBlockRefusesWritesBeforeTheyRun() throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db in try Player.createTable(db, rows: 2) }
        let error = #expect(throws: SerialDBError.self) {
            try queue.read { db in try db.execute(sql: "DELETE FROM player") }
        }
        #expect(error?.code == .writeInReadOnlyBlock)
        #expect(try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") } == 2)
    }

    @Test func aBlockThatLeavesATransactionOpenIsRolledBackAndReported() throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db in try Player.createTable(db, rows: 2) }
        let error = #expect(throws: SerialDBError.self) {
            try queue.inDatabase { db in
                try db.execute(sql: "BEGIN")
                try db.execute(sql: "DELETE FROM player")
            }
        }
        #expect(error?.code == .transactionLeftOpen)
        let (insideTransaction, count) = try queue.inDatabase { db in
            (db.isInsideTransaction, try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player"))
        }
        #expect(!insideTransaction)
        #expect(count == 2)
    }

    @Test func cancellingAnAsyncBlockStopsALongQuery() async throws {
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.path("cancel.sqlite"))
        let started = Locked(false)
        let task = Task {
            try await queue.inDatabase { db in
                started.withLock { $0 = true }
                // Counts to ten billion: hours, unless interrupted.
                return try db.fetchOne(
                    Int.self,
                    sql:
                        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000000) SELECT count(*) FROM c"
                )
            }
        }
        try await waitUntil { started.withLock { $0 } }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        // Uninterrupted, the query counts for hours: its end within the bounded wait, with
        // CancellationError rather than a count, is the interrupt's proof (no time is asserted).
        let result = try await result(of: task)
        #expect(throws: CancellationError.self) { try result.get() }
        // The queue works afterwards: the interrupt did not leak into the next block.
        #expect(try await queue.inDatabase { db in try db.fetchOne(Int.self, sql: "SELECT 42") } == 42)
    }

    @Test func aTaskCancelledBeforeItsTurnNeverRuns() async throws {
        let queue = try DatabaseQueue()
        try await queue.inDatabase { db in try Player.createTable(db) }
        // The block that holds the queue runs on its own thread: a blocking wait on a
        // cooperative thread could starve the tasks this test waits for.
        let release = DispatchSemaphore(value: 0)
        let holding = Locked(false)
        let released = Locked(false)
        Thread.detachNewThread {
            try? queue.inDatabase { _ in
                holding.withLock { $0 = true }
                _ = release.wait(seconds: deadlockBound)
            }
            released.withLock { $0 = true }
        }
        try await waitUntil { holding.withLock { $0 } }
        let waiting = Task {
            try await queue.write { db in try db.execute(sql: "INSERT INTO player(name) VALUES ('late')") }
        }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        release.signal()
        try await waitUntil { released.withLock { $0 } }
        let waitingResult = try await result(of: waiting)
        #expect(throws: CancellationError.self) { try waitingResult.get() }
        #expect(try await queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") } == 0)
    }

    @Test(arguments: DatabaseKind.allCases)
    func closeWaitsForRunningWorkAndLaterUseThrows(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.inDatabase { db in try Player.createTable(db) }
        let running = DispatchSemaphore(value: 0)
        let writerDone = DispatchSemaphore(value: 0)
        let writerError = Locked<(any Error)?>(nil)
        Thread.detachNewThread {
            do {
                try queue.write { db in
                    running.signal()
                    Thread.sleep(forTimeInterval: 0.2)
                    try db.execute(sql: "INSERT INTO player(name) VALUES ('before close')")
                }
            } catch {
                writerError.withLock { $0 = error }
            }
            writerDone.signal()
        }
        try #require(running.wait(seconds: deadlockBound))
        try outcome { try queue.close() }.get()
        try #require(writerDone.wait(seconds: deadlockBound))
        #expect(writerError.withLock { $0 } == nil)
        let calls: [() throws -> Void] = [
            { try queue.inDatabase { _ in } }, { try queue.write { _ in } }, { try queue.read { _ in } },
            { try queue.inTransaction { _ in .commit } },
        ]
        for call in calls {
            let error = #expect(throws: SerialDBError.self) { try call() }
            #expect(error?.code == .closed)
        }
        try queue.close()
        if kind == .file {
            let reopened = try DatabaseQueue(path: directory.path("test.sqlite"))
            #expect(
                try reopened.read { db in try db.fetchAll(String.self, sql: "SELECT name FROM player") } == [
                    "before close"
                ])
        }
    }

    @Test func asyncUseAfterCloseThrows() async throws {
        let queue = try DatabaseQueue()
        try await queue.close()
        let error = await #expect(throws: SerialDBError.self) { try await queue.inDatabase { _ in } }
        #expect(error?.code == .closed)
    }

    @Test func fileDatabasesDefaultToWALWithForeignKeysOn() throws {
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.path("defaults.sqlite"))
        try queue.inDatabase { db in
            #expect(try db.fetchOne(String.self, sql: "PRAGMA journal_mode") == "wal")
            #expect(try db.fetchOne(Int.self, sql: "PRAGMA foreign_keys") == 1)
            #expect(try db.fetchOne(Int.self, sql: "PRAGMA synchronous") == 2)
            try db.execute(
                sql: "CREATE TABLE parent(id INTEGER PRIMARY KEY); CREATE TABLE child(parent REFERENCES parent(id))")
            let error = #expect(throws: DatabaseError.self) { try db.execute(sql: "INSERT INTO child VALUES (1)") }
            #expect(error?.extendedResultCode == .SQLITE_CONSTRAINT_FOREIGNKEY)
        }
    }

    @Test func aReadOnlyQueueRefusesWrites() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("readonly.sqlite")
        try DatabaseQueue(path: path).inDatabase { db in try Player.createTable(db, rows: 4) }
        var configuration = Configuration()
        configuration.readOnly = true
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        #expect(try queue.inDatabase { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") } == 4)
        let error = #expect(throws: DatabaseError.self) {
            try queue.inDatabase { db in try db.execute(sql: "DELETE FROM player") }
        }
        #expect(error?.resultCode == .SQLITE_READONLY)
    }

    @Test func aBusyTimeoutWaitsForAnotherConnectionsLock() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("busy.sqlite")
        var configuration = Configuration()
        configuration.busyTimeout = .seconds(5)
        let first = try DatabaseQueue(path: path, configuration: configuration)
        let second = try DatabaseQueue(path: path, configuration: configuration)
        try first.inDatabase { db in try Player.createTable(db) }
        let holding = DispatchSemaphore(value: 0)
        let holder = Thread {
            try? first.write { db in
                try db.execute(sql: "INSERT INTO player(name) VALUES ('first')")
                holding.signal()
                Thread.sleep(forTimeInterval: 0.3)
            }
        }
        holder.start()
        try #require(holding.wait(seconds: deadlockBound))
        try second.write { db in try db.execute(sql: "INSERT INTO player(name) VALUES ('second')") }
        #expect(
            try second.read { db in try db.fetchAll(String.self, sql: "SELECT name FROM player ORDER BY id") } == [
                "first", "second",
            ])

        configuration.busyTimeout = .milliseconds(0)
        let impatient = try DatabaseQueue(path: path, configuration: configuration)
        let release = DispatchSemaphore(value: 0)
        let blocker = Thread {
            try? first.write { _ in
                holding.signal()
                _ = release.wait(seconds: deadlockBound)
            }
        }
        blocker.start()
        try #require(holding.wait(seconds: deadlockBound))
        let error = #expect(throws: DatabaseError.self) { try impatient.write { _ in } }
        #expect(error?.resultCode == .SQLITE_BUSY)
        release.signal()
    }
}

@Suite struct DatabaseQueueInterruptTests {
    @Test func interruptFromAnotherThreadStopsTheRunningStatementOnly() throws {
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.path("interrupt.sqlite"))
        let started = DispatchSemaphore(value: 0)
        let outcome = Locked<(any Error)?>(nil)
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            do {
                _ = try queue.inDatabase { db in
                    started.signal()
                    return try db.fetchOne(
                        Int.self,
                        sql:
                            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000000) SELECT count(*) FROM c"
                    )
                }
            } catch {
                outcome.withLock { $0 = error }
            }
            finished.signal()
        }
        try #require(started.wait(seconds: deadlockBound))
        Thread.sleep(forTimeInterval: 0.1)
        queue.interrupt()
        #expect(finished.wait(seconds: deadlockBound))
        #expect((outcome.withLock { $0 } as? DatabaseError)?.resultCode == .SQLITE_INTERRUPT)
        #expect(try queue.inDatabase { db in try db.fetchOne(Int.self, sql: "SELECT 7") } == 7)
    }
}
