import Foundation
import SerialDBTestSupport
import Testing

@testable import SerialDB

/// The commit path that skips the observations' lock: a commit to a table no observation reads
/// costs no lock, and what makes that safe. Each test first writes the tables it will later
/// need seen, so that the connection side has them cached as "not observed", then checks that
/// the cache never hides a commit that matters.
@Suite(.timeLimit(.minutes(5))) struct ObservationCommitPathTests {
    private func count(_ table: String) -> @Sendable (Database) throws -> Int {
        { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM \(table.quotedDatabaseIdentifier)") ?? -1 }
    }

    private func insert(into table: String, _ writer: some DatabaseWriter) async throws {
        try await writer.write { db in
            try db.execute(sql: "INSERT INTO \(table.quotedDatabaseIdentifier)(v) VALUES (1)")
        }
    }

    /// A table committed while unobserved, then observed: its next commit re-runs the new
    /// observation (the cached "not observed" belongs to an older version of the observations).
    @Test(arguments: WriterKind.allCases)
    func aTableCommittedBeforeItWasObservedIsSeenOnceItIs(kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let writer = try kind.make(in: directory)
        try await writer.write { db in
            try db.execute(sql: "CREATE TABLE watched(id INTEGER PRIMARY KEY, v INTEGER)")
            try db.execute(sql: "CREATE TABLE later(id INTEGER PRIMARY KEY, v INTEGER)")
        }
        var first = writer.observe(count("watched")).makeAsyncIterator()
        #expect(try await first.next() == 0)
        // Twice: the second commit takes the path without the lock.
        try await insert(into: "later", writer)
        try await insert(into: "later", writer)
        #expect(!first.run.isMarkedChanged)

        var second = writer.observe(count("later")).makeAsyncIterator()
        #expect(try await second.next() == 2)
        try await insert(into: "later", writer)
        // Required, not expected: a next() with no change marked would wait for the time limit.
        try #require(second.run.isMarkedChanged)
        #expect(try await second.next() == 3)
        try await insert(into: "later", writer)
        try #require(second.run.isMarkedChanged)
        #expect(!first.run.isMarkedChanged)
        #expect(try await second.next() == 4)
    }

    /// Another connection drops and recreates every table, in a new order each round, so the
    /// writer reloads its schema and SQLite hands the hooks new name pointers, some at the
    /// addresses the old names had: a table is still told apart by its name, never by a pointer
    /// the cache remembered.
    @Test(arguments: WriterKind.allCases)
    func tablesRecreatedByAnotherConnectionAreKnownByName(kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        var configuration = Configuration()
        configuration.journalMode = .wal
        let writer = try kind.make(in: directory, configuration: configuration)
        let tables = (0..<12).map { "t\($0)" }
        let createAll = Self.createSQL(tables)
        try await writer.write { db in try db.execute(sql: createAll) }
        let other = try DatabaseQueue(path: directory.path("writer.sqlite"), configuration: configuration)
        var values = writer.observe(count("t0")).makeAsyncIterator()
        #expect(try await values.next() == 0)
        for round in 1...48 {
            for table in tables.dropFirst() {
                try await insert(into: table, writer)
                try await insert(into: table, writer)
            }
            #expect(!values.run.isMarkedChanged, "round \(round)")
            let order = Array(tables[(round % 12)...] + tables[..<(round % 12)]).reversed()
            let recreate = tables.map { "DROP TABLE \($0);" }.joined() + Self.createSQL(Array(order))
            try await other.inDatabase { db in try db.execute(sql: recreate) }
            try await insert(into: "t0", writer)
            try #require(values.run.isMarkedChanged, "round \(round): a commit to t0 after the schema reload")
            #expect(try await values.next() == 1, "round \(round)")
        }
        try await other.close()
    }

    private static func createSQL(_ tables: [String]) -> String {
        tables.map { "CREATE TABLE \($0)(id INTEGER PRIMARY KEY, v INTEGER);" }.joined()
    }
}
