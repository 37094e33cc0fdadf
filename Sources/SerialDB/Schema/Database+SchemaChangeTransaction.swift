extension Database {
    /// Runs `block` the way SQLite requires for schema changes that rebuild tables: foreign
    /// keys off before BEGIN IMMEDIATE (the pragma does nothing inside a transaction),
    /// `PRAGMA foreign_key_check` before COMMIT, foreign keys restored afterwards whatever
    /// happened. Violations roll everything back and are reported by table and row.
    /// See <https://www.sqlite.org/lang_altertable.html#otheralter> (steps 1, 2, 10, 11, 12).
    ///
    /// The block must not begin, commit or roll back a transaction itself: such a statement
    /// is refused before it runs (use `inSavepoint` to nest), and the whole block rolls back.
    ///
    /// - Throws: the block's error, ``SerialDBError/Code/foreignKeyViolation``, or
    ///   ``SerialDBError/Code/invalidMigrator`` for a BEGIN, COMMIT, END or ROLLBACK in the block.
    public func inSchemaChangeTransaction(_ block: (Database) throws -> Void) throws {
        try inSchemaChangeTransaction(named: "The schema change", block)
    }

    /// ``inSchemaChangeTransaction(_:)``, naming the block in its errors ("Migration \"v2\"").
    /// `vouchedTables` (folded names) are left out of the foreign key checks: an online copy
    /// checked each of their rows' references as it copied and mirrored them.
    func inSchemaChangeTransaction(
        named name: String, vouchedTables: Set<String> = [], _ block: (Database) throws -> Void
    ) throws {
        guard !isInsideTransaction else {
            throw SerialDBError(
                .invalidArguments,
                "A schema change transaction cannot start inside another transaction (foreign keys cannot be "
                    + "turned off there). Run it outside any transaction.")
        }
        let foreignKeysWereOn = try fetchOne(Bool.self, sql: "PRAGMA foreign_keys") ?? false
        if foreignKeysWereOn {
            try execute(sql: "PRAGMA foreign_keys = OFF")
        }
        let outcome = Result<Void, any Error> {
            try inTransaction(.immediate) { db in
                // Broken references that predate the change are not the change's doing: only
                // the ones it introduces roll it back.
                let predating = try db.foreignKeyViolations(excluding: vouchedTables)
                try db.refusingTransactionControl(in: name) { try block(db) }
                // SQLite may still have ended it by itself (ON CONFLICT ROLLBACK, an interrupt).
                guard db.isInsideTransaction else { throw db.transactionEndedError(refusing: nil) }
                try db.checkForeignKeys(ignoring: predating, excluding: vouchedTables)
                return .commit
            }
        }
        if foreignKeysWereOn {
            do {
                try execute(sql: "PRAGMA foreign_keys = ON")
            } catch {
                // A connection left with foreign keys off must not pass silently; but when the
                // change itself failed, that failure is what the caller needs to see first.
                if case .success = outcome {
                    throw SerialDBError(
                        .foreignKeysNotRestored,
                        "The schema change committed, but foreign keys could not be turned back on; "
                            + "reopen the connection before writing.", underlying: error)
                }
            }
        }
        try outcome.get()
    }

    /// Throws ``SerialDBError/Code/foreignKeyViolation`` naming up to five violating rows.
    /// See <https://www.sqlite.org/pragma.html#pragma_foreign_key_check>.
    public func checkForeignKeys() throws {
        try checkForeignKeys(ignoring: [])
    }

    /// The broken references `PRAGMA foreign_key_check` reports, as "table/rowid/parent".
    /// Tables with a key SQLite cannot enforce ("foreign key mismatch") are left out, so a
    /// change that fixes such a key can run.
    func foreignKeyViolations(excluding vouched: Set<String> = []) throws -> Set<String> {
        let rows: [Row]
        do {
            rows = try foreignKeyCheckRows(excluding: vouched)
        } catch let error as DatabaseError where error.message.contains("foreign key mismatch") {
            var checkable: [Row] = []
            for table in try fetchAll(String.self, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
            where !vouched.contains(table.sqliteFolded) {
                do {
                    checkable += try fetchAll(
                        Row.self, sql: "SELECT * FROM pragma_foreign_key_check(?)", arguments: [table])
                } catch let error as DatabaseError where error.message.contains("foreign key mismatch") {}
            }
            rows = checkable
        }
        return Set(rows.map { row in "\(row[0])/\(row[1])/\(row[2])" })
    }

    /// Like ``checkForeignKeys()``, leaving out the violations listed in `predating`
    /// (from ``foreignKeyViolations()`` before a change); the message says how many predate it.
    func checkForeignKeys(ignoring predating: Set<String>, excluding vouched: Set<String> = []) throws {
        let all: [Row]
        do {
            all = try foreignKeyCheckRows(excluding: vouched)
        } catch let error as DatabaseError where error.message.contains("foreign key mismatch") {
            throw SerialDBError(
                .schemaChangeRefused,
                "The changed schema has a foreign key SQLite cannot enforce (its parent columns are neither the "
                    + "parent's PRIMARY KEY nor UNIQUE), so the change was rolled back. Declare those parent "
                    + "columns UNIQUE, or point the key at columns that are.", underlying: error)
        }
        let violations = all.filter { row in
            !predating.contains("\(row[0])/\(row[1])/\(row[2])")
        }
        guard !violations.isEmpty else { return }
        let described = try violations.prefix(5).map { row -> String in
            let table: String = try row.decode(at: 0)
            let rowid: Int64? = try row.decode(at: 1)
            let parent: String = try row.decode(at: 2)
            return
                "row \(rowid.map(String.init) ?? "?") of \(table.quotedDatabaseIdentifier) refers to a missing row of "
                + parent.quotedDatabaseIdentifier
        }
        throw SerialDBError(
            .foreignKeyViolation,
            "\(violations.count) foreign key reference(s) are broken: " + described.joined(separator: "; ")
                + (violations.count > 5 ? "; ..." : "")
                + ". The change was rolled back; keep or fix the referencing rows."
                + (predating.isEmpty
                    ? "" : " (\(predating.count) other broken reference(s) predate the change and were left alone.)"))
    }

    /// `PRAGMA foreign_key_check`, over every table but the `vouched` ones (folded names).
    private func foreignKeyCheckRows(excluding vouched: Set<String>) throws -> [Row] {
        guard !vouched.isEmpty else { return try fetchAll(Row.self, sql: "PRAGMA foreign_key_check") }
        var rows: [Row] = []
        for table in try fetchAll(String.self, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
        where !vouched.contains(table.sqliteFolded) {
            rows += try fetchAll(Row.self, sql: "SELECT * FROM pragma_foreign_key_check(?)", arguments: [table])
        }
        return rows
    }
}
