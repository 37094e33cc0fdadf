import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// The bookkeeping of a pool read: which thread runs a read block (for reentrancy), which
/// connection it runs on (for interrupts), and what happens when the block closes that
/// connection. Complements `DatabasePoolTests`.
@Suite struct DatabasePoolReadTests {
    private static let slowCount =
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000000) SELECT count(*) FROM c"
    private static let countSQL = "SELECT count(*) FROM player"

    private func seededPool(in directory: TemporaryDirectory, readers: Int = 5) throws -> DatabasePool {
        let pool = try DatabasePool(path: directory.path("pool.sqlite"), maximumReaderCount: readers)
        try pool.write { db in try Player.createTable(db, rows: 100) }
        return pool
    }

    /// Starts, on a thread of its own, a read that runs until it is interrupted; returns
    /// whether its block has begun, and its result once it ended.
    private func startSlowRead(on pool: DatabasePool) -> (
        started: Locked<Bool>, outcome: Locked<Result<Int?, any Error>?>
    ) {
        let started = Locked(false)
        let outcome = Locked<Result<Int?, any Error>?>(nil)
        Thread.detachNewThread {
            let result = Result {
                try pool.read { db -> Int? in
                    started.withLock { $0 = true }
                    return try db.fetchOne(Int.self, sql: Self.slowCount)
                }
            }
            outcome.withLock { $0 = result }
        }
        return (started, outcome)
    }

    /// The code of the `SerialDBError` that `body` throws, or `nil`.
    private struct BlockFailed: Error {}

    private static func errorCode(_ body: () throws -> Void) -> SerialDBError.Code? {
        do {
            try body()
            return nil
        } catch let error as SerialDBError {
            return error.code
        } catch {
            return nil
        }
    }

    @Test func aThreadWhoseReadEndedCanUseThePoolAgainHoweverTheReadEnded() throws {
        let directory = try TemporaryDirectory()
        let pool = try seededPool(in: directory, readers: 1)
        let endings: [(String, @Sendable (Database) throws -> Void)] = [
            ("returned", { db in _ = try db.fetchOne(Int.self, sql: Self.countSQL) }),
            ("threw", { _ in throw BlockFailed() }),
            ("closed its connection", { db in db.close() }),
            ("was refused a nested read", { _ in _ = try pool.read { _ in 0 } }),
        ]
        for (ending, block) in endings {
            let afterwards = try outcome { () -> (SerialDBError.Code?, Int?) in
                _ = try? pool.read { db in try block(db) }
                let write = Self.errorCode { try pool.write { _ in } }
                return (write, try pool.read { db in try db.fetchOne(Int.self, sql: Self.countSQL) })
            }
            let (writeError, count) = try afterwards.get()
            #expect(writeError == nil, "write after a read that \(ending)")
            #expect(count == 100, "read after a read that \(ending)")
        }
    }

    @Test func aReadBlockThatClosedItsConnectionIsStillRefusedPoolCalls() throws {
        let directory = try TemporaryDirectory()
        let pool = try seededPool(in: directory, readers: 2)
        let codes = Locked<[SerialDBError.Code?]>([])
        let finished = finishes {
            _ = try? pool.read { db in
                db.close()
                let read = Self.errorCode { _ = try pool.read { _ in 0 } }
                let write = Self.errorCode { try pool.write { _ in } }
                codes.withLock { $0 = [read, write] }
            }
        }
        #expect(finished, "a pool call from a read block that closed its connection must not wait")
        #expect(codes.withLock { $0 } == [.reentrantCall, .reentrantCall])
        #expect(try pool.read { db in try db.fetchOne(Int.self, sql: Self.countSQL) } == 100)
    }

    @Test func theBlockOfAnAsyncReadIsRefusedPoolCalls() async throws {
        let directory = try TemporaryDirectory()
        let pool = try seededPool(in: directory)
        // Bounded: were the block's thread not recorded, the nested close would wait for it.
        let read = Task {
            try await pool.read { _ in
                [
                    Self.errorCode { _ = try pool.read { _ in 0 } },
                    Self.errorCode { try pool.write { _ in } },
                    Self.errorCode { try pool.close() },
                ]
            }
        }
        let codes = try await result(of: read).get()
        #expect(codes == [.reentrantCall, .reentrantCall, .reentrantCall])
        #expect(try await pool.read { db in try db.fetchOne(Int.self, sql: Self.countSQL) } == 100)
    }

    @Test func readsOnOtherThreadsAreNotMistakenForReentrantCalls() throws {
        let directory = try TemporaryDirectory()
        let pool = try seededPool(in: directory, readers: 2)
        let outerInside = DispatchSemaphore(value: 0)
        let innerDone = DispatchSemaphore(value: 0)
        let releaseOuter = DispatchSemaphore(value: 0)
        let innerCount = Locked<Int?>(nil)
        Thread.detachNewThread {
            _ = try? pool.read { _ in
                outerInside.signal()
                _ = releaseOuter.wait(seconds: deadlockBound)
            }
        }
        #expect(outerInside.wait(seconds: deadlockBound))
        // Another thread reads and writes while the first read runs: neither is reentrant.
        Thread.detachNewThread {
            try? pool.write { db in try db.execute(sql: "DELETE FROM player WHERE id > 50") }
            innerCount.withLock { $0 = try? pool.read { db in try db.fetchOne(Int.self, sql: Self.countSQL) } }
            innerDone.signal()
        }
        #expect(innerDone.wait(seconds: deadlockBound))
        releaseOuter.signal()
        #expect(innerCount.withLock { $0 } == 50)
    }

    @Test func interruptingThePoolStopsARunningBlockingReadAndItsReaderServesTheNextRead() throws {
        let directory = try TemporaryDirectory()
        let pool = try seededPool(in: directory, readers: 1)
        let (started, outcome) = startSlowRead(on: pool)
        // The statement may not have begun when the flag is set: interrupt until the read ends.
        let deadline = Date(timeIntervalSinceNow: deadlockBound)
        while outcome.withLock({ $0 == nil }) && Date() < deadline {
            if started.withLock({ $0 }) { pool.interrupt() }
            Thread.sleep(forTimeInterval: 0.01)
        }
        let result = try #require(outcome.withLock { $0 }, "the interrupted read must end")
        let error = #expect(throws: DatabaseError.self) { try result.get() }
        #expect(error?.resultCode == .SQLITE_INTERRUPT)
        #expect(try pool.read { db in try db.fetchOne(Int.self, sql: Self.countSQL) } == 100)
    }

    @Test func interruptingThePoolAfterAReadClosedItsConnectionReachesOnlyLiveReads() throws {
        let directory = try TemporaryDirectory()
        let pool = try seededPool(in: directory, readers: 2)
        let (started, outcome) = startSlowRead(on: pool)
        // A second read closes its connection and interrupts the pool from inside its block,
        // while its own connection is closed and the other read's is running.
        let deadline = Date(timeIntervalSinceNow: deadlockBound)
        while outcome.withLock({ $0 == nil }) && Date() < deadline {
            if started.withLock({ $0 }) {
                _ = try? pool.read { db in
                    db.close()
                    pool.interrupt()
                }
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        let result = try #require(outcome.withLock { $0 }, "the interrupted read must end")
        let error = #expect(throws: DatabaseError.self) { try result.get() }
        #expect(error?.resultCode == .SQLITE_INTERRUPT)
        for _ in 0..<3 {
            #expect(try pool.read { db in try db.fetchOne(Int.self, sql: Self.countSQL) } == 100)
        }
    }
}
