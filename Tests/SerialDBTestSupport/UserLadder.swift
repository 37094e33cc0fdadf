import Foundation
import SerialDB

/// The classic hand-grown version ladder of a mobile app, as SerialDB steps: a `T_User` table
/// at step 1, a column added at step 2, a `NOT NULL DEFAULT '111111'` column at step 3 (the
/// trap: on a table with rows, ADD COLUMN NOT NULL needs a default).
public enum UserLadder {
    /// The step identifiers, in order.
    public static let identifiers = ["1-create-user", "2-add-email", "3-add-pin"]

    /// The SQL of each step, so tests can build a database "by hand" at any step.
    public static let stepSQL = [
        "CREATE TABLE T_User(id INTEGER PRIMARY KEY, name TEXT NOT NULL)",
        "ALTER TABLE T_User ADD COLUMN email TEXT",
        "ALTER TABLE T_User ADD COLUMN pin TEXT NOT NULL DEFAULT '111111'",
    ]

    /// A migrator with the first `count` steps; each step can be slowed down for tests that
    /// need an upgrade long enough to submit work during it.
    public static func migrator(steps count: Int = 3, delayPerStep: Double = 0) -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for index in 0..<count {
            let sql = stepSQL[index]
            migrator.registerMigration(identifiers[index]) { db in
                if delayPerStep > 0 { sleepSeconds(delayPerStep) }
                try db.execute(sql: sql)
            }
        }
        return migrator
    }

    /// Inserts `count` users, filling the columns that exist at the database's current step.
    public static func insertUsers(_ db: Database, count: Int, firstID: Int = 1) throws {
        let columns = try db.fetchAll(String.self, sql: "SELECT name FROM pragma_table_info('T_User')")
        for id in firstID..<(firstID + count) {
            if columns.contains("email") {
                try db.execute(
                    sql: "INSERT INTO T_User(id, name, email) VALUES (?, ?, ?)",
                    arguments: [id, "user-\(id)", "user\(id)@example.org"])
            } else {
                try db.execute(sql: "INSERT INTO T_User(id, name) VALUES (?, ?)", arguments: [id, "user-\(id)"])
            }
        }
    }
}

/// Sleeps the calling thread; used to make steps deliberately slow.
public func sleepSeconds(_ seconds: Double) {
    Thread.sleep(forTimeInterval: seconds)
}
