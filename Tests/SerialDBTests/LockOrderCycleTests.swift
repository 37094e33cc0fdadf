import Dispatch
import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// Threads that take queues in opposite orders: the wait that would close the cycle throws
/// `lockOrderCycle` naming the queues, the others go on; nothing hangs.
@Suite struct LockOrderCycleTests {
    private func makeQueues(_ labels: [String]) throws -> [DatabaseQueue] {
        try labels.map { label in
            var configuration = Configuration()
            configuration.label = label
            let queue = try DatabaseQueue(configuration: configuration)
            try queue.write { db in try db.execute(sql: "CREATE TABLE visit(queue TEXT NOT NULL)") }
            return queue
        }
    }

    /// Lets `count` threads meet: each arrives holding its first queue, then all go on.
    private final class Meeting: Sendable {
        private let arrived = Locked(0)
        private let count: Int

        init(of count: Int) {
            self.count = count
        }

        /// Waits (bounded) until every thread has arrived; false if one never did.
        func arriveAndWait() -> Bool {
            arrived.withLock { $0 += 1 }
            let deadline = Date().addingTimeInterval(deadlockBound)
            while arrived.withLock({ $0 }) < count {
                if Date() > deadline { return false }
                Thread.sleep(forTimeInterval: 0.001)
            }
            return true
        }
    }

    /// Runs, on thread i, a block of `queues[i]` that calls `queues[(i + 1) % n]` once every
    /// thread holds its first queue; returns each thread's error (nil: it ran).
    private func runCycle(_ queues: [DatabaseQueue]) throws -> [SerialDBError?] {
        let meeting = Meeting(of: queues.count)
        let errors = Locked<[Int: SerialDBError?]>([:])
        let done = DispatchSemaphore(value: 0)
        for index in queues.indices {
            let outer = queues[index]
            let inner = queues[(index + 1) % queues.count]
            Thread.detachNewThread {
                var caught: SerialDBError?
                do {
                    try outer.write { db in
                        try db.execute(sql: "INSERT INTO visit VALUES ('outer')")
                        guard meeting.arriveAndWait() else { return }
                        try inner.write { db in try db.execute(sql: "INSERT INTO visit VALUES ('inner')") }
                    }
                } catch let error as SerialDBError {
                    caught = error
                } catch {
                    caught = SerialDBError(.invalidArguments, "unexpected error: \(error)")
                }
                errors.withLock { $0[index] = caught }
                done.signal()
            }
        }
        guard done.wait(signals: queues.count) else {
            Issue.record("a thread of the cycle never returned: the cycle deadlocked")
            throw WaitTimeout()
        }
        return queues.indices.map { index in errors.withLock { $0[index] ?? nil } }
    }

    private func visits(_ queue: DatabaseQueue) throws -> Int {
        try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM visit") ?? 0 }
    }

    @Test func twoThreadsTakingTwoQueuesInOppositeOrdersGetOneErrorInsteadOfADeadlock() throws {
        let queues = try makeQueues(["alpha", "beta"])
        let errors = try runCycle(queues)
        let refused = errors.compactMap { $0 }
        #expect(refused.map(\.code) == [.lockOrderCycle])
        let message = refused.first?.message ?? ""
        #expect(message.contains("alpha") && message.contains("beta"), "\(message)")
        // The refused thread's outer block rolled back; the other thread's blocks both committed.
        #expect(try queues.map(visits).sorted() == [1, 1])
    }

    @Test func threeThreadsInACycleThroughThreeQueuesGetOneErrorNamingAllThree() throws {
        let queues = try makeQueues(["red", "green", "blue"])
        let errors = try runCycle(queues)
        let refused = errors.compactMap { $0 }
        #expect(refused.map(\.code) == [.lockOrderCycle])
        let message = refused.first?.message ?? ""
        #expect(["red", "green", "blue"].allSatisfy { message.contains($0) }, "\(message)")
        #expect(try queues.map(visits).sorted() == [1, 1, 2])
    }

    @Test func anAsyncBlockInTheCycleIsRefusedOrLetThrough() async throws {
        let queues = try makeQueues(["left", "right"])
        let (left, right) = (queues[0], queues[1])
        let meeting = Meeting(of: 2)
        let threadError = Locked<SerialDBError?>(nil)
        let threadDone = Locked(false)
        // An async block of `right` (it runs on the queue's own thread) calls `left`, while a
        // thread in a block of `left` calls `right`.
        let task = Task {
            try await right.write { db in
                try db.execute(sql: "INSERT INTO visit VALUES ('outer')")
                guard meeting.arriveAndWait() else { return }
                try left.write { db in try db.execute(sql: "INSERT INTO visit VALUES ('inner')") }
            }
        }
        Thread.detachNewThread {
            do {
                try left.write { db in
                    try db.execute(sql: "INSERT INTO visit VALUES ('outer')")
                    guard meeting.arriveAndWait() else { return }
                    try right.write { db in try db.execute(sql: "INSERT INTO visit VALUES ('inner')") }
                }
            } catch {
                threadError.withLock { $0 = error as? SerialDBError }
            }
            threadDone.withLock { $0 = true }
        }
        let taskError: SerialDBError?
        do {
            try await result(of: task).get()
            taskError = nil
        } catch let error as SerialDBError {
            taskError = error
        }
        try await waitUntil(timeout: .seconds(deadlockBound)) { threadDone.withLock { $0 } }
        let refused = [taskError, threadError.withLock { $0 }].compactMap { $0 }
        #expect(refused.map(\.code) == [.lockOrderCycle])
        #expect(try queues.map(visits).sorted() == [1, 1])
    }

