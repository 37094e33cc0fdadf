import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// The queue and the pool through the one surface they share: the same generic code runs on both.
@Suite struct DatabaseWriterTests {
    /// Generic over the writer, as an app's data layer is.
    private func addPlayers(_ names: [String], to writer: some DatabaseWriter) throws {
        try writer.write { db in
            for name in names {
                try db.execute(sql: "INSERT INTO player(name, score) VALUES (?, 0)", arguments: [name])
            }
        }
    }

    private func names(in reader: some DatabaseReader) throws -> [String] {
        try reader.read { db in try db.fetchAll(String.self, sql: "SELECT name FROM player ORDER BY id") }
    }

    private static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in try Player.createTable(db) }
        return migrator
    }()

    @Test(arguments: WriterKind.allCases)
    func genericCodeWritesAndReadsOnBoth(kind: WriterKind) throws {
        let directory = try TemporaryDirectory()
        let writer = try kind.make(in: directory)
        try writer.migrate(Self.migrator)
        try addPlayers(["Ann", "Bo", "Çé"], to: writer)
        #expect(try names(in: writer) == ["Ann", "Bo", "Çé"])
        let count = try writer.inDatabase { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") }
        #expect(count == 3)
    }

    @Test(arguments: WriterKind.allCases)
    func aSavepointRolledBackLeavesNoTraceAndOneCommittedStays(kind: WriterKind) throws {
        let directory = try TemporaryDirectory()
        let writer = try kind.make(in: directory)
        try writer.migrate(Self.migrator)
        try writer.inSavepoint { db in
            try db.execute(sql: "INSERT INTO player(name, score) VALUES ('kept', 1)")
            return .commit
        }
        try writer.inSavepoint { db in
            try db.execute(sql: "INSERT INTO player(name, score) VALUES ('undone', 1)")
            return .rollback
        }
        #expect(try names(in: writer) == ["kept"])
    }

    @Test(arguments: WriterKind.allCases)
    func asyncTwinsRunOnBoth(kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let writer = try kind.make(in: directory)
        try await writer.migrate(Self.migrator)
        try await writer.inSavepoint { db in
            try db.execute(sql: "INSERT INTO player(name, score) VALUES ('a', 1)")
            return .commit
        }
        try await writer.inTransaction(.immediate) { db in
            try db.execute(sql: "INSERT INTO player(name, score) VALUES ('b', 2)")
            return .commit
        }
        try await writer.write { db in try db.execute(sql: "INSERT INTO player(name, score) VALUES ('c', 3)") }
        let total = try await writer.read { db in try db.fetchOne(Int.self, sql: "SELECT sum(score) FROM player") }
        #expect(total == 6)
        try await writer.close()
        #expect(throws: SerialDBError.self) { try writer.read { _ in () } }
    }

    @Test func aPoolBacksUpWhileItsReadersRead() throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.path("pool.sqlite"))
        try pool.write { db in try Player.createTable(db, rows: 2_000) }
        let copy = directory.path("copy.sqlite")
        var steps = 0
        try pool.backup(to: copy, pagesPerStep: 4) { _ in
            steps += 1
            // A read between steps runs on a reader, beside the copy.
            #expect((try? pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") }) == 2_000)
        }
        #expect(steps > 1)
        let restored = try DatabaseQueue(path: copy)
        let sum = try restored.read { db in try db.fetchOne(Int.self, sql: "SELECT sum(score) FROM player") }
        #expect(sum == 2_001_000)
    }

    @Test func aPoolBackupFromInsideAReadIsRefused() throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.path("pool.sqlite"))
        try pool.write { db in try Player.createTable(db, rows: 1) }
        let error = #expect(throws: SerialDBError.self) {
            try pool.read { _ in try pool.backup(to: directory.path("copy.sqlite")) }
        }
        #expect(error?.code == .reentrantCall)
        #expect(!FileManager.default.fileExists(atPath: directory.path("copy.sqlite")))
    }
}
