import Foundation
import SerialDB
import SerialDBSyncWire

/// A UNIQUE constraint or index of a synced table. A device would refuse a second row with the
/// same values, so the store refuses it first, across all the rows of one owner: each row's
/// values are kept as one canonical text per constraint, compared as SQLite compares them.
struct SyncUniqueConstraint: Sendable {
    /// How a constraint column compares text, by its collation.
    enum Collation: Sendable {
        case binary
        /// `A`–`Z` equal `a`–`z`; nothing else folds.
        case nocase
        /// Trailing spaces are ignored.
        case rtrim

        init?(name: String) {
            switch name.asciiLowercased {
            case "binary": self = .binary
            case "nocase": self = .nocase
            case "rtrim": self = .rtrim
            default: return nil
            }
        }
    }

    /// Where the constraint is among its table's, so that two constraints never share a text.
    let position: Int
    /// Indexes into the table's columns, in the constraint's order.
    let columnIndexes: [Int]
    let collations: [Collation]
    /// `table.column, table.column`: what SQLite names in "UNIQUE constraint failed: ...".
    let label: String

    /// The row's canonical text for this constraint, or `nil` when a value is NULL (SQLite lets
    /// any number of rows hold NULL in a UNIQUE column).
    func value(of values: [DatabaseValue?]) -> String? {
        var text = JSONWriter(capacity: 32)
        text.raw("[")
        text.integer(Int64(position))
        for (index, collation) in zip(columnIndexes, collations) {
            guard let value = values[index], !value.isNull else { return nil }
            text.raw(",")
            text.value(Self.canonical(value, collation))
        }
        text.raw("]")
        return text.string
    }

    /// One text for values SQLite finds equal: a whole REAL is the INTEGER of that value
    /// (`1.0 = 1`), and text is folded by the collation.
    private static func canonical(_ value: DatabaseValue, _ collation: Collation) -> DatabaseValue {
        switch value {
        case .real(let double):
            if let integer = Int64(exactly: double) { return .integer(integer) }
            return value
        case .text(let text):
            switch collation {
            case .binary: return value
            case .nocase: return .text(text.asciiLowercased)
            case .rtrim:
                var trimmed = Substring(text)
                while trimmed.last == " " { trimmed.removeLast() }
                return .text(String(trimmed))
            }
        default:
            return value
        }
    }

    /// The UNIQUE constraints of `table` in the scratch database, checked for what the store
    /// can enforce.
    ///
    /// - Throws: ``SyncServerError/Code/invalidConfiguration`` for a primary key with a
    ///   collation other than BINARY, and for a UNIQUE index the store cannot compare (partial,
    ///   on an expression, on a generated column).
    static func declared(
        in db: Database, table: String, columns: [SyncColumn], keyColumnIndexes: [Int]
    ) throws -> [SyncUniqueConstraint] {
        let label = "table \(JSONWriter.quoted(table))"
        var constraints: [SyncUniqueConstraint] = []
        let indexes = try db.fetchAll(
            Row.self, sql: "SELECT name, \"unique\", origin, partial FROM pragma_index_list(?) ORDER BY name",
            arguments: [table])
        for index in indexes {
            let indexName: String = try index.decode(at: 0)
            let isUnique: Bool = try index.decode(at: 1)
            let origin: String = try index.decode(at: 2)
            let isPartial: Bool = try index.decode(at: 3)
            guard isUnique else { continue }
            let parts = try db.fetchAll(
                Row.self, sql: "SELECT cid, name, coll FROM pragma_index_xinfo(?) WHERE key ORDER BY seqno",
                arguments: [indexName])
            var columnIndexes: [Int] = []
            var collations: [Collation] = []
            for part in parts {
                let cid: Int64 = try part.decode(at: 0)
                let name: String? = try part.decode(at: 1)
                let collationName: String = try part.decode(at: 2)
                guard cid >= 0, let name, let column = columns.firstIndex(where: { $0.name == name }) else {
                    throw SyncServerError(
                        .invalidConfiguration,
                        "\(label) has a UNIQUE index on an expression or a generated column; the server cannot "
                            + "compare such values across an account's rows: declare it on plain columns, or drop it")
                }
                guard let collation = Collation(name: collationName) else {
                    throw SyncServerError(
                        .invalidConfiguration,
                        "\(label) compares column \(JSONWriter.quoted(name)) with collation \(collationName) in a "
                            + "UNIQUE index; the server knows BINARY, NOCASE and RTRIM only")
                }
                if origin == "pk" && collation != .binary {
                    throw SyncServerError(
                        .invalidConfiguration,
                        "\(label) declares its primary-key column \(JSONWriter.quoted(name)) COLLATE "
                            + "\(collationName); the server tells keys apart exactly, so keys that differ only in case "
                            + "or trailing spaces would be two rows on the server and one on a device. Remove the "
                            + "COLLATE from the key and store each key in one spelling (for example lowercased)")
                }
                columnIndexes.append(column)
                collations.append(collation)
            }
            if origin == "pk" { continue }
            if isPartial {
                throw SyncServerError(
                    .invalidConfiguration,
                    "\(label) has a partial UNIQUE index (CREATE UNIQUE INDEX ... WHERE); the server cannot "
                        + "enforce it across an account's rows: make it a full UNIQUE index, or drop it")
            }
            // The primary key already keeps these values apart.
            if columnIndexes == keyColumnIndexes && collations.allSatisfy({ $0 == .binary }) { continue }
            constraints.append(
                SyncUniqueConstraint(
                    position: constraints.count, columnIndexes: columnIndexes, collations: collations,
                    label: columnIndexes.map { "\(table).\(columns[$0].name)" }.joined(separator: ", ")))
        }
        return constraints
    }
}
