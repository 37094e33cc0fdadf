/// The swap's proof that a prepared copy holds exactly the live table's rows, so that a copy the
/// mirroring got wrong is never swapped in: the same keys, and in every copied column the same
/// value, checked in one pass over the table under the gate.
extension OnlineTableCopy {
    /// What one comparison of the shadow with the live table found.
    struct Comparison: Sendable {
        var liveRows: Int
        var copyRows: Int
        /// Live rows the copy holds under the same key with the same value in every copied column.
        var alike: Int

        /// Keys are unique in both tables, so equal counts mean the same rows, value for value.
        var isExact: Bool { alike == liveRows && alike == copyRows }
    }

    /// Counts the rows of both tables and the live rows the copy holds alike. Values are
    /// compared with `IS` (NULL is NULL; an integer and the same real are alike, as SQLite
    /// compares them) and text byte for byte, whatever the columns' collations.
    func compare(_ db: Database) throws -> Comparison {
        let row = try db.fetchOne(
            Row.self,
            sql: "SELECT (SELECT count(*) FROM \(liveName)), (SELECT count(*) FROM \(shadowName)), "
                + "(SELECT count(*) FROM \(liveName) JOIN \(shadowName) ON \(matches(liveName)) WHERE \(alikeValues))")
        return Comparison(
            liveRows: try row?.decode(Int.self, at: 0) ?? 0, copyRows: try row?.decode(Int.self, at: 1) ?? 0,
            alike: try row?.decode(Int.self, at: 2) ?? 0)
    }

    /// The shadow row joined to a live row holds the same value in every copied column.
    private var alikeValues: String {
        copied.map {
            "\(shadowName).\($0.target.quotedDatabaseIdentifier) IS \(liveName).\($0.source.quotedDatabaseIdentifier) "
                + "COLLATE BINARY"
        }.joined(separator: " AND ")
    }

    /// Up to `limit` keys of rows only the copy holds: rows deleted from the live table by a
    /// write the triggers do not see (an INSERT OR REPLACE deleting another row through a
    /// UNIQUE conflict, with `recursive_triggers` off), or a mirroring bug.
    func rowsOnlyInCopy(_ db: Database, limit: Int = 5) throws -> [String] {
        try describedKeys(
            db,
            sql:
                "SELECT \(match.map { "\(shadowName).\($0.target.quotedDatabaseIdentifier)" }.joined(separator: ", ")) "
                + "FROM \(shadowName) WHERE NOT EXISTS (SELECT 1 FROM \(liveName) WHERE \(matches(liveName))) "
                + "LIMIT ?", limit: limit)
    }

    /// Up to `limit` keys of live rows the copy lacks, or holds with other values.
    func rowsDifferingInCopy(_ db: Database, limit: Int = 5) throws -> [String] {
        let key = chunkKey.map { "\(liveName).\($0.quotedDatabaseIdentifier)" }.joined(separator: ", ")
        return try describedKeys(
            db,
            sql: "SELECT \(key) FROM \(liveName) WHERE NOT EXISTS (SELECT 1 FROM \(shadowName) WHERE "
                + "\(matches(liveName)) AND \(alikeValues)) ORDER BY \(key) LIMIT ?", limit: limit)
    }

    /// Why the copy does not hold exactly the live table's rows, naming rows of each kind.
    func mismatch(_ comparison: Comparison, onlyInCopy: [String], _ db: Database) throws -> OnlineCopyMismatch {
        let differing = try rowsDifferingInCopy(db)
        var reason =
            "the copy of \(sourceTable.quotedDatabaseIdentifier) does not hold exactly its rows: the table has "
            + "\(comparison.liveRows) rows, the copy \(comparison.copyRows), \(comparison.alike) of them alike in "
            + "key and values"
        if !differing.isEmpty {
            reason +=
                "; rows (by \(keyDescription)) missing from the copy or different there: "
                + differing.joined(separator: "; ")
        }
        if !onlyInCopy.isEmpty {
            reason += "; rows only in the copy: " + onlyInCopy.joined(separator: "; ")
        }
        return OnlineCopyMismatch(table: sourceTable, reason: reason)
    }

    private func describedKeys(_ db: Database, sql: String, limit: Int) throws -> [String] {
        try db.fetchAll(Row.self, sql: sql, arguments: [limit]).map { row in
            try (0..<row.count).map { "\(try row.decode(DatabaseValue.self, at: $0))" }.joined(separator: ", ")
        }
    }
}

/// A prepared copy the swap found not to hold exactly the live table's rows. The step's
/// transaction rolls back, and the migrator runs the step again without the copy, as if
/// nothing had been prepared; the reason reaches the caller in
/// ``MigrationProgress/preparedCopy``.
struct OnlineCopyMismatch: Error, Sendable {
    var table: String
    var reason: String
}
