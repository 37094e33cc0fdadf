import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

@Suite struct DatabasePoolTests {
    private static let slowCount =
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000000) SELECT count(*) FROM c"

    /// Runs `body` on a thread of its own, inside `group`: dispatch's global queue may run a
    /// few blocked items one after another on a loaded 2-core machine, and these tests need them
    /// at the same time.
    private func onNewThread(_ group: DispatchGroup, _ body: @escaping @Sendable () -> Void) {
        group.enter()
        Thread.detachNewThread {
            body()
            group.leave()
        }
    }

    private func seededPool(
        in directory: TemporaryDirectory, rows: Int = 100, configuration: Configuration = Configuration(),
        readers: Int = 5
    ) throws -> DatabasePool {
        let pool = try DatabasePool(
            path: directory.path("pool.sqlite"), configuration: configuration, maximumReaderCount: readers)
        try pool.write { db in
            try Player.createTable(db, rows: rows)
        }
        return pool
    }

    @Test func readsRunWhileTheWriterHoldsATransactionAndSeeTheLastCommit() throws {
        let directory = try TemporaryDirectory()
        let pool = try seededPool(in: directory)
        let writerInside = DispatchSemaphore(value: 0)
        let readDone = DispatchSemaphore(value: 0)
        let writerDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? pool.write { db in
                try db.execute(sql: "DELETE FROM player")
                writerInside.signal()
                // The write stays open until the read has finished: a pool that made reads wait
                // for the writer would see the DELETE committed.
                _ = readDone.wait(seconds: deadlockBound)
            }
            writerDone.signal()
        }
        #expect(writerInside.wait(seconds: deadlockBound))
        let seen = try pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") }
        readDone.signal()
        #expect(seen == 100, "the uncommitted DELETE is invisible to the read")
        #expect(writerDone.wait(seconds: deadlockBound))
        #expect(try pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") } == 0)
    }

    @Test func readsRunAtTheSameTimeOnSeveralConnections() throws {
        let directory = try TemporaryDirectory()
        let pool = try seededPool(in: directory, readers: 3)
        let inside = Locked(0)
        let mostAtOnce = Locked(0)
        let allInside = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        for _ in 0..<3 {
            onNewThread(group) {
                _ = try? pool.read { db in
                    let now = inside.withLock { count -> Int in
                        count += 1
                        return count
                    }
                    mostAtOnce.withLock { $0 = max($0, now) }
                    if now == 3 { allInside.signal() }
                    // Each read waits until all three are inside: only concurrent reads get there.
                    _ = allInside.wait(seconds: deadlockBound)
                    allInside.signal()
                    return try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player")
                }
            }
        }
        #expect(group.wait(timeout: .now() + deadlockBound) == .success)
        #expect(mostAtOnce.withLock { $0 } == 3)
    }

    @Test func aReadSeesOneSnapshotFromItsFirstStatementToItsEnd() throws {
        let directory = try TemporaryDirectory()
        let pool = try seededPool(in: directory)
        let counts = try pool.read { db -> [Int?] in
            let before = try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player")
            let writer = finishes(within: 10) {
                try? pool.writerDatabase { db in try db.execute(sql: "DELETE FROM player WHERE id <= 50") }
            }
            #expect(writer, "the write commits while the read is open")
            return [before, try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player")]
        }
        #expect(counts == [100, 100])
    }

    @Test func writesInsideAReadAreRefusedAndChangeNothing() throws {
        let directory = try TemporaryDirectory()
        let pool = try seededPool(in: directory)
        let error = #expect(throws: SerialDBError.self) {
            try pool.read { db in try db.execute(sql: "DELETE FROM player") }
        }
        #expect(error?.code == .writeInReadOnlyBlock)
        #expect(try pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") } == 100)
    }

    @Test func prepareDatabaseRunsOnTheWriterAndOnEveryReader() throws {
        let directory = try TemporaryDirectory()
        let prepared = Locked(0)
        var configuration = Configuration()
        configuration.prepareDatabase = { db in
            prepared.withLock { $0 += 1 }
            try db.add(
                function: DatabaseFunction("double", argumentCount: 1, deterministic: true) { arguments in
                    guard case .integer(let value) = arguments[0] else { return nil }
                    return value * 2
                })
        }
        let pool = try seededPool(in: directory, configuration: configuration, readers: 3)
        let results = Locked<[Int]>([])
        let started = DispatchGroup()
        let release = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        for _ in 0..<3 {
            started.enter()
            onNewThread(group) {
                let value = try? pool.read { db -> Int? in
                    started.leave()
                    _ = release.wait(seconds: deadlockBound)
                    return try db.fetchOne(Int.self, sql: "SELECT double(sum(score)) FROM player")
                }
                results.withLock { $0.append(value.flatMap { $0 } ?? -1) }
            }
        }
        #expect(started.wait(timeout: .now() + deadlockBound) == .success, "three reads hold three readers at once")
        for _ in 0..<3 { release.signal() }
        #expect(group.wait(timeout: .now() + deadlockBound) == .success)
        let expected = try pool.writerDatabase { db in
            try db.fetchOne(Int.self, sql: "SELECT double(sum(score)) FROM player")
        }
        #expect(results.withLock { $0 } == [Int](repeating: expected ?? -2, count: 3))
        #expect(prepared.withLock { $0 } == 4, "one writer and three readers")
    }

    @Test func readsAndWritesSubmittedAfterAnUpgradeWaitForItAndSeeTheNewSchema() throws {
        let directory = try TemporaryDirectory()
        let pool = try seededPool(in: directory)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("add level") { db in
            Thread.sleep(forTimeInterval: 0.3)
            try db.execute(sql: "ALTER TABLE player ADD COLUMN level INTEGER NOT NULL DEFAULT 1")
        }
        let upgrade = pool.startMigration(migrator)
        let outcomes = Locked<[String]>([])
        let group = DispatchGroup()
        for index in 0..<8 {
            onNewThread(group) {
                do {
                    if index.isMultiple(of: 2) {
                        let levels = try pool.read { db in
                            try db.fetchOne(Int.self, sql: "SELECT sum(level) FROM player")
                        }
                        outcomes.withLock { $0.append("read \(levels ?? -1)") }
                    } else {
                        try pool.write { db in
                            try db.execute(sql: "INSERT INTO player(name, score, level) VALUES ('new', 0, 2)")
                        }
                        outcomes.withLock { $0.append("write") }
                    }
                } catch {
                    outcomes.withLock { $0.append("error \(error)") }
                }
            }
        }
        try upgrade.wait()
        #expect(group.wait(timeout: .now() + deadlockBound) == .success)
        let seen = outcomes.withLock { $0 }
        #expect(seen.count == 8)
        #expect(seen.allSatisfy { !$0.hasPrefix("error") }, "\(seen)")
        #expect(seen.filter { $0.hasPrefix("read") }.allSatisfy { $0 != "read -1" })
    }

    @Test func aFailedUpgradeMakesReadsAndWritesRefuseUntilAMigrationSucceeds() throws {
        let directory = try TemporaryDirectory()
        let pool = try seededPool(in: directory)
        struct StepFailed: Error {}
        var broken = DatabaseMigrator()
        broken.registerMigration("broken") { db in
            try db.execute(sql: "ALTER TABLE player ADD COLUMN level INTEGER")
            throw StepFailed()
        }
        #expect(throws: SerialDBError.self) { try pool.migrate(broken) }
        let readError = #expect(throws: SerialDBError.self) {
            try pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") }
        }
        #expect(readError?.code == .migrationFailed)
        let writeError = #expect(throws: SerialDBError.self) {
            try pool.write { db in try db.execute(sql: "DELETE FROM player") }
        }
        #expect(writeError?.code == .migrationFailed)

        var fixed = DatabaseMigrator()
        fixed.registerMigration("fixed") { db in
            try db.execute(sql: "ALTER TABLE player ADD COLUMN level INTEGER NOT NULL DEFAULT 1")
        }
        try pool.migrate(fixed)
        #expect(try pool.read { db in try db.fetchOne(Int.self, sql: "SELECT sum(level) FROM player") } == 100)
    }

    @Test func anyPoolCallFromInsideOneOfItsBlocksThrowsInsteadOfWaiting() throws {
        let directory = try TemporaryDirectory()
        let pool = try seededPool(in: directory)
        let nested: [(String, @Sendable () throws -> Void)] = [
            ("read", { _ = try pool.read { _ in 0 } }),
            ("write", { try pool.write { _ in } }),
            ("writerDatabase", { try pool.writerDatabase { _ in } }),
            ("inTransaction", { try pool.inTransaction { _ in .commit } }),
            ("checkpoint", { try pool.checkpoint() }),
            ("close", { try pool.close() }),
        ]
        let outer: [(String, @Sendable (@escaping @Sendable () throws -> Void) throws -> Void)] = [
            ("read", { body in try pool.read { _ in try body() } }),
            ("write", { body in try pool.write { _ in try body() } }),
            ("writerDatabase", { body in try pool.writerDatabase { _ in try body() } }),
        ]
        for (outerName, outerCall) in outer {
            for (innerName, innerCall) in nested {
                let code = Locked<SerialDBError.Code?>(nil)
                let finished = finishes(within: 5) {
                    do {
                        try outerCall {
                            do { try innerCall() } catch let error as SerialDBError {
                                code.withLock { $0 = error.code }
                            }
                        }
                    } catch {}
                }
                #expect(finished, "\(innerName) inside \(outerName) must not hang")
                #expect(code.withLock { $0 } == .reentrantCall, "\(innerName) inside \(outerName)")
            }
        }
        #expect(try pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") } == 100)
    }

    @Test func cancellingAnAsyncReadInterruptsItAndTheReaderServesTheNextRead() async throws {
        let directory = try TemporaryDirectory()
        let pool = try seededPool(in: directory, readers: 1)
        let task = Task {
            try await pool.read { db in try db.fetchOne(Int.self, sql: Self.slowCount) }
        }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        await #expect(throws: CancellationError.self) { _ = try await task.value }
        // One reader only: the next read gets the same connection, with no transaction left open.
        let count = try await pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") }
        #expect(count == 100)
        try await pool.write { db in try db.execute(sql: "DELETE FROM player") }
        #expect(try await pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") } == 0)
    }

    @Test func closeWaitsForRunningReadsThenEveryCallThrowsClosed() async throws {
        let directory = try TemporaryDirectory()
        let pool = try seededPool(in: directory)
        let readStarted = Locked(false)
        let read = Task {
            try await pool.read { db -> Int? in
                readStarted.withLock { $0 = true }
                Thread.sleep(forTimeInterval: 0.2)
                return try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player")
            }
        }
        try await waitUntil { readStarted.withLock { $0 } }
        try await pool.close()
        #expect(try await read.value == 100)
        let readError = await #expect(throws: SerialDBError.self) { _ = try await pool.read { _ in 0 } }
        #expect(readError?.code == .closed)
        let writeError = #expect(throws: SerialDBError.self) { try pool.write { _ in } }
        #expect(writeError?.code == .closed)
    }

    @Test func aTruncatingCheckpointEmptiesTheWAL() throws {
        let directory = try TemporaryDirectory()
        let pool = try seededPool(in: directory, rows: 2_000)
        let walPath = directory.path("pool.sqlite-wal")
        let walSize = { (try? FileManager.default.attributesOfItem(atPath: walPath)[.size] as? Int) ?? nil }
        #expect((walSize() ?? 0) > 0)
        let result = try pool.checkpoint(.truncate)
        #expect(result.walFrames == 0)
        #expect(walSize() == 0)
        #expect(try pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") } == 2_000)
    }

    @Test func aPoolRefusesAnInMemoryDatabaseAndAnotherJournalMode() throws {
        let memory = #expect(throws: SerialDBError.self) { try DatabasePool(path: ":memory:") }
        #expect(memory?.code == .invalidArguments)
        let directory = try TemporaryDirectory()
        var configuration = Configuration()
        configuration.journalMode = .delete
        let mode = #expect(throws: SerialDBError.self) {
            try DatabasePool(path: directory.path("x.sqlite"), configuration: configuration)
        }
        #expect(mode?.message.contains("wal") == true)
    }

    @Test func aReadThatClosesItsConnectionLeavesThePoolServingOnFreshReaders() throws {
        let directory = try TemporaryDirectory()
        let pool = try seededPool(in: directory, readers: 1)
        #expect(throws: SerialDBError.self) {
            try pool.read { db in
                db.close()
                return try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player")
            }
        }
        pool.interrupt()  // reaches no freed connection
        #expect(try pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") } == 100)
    }
}
