import Dispatch
import Foundation
import SerialDB

/// Small transactions with observations running: the price of the hooks when the observed
/// table is another one (`small_txs_observed`, beside `small_txs`), the time from a commit to
/// the value in the consumer (`observed_commit_latency`, p50/p99 printed), and 100 observations
/// of the written table. The C side is the same commits with nothing observing.
enum ObservedWorkloads {
    /// Writes `count` small transactions into `t` while `observers` observations run in tasks of
    /// their own, each consuming every value it gets. `observedTable` is what they read.
    static func smallTransactions(path: String, count: Int, observers: Int, observedTable: String) throws -> SideRun {
        let queue = try DatabaseQueue(path: path, configuration: SerialDBSide.configuration)
        try queue.inDatabase { db in
            try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c REAL)")
            try db.execute(sql: "CREATE TABLE u(id INTEGER PRIMARY KEY, v INTEGER)")
        }
        let sql = "SELECT max(id) FROM \(observedTable)"
        let started = DispatchSemaphore(value: 0)
        var consumers: [Task<Void, any Error>] = []
        for _ in 0..<observers {
            consumers.append(
                Task.detached {
                    var signalled = false
                    for try await _ in queue.observe({ db in try db.fetchOne(Int.self, sql: sql) }) where !signalled {
                        signalled = true
                        started.signal()
                    }
                })
        }
        for _ in 0..<observers { started.wait() }
        let elapsed = try ContinuousClock().measure {
            for i in 1...count {
                try queue.write { db in
                    try db.execute(sql: SerialDBSide.insertSQL, arguments: [i, i, "row-\(i)", Double(i) * 0.5])
                }
            }
        }
        for consumer in consumers { consumer.cancel() }
        for consumer in consumers { _ = try waitFor(consumer) }
        try queue.close()
        return SideRun(elapsed: elapsed, digest: try RawConnection.digest(path: path, operations: count))
    }

    /// Commits `count` small transactions one at a time; after each, waits until the consumer
    /// holds the value that reflects it, and records the time from before the commit to then.
    static func commitLatency(path: String, count: Int) throws -> SideRun {
        let queue = try DatabaseQueue(path: path, configuration: SerialDBSide.configuration)
        try queue.inDatabase { db in
            try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c REAL)")
        }
        let seen = Seen()
        let consumer = Task.detached {
            for try await value in queue.observe({ db in try db.fetchOne(Int.self, sql: "SELECT max(id) FROM t") ?? 0 })
            {
                seen.publish(value)
            }
        }
        seen.waitFor(0)
        var latencies: [Duration] = []
        latencies.reserveCapacity(count)
        let clock = ContinuousClock()
        let elapsed = try clock.measure {
            for i in 1...count {
                let before = clock.now
                try queue.write { db in
                    try db.execute(sql: SerialDBSide.insertSQL, arguments: [i, i, "row-\(i)", Double(i) * 0.5])
                }
                seen.waitFor(i)
                latencies.append(clock.now - before)
            }
        }
        consumer.cancel()
        _ = try waitFor(consumer)
        try queue.close()
        latencies.sort()
        let p50 = latencies[latencies.count / 2]
        let p99 = latencies[min(latencies.count - 1, latencies.count * 99 / 100)]
        print(
            "observed_commit_latency: commit to value p50 \(microseconds(p50)) µs, p99 \(microseconds(p99)) µs "
                + "(\(count) commits)")
        return SideRun(elapsed: elapsed, digest: try RawConnection.digest(path: path, operations: count))
    }

    private static func microseconds(_ duration: Duration) -> String {
        String(format: "%.1f", duration.milliseconds * 1000)
    }

    /// Waits on this thread for a task started by the workload (never a cooperative thread).
    private static func waitFor(_ task: Task<Void, any Error>) throws -> Result<Void, any Error> {
        let done = DispatchSemaphore(value: 0)
        let outcome = LockedBox<Result<Void, any Error>?>(nil)
        Task.detached {
            let result = await task.result
            outcome.set(result)
            done.signal()
        }
        done.wait()
        return outcome.get() ?? .success(())
    }

    /// The last value the consumer received; the committing thread waits for a given one.
    private final class Seen: @unchecked Sendable {
        // Safe: `value` is read and written only while holding `condition`.
        private let condition = NSCondition()
        private var value = -1

        func publish(_ newValue: Int) {
            condition.lock()
            value = newValue
            condition.broadcast()
            condition.unlock()
        }

        func waitFor(_ wanted: Int) {
            condition.lock()
            while value < wanted { condition.wait() }
            condition.unlock()
        }
    }

    /// A value set by one thread and read by another after a semaphore.
    private final class LockedBox<Value>: @unchecked Sendable {
        // Safe: `value` is read and written only while holding `lock`.
        private let lock = NSLock()
        private var value: Value

        init(_ value: Value) { self.value = value }
        func set(_ newValue: Value) { lock.withLock { value = newValue } }
        func get() -> Value { lock.withLock { value } }
    }
}