    @Test func migratingAnotherQueueWhoseStepCallsBackIsRefusedInsteadOfHanging() throws {
        let queues = try makeQueues(["app", "cache"])
        let (app, cache) = (queues[0], queues[1])
        var migrator = DatabaseMigrator()
        migrator.registerMigration("copy-from-app") { db in
            let visits = try app.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM visit") ?? 0 }
            try db.execute(sql: "CREATE TABLE copied(n INTEGER)")
            try db.execute(sql: "INSERT INTO copied VALUES (?)", arguments: [visits])
        }
        let steps = migrator
        let result = try outcome {
            try app.write { db in
                try db.execute(sql: "INSERT INTO visit VALUES ('outer')")
                try cache.migrate(steps)
            }
        }
        let error = #expect(throws: SerialDBError.self) { try result.get() }
        // Whichever wait closed the cycle was refused: the migrate call, or the step's read.
        let cause = error?.code == .migrationFailed ? (error?.underlying as? SerialDBError) : error
        #expect(cause?.code == .lockOrderCycle)
        #expect(try visits(app) == 0)
    }

    @Test func aChainOfWaitsWithoutACycleIsNotRefused() throws {
        let queues = try makeQueues(["first", "second", "third"])
        let holdingThird = DispatchSemaphore(value: 0)
        let releaseThird = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? queues[2].write { _ in
                holdingThird.signal()
                _ = releaseThird.wait(seconds: deadlockBound)
            }
        }
        #expect(holdingThird.wait(seconds: deadlockBound))
        // first → second → third, where third is busy but waits for nothing: a chain, not a cycle.
        let chainError = Locked<(any Error)?>(nil)
        let chainDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            do {
                try queues[0].write { db in
                    try db.execute(sql: "INSERT INTO visit VALUES ('outer')")
                    try queues[1].write { db in
                        try db.execute(sql: "INSERT INTO visit VALUES ('middle')")
                        try queues[2].write { db in try db.execute(sql: "INSERT INTO visit VALUES ('inner')") }
                    }
                }
            } catch {
                chainError.withLock { $0 = error }
            }
            chainDone.signal()
        }
        // Meanwhile other threads wait behind the chain at every link.
        let others = DispatchSemaphore(value: 0)
        for queue in queues {
            Thread.detachNewThread {
                try? queue.write { db in try db.execute(sql: "INSERT INTO visit VALUES ('other')") }
                others.signal()
            }
        }
        sleepSeconds(0.2)
        releaseThird.signal()
        #expect(chainDone.wait(seconds: deadlockBound))
        #expect(others.wait(signals: 3))
        #expect(chainError.withLock { $0 } == nil)
        #expect(try queues.map(visits) == [2, 2, 2])
    }

    @Test func manyThreadsNestingQueuesInRandomOrdersNeverHangAndOnlyCyclesAreRefused() throws {
        let queues = try makeQueues(["q0", "q1", "q2", "q3"])
        let unexpected = Locked<[String]>([])
        let refusals = Locked(0)
        let done = DispatchSemaphore(value: 0)
        for thread in 0..<8 {
            Thread.detachNewThread {
                var random = SeededGenerator(seed: UInt64(thread + 1))
                for _ in 0..<100 {
                    let outer = Int.random(in: 0..<4, using: &random)
                    let inner = (outer + Int.random(in: 1..<4, using: &random)) % 4
                    do {
                        try queues[outer].write { db in
                            try db.execute(sql: "INSERT INTO visit VALUES ('outer')")
                            // Hold the outer queue a moment, so that threads overlap.
                            sleepSeconds(0.0002)
                            try queues[inner].write { db in try db.execute(sql: "INSERT INTO visit VALUES ('inner')") }
                        }
                    } catch let error as SerialDBError where error.code == .lockOrderCycle {
                        refusals.withLock { $0 += 1 }
                    } catch {
                        unexpected.withLock { $0.append("\(error)") }
                    }
                }
                done.signal()
            }
        }
        #expect(done.wait(signals: 8, seconds: 60), "the threads deadlocked")
        #expect(unexpected.withLock { $0 }.isEmpty)
        // Every block that ran wrote two rows (outer and inner), every refused one none.
        let total = try queues.map(visits).reduce(0, +)
        #expect(total == 2 * (8 * 100 - refusals.withLock { $0 }))
    }
}
