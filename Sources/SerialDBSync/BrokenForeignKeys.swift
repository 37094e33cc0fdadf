import SerialDB

/// Rows from the server written in one transaction with `PRAGMA defer_foreign_keys = ON` (a
/// page may hold children before their parents) are checked before that transaction commits,
/// so that a violation is told as what it is, with the rows and what to do, instead of as
/// the COMMIT's bare "FOREIGN KEY constraint failed".
enum BrokenForeignKeys {
    /// The most violations a message names.
    static let named = 5

    /// Throws ``SyncError/Code/brokenForeignKey`` when the transaction holds a foreign-key
    /// violation; `what` says what was being written (``"a downloaded page of `note`"``).
    static func check(_ db: Database, writing what: String) throws {
        guard db.hasUnresolvedForeignKeys else { return }
        let rows = try db.fetchAll(
            Row.self, sql: "SELECT \"table\", rowid, parent FROM pragma_foreign_key_check LIMIT ?",
            arguments: [named + 1])
        var violations: [String] = []
        for row in rows.prefix(named) {
            let child = try row.decode(String.self, at: 0)
            let rowid = try row.decode(Int64?.self, at: 1)
            let parent = try row.decode(String.self, at: 2)
            let which = rowid.map { "the row with rowid \($0)" } ?? "a row"
            violations.append(
                "\(which) of \(child.quotedDatabaseIdentifier) refers to a row of \(parent.quotedDatabaseIdentifier) that is gone"
            )
        }
        let more = rows.count > named ? ", and more" : ""
        throw SyncError(
            .brokenForeignKey,
            "Could not apply \(what): it breaks foreign keys of this database: \(violations.joined(separator: "; "))\(more). "
                + "Nothing of it was applied, and the next sync tries again. A local row that refers to a synced row "
                + "the server deleted must be deleted or changed, or its foreign key declared ON DELETE CASCADE or "
                + "SET NULL; a synced row whose parent the server does not have must be fixed on the server.")
    }
}
