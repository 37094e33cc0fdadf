import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

@Suite struct DatabaseBackupTests {
    private func seededQueue(_ kind: DatabaseKind, in directory: TemporaryDirectory, rows: Int) throws -> DatabaseQueue
    {
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE item(id INTEGER PRIMARY KEY, label TEXT NOT NULL, payload BLOB)")
            try db.execute(sql: "CREATE INDEX item_label ON item(label)")
            for id in 1...rows {
                try db.execute(
                    sql: "INSERT INTO item(id, label, payload) VALUES (?, ?, randomblob(200))",
                    arguments: [id, "item \(id)"])
            }
        }
        return queue
    }

    private func contents(of path: String) throws -> [String] {
        let copy = try DatabaseQueue(path: path)
        return try copy.read { db in
            try db.fetchAll(String.self, sql: "SELECT id || ':' || label || ':' || hex(payload) FROM item ORDER BY id")
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aBackupHoldsEveryRowAndPassesTheIntegrityCheck(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try seededQueue(kind, in: directory, rows: 2_000)
        let reports = Locked<[BackupProgress]>([])
        let path = directory.path("backup.sqlite")
        try queue.backup(to: path, pagesPerStep: 16) { progress in reports.withLock { $0.append(progress) } }

        let original = try queue.read { db in
            try db.fetchAll(String.self, sql: "SELECT id || ':' || label || ':' || hex(payload) FROM item ORDER BY id")
        }
        #expect(original.count == 2_000)
        #expect(try contents(of: path) == original)
        let progress = reports.withLock { $0 }
        #expect(progress.count > 1, "16 pages a step over ~120 pages takes several steps")
        #expect(progress.last.map { $0.copiedPages == $0.totalPages } == true)
        #expect(zip(progress, progress.dropFirst()).allSatisfy { $0.copiedPages <= $1.copiedPages }, "\(progress)")
    }

    @Test func writesBetweenStepsRunAndLandInTheCopy() throws {
        let directory = try TemporaryDirectory()
        let queue = try seededQueue(.file, in: directory, rows: 2_000)
        let path = directory.path("backup.sqlite")
        var written = 0
        // Between steps the queue serves other work: a write through it is carried into the copy.
        try queue.backup(to: path, pagesPerStep: 8) { _ in
            written += 1
            try? queue.write { db in
                try db.execute(
                    sql: "INSERT INTO item(id, label, payload) VALUES (?, 'during backup', x'00')",
                    arguments: [10_000 + written])
            }
        }
        #expect(written > 1)
        let copied = try DatabaseQueue(path: path).read { db in
            try db.fetchOne(Int.self, sql: "SELECT count(*) FROM item WHERE label = 'during backup'")
        }
        // The last report comes after the copy completed, so its write is not in the copy.
        #expect(copied == written - 1)
        #expect(
            try DatabaseQueue(path: path).read { db in try db.fetchOne(String.self, sql: "PRAGMA integrity_check") }
                == "ok")
    }

    @Test func anExistingFileIsRefusedAndLeftUntouchedUnlessOverwritingIsAsked() throws {
        let directory = try TemporaryDirectory()
        let queue = try seededQueue(.file, in: directory, rows: 10)
        let path = directory.path("existing.sqlite")
        let existing = Data("precious".utf8)
        try existing.write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: SerialDBError.self) { try queue.backup(to: path) }
        #expect(error?.code == .invalidArguments)
        #expect(error?.message.contains("overwriting: true") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == existing)

        let older = directory.path("older-backup.sqlite")
        try queue.backup(to: older)
        try queue.write { db in try db.execute(sql: "DELETE FROM item WHERE id > 5") }
        try queue.backup(to: older, overwriting: true)
        #expect(try contents(of: older).count == 5)
    }

    @Test func aBackupIntoADirectoryThatDoesNotExistFailsAndLeavesNothing() throws {
        let directory = try TemporaryDirectory()
        let queue = try seededQueue(.memory, in: directory, rows: 10)
        let path = directory.path("missing/backup.sqlite")
        #expect(throws: DatabaseError.self) { try queue.backup(to: path) }
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM item") } == 10)
    }

    @Test func aBackupFromInsideABlockOfTheSameQueueThrowsInsteadOfDeadlocking() throws {
        let directory = try TemporaryDirectory()
        let queue = try seededQueue(.memory, in: directory, rows: 1)
        let error = #expect(throws: SerialDBError.self) {
            try queue.inDatabase { _ in try queue.backup(to: directory.path("b.sqlite")) }
        }
        #expect(error?.code == .reentrantCall)
    }
}
