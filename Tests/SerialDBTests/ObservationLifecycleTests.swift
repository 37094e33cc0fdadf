import Foundation
import SerialDBTestSupport
import Testing

@testable import SerialDB

/// Observations across migrations, beside a busy writer, by the thousand, under many writing
/// threads, and cancelled at each point where they wait.
@Suite(.timeLimit(.minutes(5))) struct ObservationLifecycleTests {
    private static let count = "SELECT count(*) FROM player"

    private func seeded(_ kind: WriterKind, in directory: TemporaryDirectory) throws -> any DatabaseWriter {
        let writer = try kind.make(in: directory)
        try writer.write { db in try Player.createTable(db, rows: 3) }
        return writer
    }

    private func hub(_ writer: some DatabaseWriter) -> ObservationHub {
        writer.writerInternals.serializer.observations
    }

    /// No observation left and no hook on the writer (read in a writer block, after the
    /// housekeeping already in line).
    private func nothingIsLeft(_ writer: some DatabaseWriter) async throws -> Bool {
        let hub = hub(writer)
        let hooks = try await writer.inDatabase { _ in hub.hasHooks }
        return !hooks && hub.counts(table: "player").registered == 0
    }

    // MARK: - Cancellation at every await point

    @Test(arguments: WriterKind.allCases)
    func cancelledBeforeTheFirstValueItInstallsNothing(kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let writer = try seeded(kind, in: directory)
        let observation = writer.observe { db in try db.fetchOne(Int.self, sql: Self.count) }
        let consumer = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            var values = observation.makeAsyncIterator()
            return try await values.next()
        }
        #expect(try await consumer.value == nil)
        #expect(try await nothingIsLeft(writer))
    }

    @Test(arguments: WriterKind.allCases)
    func cancelledWhileItsRegistrationWaitsInLine(kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let writer = try seeded(kind, in: directory)
        let serializer = writer.writerInternals.serializer
        let release = DispatchSemaphore(value: 0)
        let busy = Task { try await writer.inDatabase { _ in _ = release.wait(seconds: deadlockBound) } }
        try await waitUntil { serializer.owningThread != 0 }
        let observation = writer.observe { db in try db.fetchOne(Int.self, sql: Self.count) }
        let consumer = Task {
            var values = observation.makeAsyncIterator()
            return try await values.next()
        }
        try await waitUntil { serializer.pendingJobCount == 2 }  // the busy block and the registration
        consumer.cancel()
        #expect(try await consumer.value == nil)
        release.signal()
        try await busy.value
        #expect(try await nothingIsLeft(writer))
    }

    @Test(arguments: WriterKind.allCases)
    func cancelledWhileWaitingForAChange(kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let writer = try seeded(kind, in: directory)
        let observation = writer.observe { db in try db.fetchOne(Int.self, sql: Self.count) }
        let firstSeen = Locked(false)
        let consumer = Task {
            var values = observation.makeAsyncIterator()
            _ = try await values.next()
            firstSeen.withLock { $0 = true }
            return try await values.next()
        }
        try await waitUntil { firstSeen.withLock { $0 } }
        try await waitUntil { hub(writer).counts(table: "player").indexed == 1 }
        consumer.cancel()
        #expect(try await consumer.value == nil)
        #expect(try await nothingIsLeft(writer))
    }

    @Test(arguments: WriterKind.allCases)
    func cancelledDuringAFetch(kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let writer = try seeded(kind, in: directory)
        let runs = Locked(0)
        let release = DispatchSemaphore(value: 0)
        let observation = writer.observe { db in
            let run = runs.withLock { count in
                count += 1
                return count
            }
            if run == 2 { _ = release.wait(seconds: deadlockBound) }
            return try db.fetchOne(Int.self, sql: Self.count)
        }
        let firstSeen = Locked(false)
        let consumer = Task {
            var values = observation.makeAsyncIterator()
            _ = try await values.next()
            firstSeen.withLock { $0 = true }
            return try await values.next()
        }
        try await waitUntil { firstSeen.withLock { $0 } }
        try await writer.write { db in try db.execute(sql: "DELETE FROM player WHERE id = 1") }
        try await waitUntil { runs.withLock { $0 } == 2 }
        consumer.cancel()
        release.signal()
        #expect(try await consumer.value == nil)
        #expect(try await nothingIsLeft(writer))
    }

    // MARK: - Migrations, the pool's writer, many observations

    @Test(arguments: WriterKind.allCases)
    func itHoldsDuringAMigrationAndFetchesOnTheNewSchema(kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let writer = try kind.make(in: directory)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in try Player.createTable(db, rows: 3) }
        try await writer.migrate(migrator)
        var values = writer.observe { db in
            try db.fetchAll(String.self, sql: "SELECT group_concat(name) FROM pragma_table_info('player')")
        }.makeAsyncIterator()
        #expect(try await values.next() == ["id,name,score"])
        let release = DispatchSemaphore(value: 0)
        migrator.registerMigration("v2") { db in
            _ = release.wait(seconds: deadlockBound)
            try db.execute(sql: "ALTER TABLE player ADD COLUMN team TEXT")
        }
        let upgrade = writer.startMigration(migrator)
        let next = Task { [values] in
            var values = values
            return try await values.next()
        }
        release.signal()
        #expect(try await next.value == ["id,name,score,team"])
        try await upgrade.wait()
    }

    @Test func onAPoolTheFetchRunsWhileTheWriterIsHeld() async throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.path("pool.sqlite"))
        try await pool.write { db in try Player.createTable(db, rows: 3) }
        var values = pool.observe { db in try db.fetchOne(Int.self, sql: Self.count) }.makeAsyncIterator()
        #expect(try await values.next() == 3)
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? pool.write { db in try db.execute(sql: "INSERT INTO player(name, score) VALUES ('a', 1)") }
            try? pool.write { db in
                try db.execute(sql: "INSERT INTO player(name, score) VALUES ('b', 1)")
                holding.signal()
                _ = release.wait(seconds: deadlockBound)
            }
        }
        #expect(holding.wait(seconds: deadlockBound))
        // The writer is inside its second transaction: the fetch sees the first commit.
        #expect(try await values.next() == 4)
        release.signal()
        #expect(try await values.next() == 5)
    }

    @Test func aThousandObservationsCostOnlyWhatTheirTablesTouch() async throws {
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.path("many.sqlite"))
        try await queue.write { db in
            for table in 0..<10 {
                try db.execute(sql: "CREATE TABLE t\(table)(id INTEGER PRIMARY KEY, v INTEGER)")
            }
        }
        var iterators: [ObservedValues<Int>.Iterator] = []
        for index in 0..<1_000 {
            let table = "t\(index % 10)"
            var values = queue.observe { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM \(table)") ?? -1 }
                .makeAsyncIterator()
            #expect(try await values.next() == 0)
            iterators.append(values)
        }
        let hub = queue.writerInternals.serializer.observations
        #expect(hub.counts(table: "t3") == (registered: 1_000, indexed: 100))
        try await queue.write { db in try db.execute(sql: "INSERT INTO t3(v) VALUES (1)") }
        let marked = iterators.indices.filter { iterators[$0].run.isMarkedChanged }
        #expect(marked == Array(stride(from: 3, to: 1_000, by: 10)))
        #expect(try await iterators[3].next() == 1)
        iterators.removeAll()
        #expect(try await nothingIsLeft(queue))
    }

    /// Run under ThreadSanitizer too: writers on many threads, one consumer.
    @Test(arguments: WriterKind.allCases)
    func writersOnManyThreadsAndValuesNeverGoBack(kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let writer = try seeded(kind, in: directory)
        let threads = 6
        let perThread = 40
        let total = 3 + threads * perThread
        var values = writer.observe { db in try db.fetchOne(Int.self, sql: Self.count) ?? -1 }.makeAsyncIterator()
        #expect(try await values.next() == 3)
        let finished = Locked(0)
        for _ in 0..<threads {
            Thread.detachNewThread {
                for _ in 0..<perThread {
                    try? writer.write { db in try db.execute(sql: "INSERT INTO player(name, score) VALUES ('w', 1)") }
                }
                finished.withLock { $0 += 1 }
            }
        }
        var seen = [3]
        let deadline = ContinuousClock.now + .seconds(deadlockBound)
        while let value = try await values.next() {
            seen.append(value)
            if value == total || ContinuousClock.now > deadline { break }
        }
        try await waitUntil { finished.withLock { $0 } == threads }
        #expect(seen.last == total)
        #expect(seen == seen.sorted())
    }
}
