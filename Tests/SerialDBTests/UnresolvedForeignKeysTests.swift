import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// `Database.hasUnresolvedForeignKeys`: what a COMMIT would refuse, known before it runs.
@Suite struct UnresolvedForeignKeysTests {
    @Test func aDeferredViolationIsReportedUntilResolved() throws {
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.path("fk.sqlite"))
        defer { try? queue.close() }
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE parent(id TEXT PRIMARY KEY)")
            try db.execute(sql: "CREATE TABLE child(id INTEGER PRIMARY KEY, parent_id TEXT REFERENCES parent(id))")
        }
        let states = try queue.write { db in
            try db.execute(sql: "PRAGMA defer_foreign_keys = ON")
            var states = [db.hasUnresolvedForeignKeys]
            try db.execute(sql: "INSERT INTO child VALUES (1, ?)", arguments: ["p\u{0}ü"])
            states.append(db.hasUnresolvedForeignKeys)
            try db.execute(sql: "INSERT INTO parent VALUES (?)", arguments: ["p\u{0}ü"])
            states.append(db.hasUnresolvedForeignKeys)
            try db.execute(sql: "DELETE FROM parent")
            states.append(db.hasUnresolvedForeignKeys)
            try db.execute(sql: "DELETE FROM child")
            states.append(db.hasUnresolvedForeignKeys)
            return states
        }
        #expect(states == [false, true, false, true, false])
    }
}
