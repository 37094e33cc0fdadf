import Foundation
import SerialDBTestSupport
import Testing

@testable import SerialDB

/// `observe(_:)` on a queue and on a pool: what re-runs a fetch, what does not, and how an
/// observation ends. "Marked changed" is read from the observation itself, right after the
/// commit returned (the serializer publishes commits before the committing call returns), so
/// no test waits for something not to happen.
@Suite(.timeLimit(.minutes(5))) struct ObservationTests {
    private static let count = "SELECT count(*) FROM player"

    private func seeded(_ kind: WriterKind, in directory: TemporaryDirectory, rows: Int = 3) throws
        -> any DatabaseWriter
    {
        let writer = try kind.make(in: directory)
        try writer.write { db in
            try Player.createTable(db, rows: rows)
            try db.execute(sql: "CREATE TABLE other(id INTEGER PRIMARY KEY, note TEXT)")
        }
        return writer
    }

    private func insertPlayer(_ writer: some DatabaseWriter, score: Int = 1) throws {
        try writer.write { db in
            try db.execute(sql: "INSERT INTO player(name, score) VALUES ('new', ?)", arguments: [score])
        }
    }

    /// Counts how many times the fetch ran.
    private func countingFetch(_ runs: Locked<Int>) -> @Sendable (Database) throws -> Int {
        { db in
            runs.withLock { $0 += 1 }
            return try db.fetchOne(Int.self, sql: Self.count) ?? -1
        }
    }

    private func hub(_ writer: some DatabaseWriter) -> ObservationHub {
        writer.writerInternals.serializer.observations
    }

    /// Whether the writer's hooks are installed, read in a writer block (after the
    /// housekeeping already in line).
    private func hasHooks(_ writer: some DatabaseWriter) throws -> Bool {
        let hub = hub(writer)
        return try writer.inDatabase { _ in hub.hasHooks }
    }

    @Test(arguments: WriterKind.allCases)
    func theFirstValueIsNowAndACommitToItsTableGivesTheNext(kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let writer = try seeded(kind, in: directory)
        var values = writer.observe { db in try db.fetchOne(Int.self, sql: Self.count) }.makeAsyncIterator()
        #expect(try await values.next() == 3)
        try insertPlayer(writer)
        #expect(values.run.isMarkedChanged)
        #expect(try await values.next() == 4)
        #expect(!values.run.isMarkedChanged)
    }

    @Test(arguments: WriterKind.allCases)
    func otherTablesRollbacksAndFailedWritesDoNotReRunIt(kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let writer = try seeded(kind, in: directory)
        let runs = Locked(0)
        var values = writer.observe(countingFetch(runs)).makeAsyncIterator()
        #expect(try await values.next() == 3)
        try await writer.write { db in try db.execute(sql: "INSERT INTO other(note) VALUES ('x')") }
        try await writer.inTransaction { db in
            try db.execute(sql: "INSERT INTO player(name, score) VALUES ('undone', 1)")
            return .rollback
        }
        _ = try? await writer.write { db in
            try db.execute(sql: "DELETE FROM player")
            throw CancellationError()
        }
        try await writer.inDatabase { db in try db.execute(sql: "UPDATE other SET note = 'y'") }
        #expect(!values.run.isMarkedChanged)
        try insertPlayer(writer)
        #expect(values.run.isMarkedChanged)
        #expect(try await values.next() == 4)
        #expect(runs.withLock { $0 } == 2)
    }

    @Test(arguments: WriterKind.allCases)
    func aSchemaChangeReRunsIt(kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let writer = try seeded(kind, in: directory)
        var values = writer.observe { db in try db.fetchOne(Int.self, sql: Self.count) }.makeAsyncIterator()
        _ = try await values.next()
        try await writer.inDatabase { db in try db.execute(sql: "CREATE INDEX other_note ON other(note)") }
        #expect(values.run.isMarkedChanged)
        _ = try await values.next()
        try await writer.inDatabase { db in try db.execute(sql: "ALTER TABLE other ADD COLUMN extra TEXT") }
        #expect(values.run.isMarkedChanged)
    }

    @Test(arguments: WriterKind.allCases)
    func changesTheUpdateHookMissesStillReRunIt(kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let writer = try seeded(kind, in: directory)
        try await writer.write { db in
            try db.execute(sql: "CREATE TABLE tag(name TEXT PRIMARY KEY, uses INTEGER) WITHOUT ROWID")
        }
        var counts = writer.observe { db in try db.fetchOne(Int.self, sql: Self.count) }.makeAsyncIterator()
        var tags = writer.observe { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM tag") }
            .makeAsyncIterator()
        #expect(try await counts.next() == 3)
        #expect(try await tags.next() == 0)
        // The truncate optimization deletes every row without a word to the update hook.
        try await writer.write { db in try db.execute(sql: "DELETE FROM player") }
        #expect(counts.run.isMarkedChanged)
        #expect(try await counts.next() == 0)
        // WITHOUT ROWID tables are not reported by the update hook either.
        try await writer.write { db in try db.execute(sql: "INSERT INTO tag VALUES ('é', 1)") }
        #expect(tags.run.isMarkedChanged)
        #expect(try await tags.next() == 1)
    }

    @Test(arguments: WriterKind.allCases)
    func aViewIsObservedThroughItsTablesWhateverTheirCase(kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let writer = try seeded(kind, in: directory)
        try await writer.write { db in
            try db.execute(sql: "CREATE VIEW \"Top Players\" AS SELECT name FROM PLAYER WHERE score > 1")
        }
        var values = writer.observe { db in
            try db.fetchAll(String.self, sql: "SELECT name FROM \"Top Players\" ORDER BY name")
        }.makeAsyncIterator()
        #expect(try await values.next() == ["player-2", "player-3"])
        try await writer.write { db in try db.execute(sql: "UPDATE Player SET score = 0 WHERE id = 3") }
        #expect(values.run.isMarkedChanged)
        #expect(try await values.next() == ["player-2"])
    }

    @Test(arguments: WriterKind.allCases)
    func aSlowConsumerSkipsStatesButGetsTheLastCommit(kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let writer = try seeded(kind, in: directory)
        let runs = Locked(0)
        var values = writer.observe(countingFetch(runs)).makeAsyncIterator()
        #expect(try await values.next() == 3)
        for _ in 0..<50 { try insertPlayer(writer) }
        #expect(try await values.next() == 53)
        #expect(runs.withLock { $0 } == 2)
        #expect(!values.run.isMarkedChanged)
    }

    @Test(arguments: WriterKind.allCases)
    func removeDuplicatesSkipsAnEqualValue(kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let writer = try seeded(kind, in: directory)
        let runs = Locked(0)
        let observation = writer.observe { db in
            runs.withLock { $0 += 1 }
            return try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player WHERE score > 100") ?? -1
        }.removeDuplicates()
        var values = observation.makeAsyncIterator()
        #expect(try await values.next() == 0)
        try insertPlayer(writer, score: 5)  // changes the table, not the value
        let next = Task { [values] in
            var values = values
            return try await values.next()
        }
        try await waitUntil { runs.withLock { $0 } == 2 }  // the equal value was fetched, and skipped
        try insertPlayer(writer, score: 500)
        #expect(try await next.value == 1)
    }

    @Test(arguments: WriterKind.allCases)
    func aFetchErrorEndsTheSequenceWithIt(kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let writer = try seeded(kind, in: directory)
        var values = writer.observe { db in try db.fetchOne(Int.self, sql: Self.count) }.makeAsyncIterator()
        _ = try await values.next()
        try await writer.inDatabase { db in try db.execute(sql: "DROP TABLE player") }
        await #expect(throws: DatabaseError.self) { try await values.next() }
        #expect(try await values.next() == nil)
        #expect(hub(writer).counts(table: "player").registered == 0)
        #expect(try !hasHooks(writer))
    }

    @Test(arguments: WriterKind.allCases)
    func closingTheWriterEndsTheSequenceWithClosed(kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let writer = try seeded(kind, in: directory)
        var values = writer.observe { db in try db.fetchOne(Int.self, sql: Self.count) }.makeAsyncIterator()
        _ = try await values.next()
        try await writer.close()
        let error = await #expect(throws: SerialDBError.self) { try await values.next() }
        #expect(error?.code == .closed)
    }

    @Test(arguments: WriterKind.allCases)
    func leavingTheLoopRemovesTheHooks(kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let writer = try seeded(kind, in: directory)
        for try await count in writer.observe({ db in try db.fetchOne(Int.self, sql: Self.count) }) {
            #expect(count == 3)
            #expect(try hasHooks(writer))
            break
        }
        #expect(hub(writer).counts(table: "player").registered == 0)
        #expect(try !hasHooks(writer))
        // A write after the observation is gone costs no hook.
        try insertPlayer(writer)
    }
}
