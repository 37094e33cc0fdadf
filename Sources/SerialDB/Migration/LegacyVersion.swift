import Foundation

/// Where a database that predates SerialDB kept its schema version, so that
/// ``DatabaseMigrator/adoptLegacyVersion(_:)`` can take it over without re-running old steps.
///
/// Each source tells how many of the registered steps the database already has.
public enum LegacyVersion: Sendable {
    /// `PRAGMA user_version`. See <https://www.sqlite.org/pragma.html#pragma_user_version>.
    case userVersion
    /// A number in a one-row table, such as `t_info(version)`: an integer, or numeric text
    /// (`'2'`, `'2.0'`), as apps that stored a version string wrote it. A missing table, an
    /// empty one or NULL count as version 0 (a fresh database).
    case table(String, column: String)
    /// Your own reading, for a ladder that `.table` cannot express: it returns how many of the
    /// registered steps the database already has (0 for a fresh database).
    ///
    /// ```swift
    /// // t_info.version holds the NEXT case of the old switch: '3.0' means cases 1 and 2 ran.
    /// migrator.adoptLegacyVersion(.custom { db in
    ///     guard try db.tableExists("t_info") else { return 0 }
    ///     let marker = try db.fetchOne(String.self, sql: "SELECT version FROM t_info") ?? "1.0"
    ///     return max(0, Int(Double(marker) ?? 1) - 1)
    /// })
    /// ```
    case custom(@Sendable (Database) throws -> Int)
}

extension LegacyVersion {
    /// The step count a `.table` marker stands for.
    ///
    /// - Throws: ``SerialDBError/Code/decodingFailed`` for a value that is not a whole number.
    static func stepCount(_ marker: DatabaseValue, table: String, column: String) throws -> Int {
        switch marker {
        case .null:
            return 0
        case .integer(let value):
            if let count = Int(exactly: value) { return count }
        case .real(let value):
            if let count = Int(exactly: value) { return count }
        case .text(let text):
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if let count = Int(trimmed) { return count }
            if let number = Double(trimmed), let count = Int(exactly: number) { return count }
        case .blob:
            break
        }
        throw SerialDBError(
            .decodingFailed,
            "The version marker \(table).\(column) holds \(marker), which is not a whole number of steps. "
                + "Nothing was changed. Use LegacyVersion.custom to read it your own way.")
    }
}
