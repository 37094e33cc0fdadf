import Foundation
import SerialDB

/// A row's primary key in one text form that handles every type, BLOB included: SQLite's
/// `quote()` of each key column, joined by commas (`'a1'`, `12,X'00FF'`, `NULL`).
///
/// The outbox triggers compute it in SQL from `NEW`/`OLD`; Swift computes it through the same
/// `quote()` (``make(_:values:)``), so both sides agree byte for byte. Side tables are keyed
/// by (table, canonical key). See <https://www.sqlite.org/lang_corefunc.html#quote>.
enum CanonicalKey {
    /// The canonical key of `values`, computed by SQLite.
    static func make(_ db: Database, values: [DatabaseValue]) throws -> String {
        let sql = "SELECT " + Array(repeating: "quote(?)", count: values.count).joined(separator: " || ',' || ")
        guard let key = try db.fetchOne(String.self, sql: sql, arguments: StatementArguments(values)) else {
            throw SyncError(.unsupportedTable, "A primary key could not be put in canonical form.")
        }
        return key
    }

    /// The SQL expression of the canonical key of a row, for triggers and queries:
    /// `quote(NEW."a") || ',' || quote(NEW."b")` with `prefix` `"NEW."`.
    static func expression(columns: [String], prefix: String = "") -> String {
        columns.map { "quote(\(prefix)\($0.quotedDatabaseIdentifier))" }.joined(separator: " || ',' || ")
    }

    /// The values of a canonical key, or `nil` when `text` is not one. Reads unicode scalars,
    /// not characters, so that a quote followed by a combining mark is still a quote.
    static func parse(_ text: String) -> [DatabaseValue]? {
        let scalars = Array(text.unicodeScalars)
        var values: [DatabaseValue] = []
        var index = 0
        while true {
            if index < scalars.count && scalars[index] == "'" {
                // Text: quotes inside are doubled.
                var value = String.UnicodeScalarView()
                index += 1
                var closed = false
                while index < scalars.count {
                    let scalar = scalars[index]
                    index += 1
                    if scalar != "'" {
                        value.append(scalar)
                    } else if index < scalars.count && scalars[index] == "'" {
                        value.append(scalar)
                        index += 1
                    } else {
                        closed = true
                        break
                    }
                }
                guard closed else { return nil }
                values.append(.text(String(value)))
            } else if index + 1 < scalars.count && scalars[index] == "X" && scalars[index + 1] == "'" {
                guard let end = scalars[(index + 2)...].firstIndex(of: "'"),
                    let data = Self.data(hex: String(String.UnicodeScalarView(scalars[(index + 2)..<end])))
                else { return nil }
                values.append(.blob(data))
                index = end + 1
            } else {
                let end = scalars[index...].firstIndex(of: ",") ?? scalars.count
                let token = String(String.UnicodeScalarView(scalars[index..<end]))
                if token == "NULL" {
                    values.append(.null)
                } else if let integer = Int64(token) {
                    values.append(.integer(integer))
                } else if let real = Double(token) {
                    values.append(.real(real))
                } else {
                    return nil
                }
                index = end
            }
            if index == scalars.count { return values }
            guard scalars[index] == "," else { return nil }
            index += 1
        }
    }

    private static func data(hex: String) -> Data? {
        let hex = Array(hex.utf8)
        guard hex.count % 2 == 0 else { return nil }
        var data = Data(capacity: hex.count / 2)
        for index in stride(from: 0, to: hex.count, by: 2) {
            guard let byte = UInt8(String(decoding: hex[index..<(index + 2)], as: UTF8.self), radix: 16) else {
                return nil
            }
            data.append(byte)
        }
        return data
    }
}
