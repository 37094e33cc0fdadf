import Foundation
import SerialDB

/// A row's primary key in one text form that is exact for every value SQLite stores: each key
/// column as a type tag and its content, joined by commas.
///
/// - `N`: NULL
/// - `I-12`: an INTEGER in decimal
/// - `R2.5`: a REAL as SQLite's `quote()` writes it (it reads back as the same double)
/// - `T6B007A`: TEXT as the hex of its UTF-8 bytes, NUL bytes included (`'k'` is `T6B`,
///   `'k\0z'` is `T6B007A`)
/// - `B00FF`: a BLOB as the hex of its bytes
///
/// None of these contain a comma, so the columns split back apart. The outbox triggers compute
/// it in SQL from `NEW`/`OLD` (``expression(columns:prefix:)``); Swift computes it through the
/// same expression (``make(_:values:)``), so both sides agree byte for byte. Side tables are
/// keyed by (table, canonical key).
///
/// Databases synced before this form keyed their side tables by `quote()` alone, which stops
/// at a NUL byte; ``migrateLegacyKeys(_:)`` rewrites them once.
enum CanonicalKey {
    /// The canonical key of `values`, computed by SQLite. `sql` is ``selectSQL(count:)`` for
    /// `values.count`, for callers that compute many keys of one shape.
    static func make(_ db: Database, values: [DatabaseValue], sql: String? = nil) throws -> String {
        if let key = withoutSQL(values) { return key }
        let sql = sql ?? selectSQL(count: values.count)
        guard let key = try db.fetchOne(String.self, sql: sql, arguments: StatementArguments(values)) else {
            throw SyncError(.unsupportedTable, "A primary key could not be put in canonical form.")
        }
        return key
    }

    /// The canonical key of `values` built in Swift, byte for byte what the SQL expression
    /// builds, or `nil` when one is a REAL, whose digits SQLite's `quote()` decides. A
    /// downloaded page builds a key per row: one statement each cost more than the rest of
    /// the row's work.
    static func withoutSQL(_ values: [DatabaseValue]) -> String? {
        // The usual key, one INTEGER column: no buffer to build.
        if values.count == 1, case .integer(let value) = values[0] { return integer(value) }
        var key: [UInt8] = []
        key.reserveCapacity(values.count * 16)
        for (index, value) in values.enumerated() {
            if index > 0 { key.append(UInt8(ascii: ",")) }
            switch value {
            case .null: key.append(UInt8(ascii: "N"))
            case .integer(let integer):
                key.append(UInt8(ascii: "I"))
                key.append(contentsOf: String(integer).utf8)
            case .real: return nil
            case .text(let text):
                key.append(UInt8(ascii: "T"))
                appendHex(text.utf8, to: &key)
            case .blob(let data):
                key.append(UInt8(ascii: "B"))
                appendHex(data, to: &key)
            }
        }
        return String(decoding: key, as: UTF8.self)
    }

    /// The canonical key of one INTEGER key column, `I` and its decimal digits: written into a
    /// buffer on the stack, a small string, where `"I" + String(value)` made two and joined them
    /// (a downloaded page builds one per row).
    static func integer(_ value: Int64) -> String {
        JSONWriter.withDecimal(value, prefix: UInt8(ascii: "I")) { String(decoding: $0, as: UTF8.self) }
    }

    /// Upper-case hex, as SQLite's `hex()` writes it.
    private static func appendHex(_ bytes: some Sequence<UInt8>, to key: inout [UInt8]) {
        let digits = Array("0123456789ABCDEF".utf8)
        for byte in bytes {
            key.append(digits[Int(byte >> 4)])
            key.append(digits[Int(byte & 0x0F)])
        }
    }

    /// The statement that computes the canonical key of `count` bound values.
    static func selectSQL(count: Int) -> String {
        "SELECT " + (1...max(count, 1)).map { column("?\($0)") }.joined(separator: " || ',' || ")
    }

    /// The SQL expression of the canonical key of a row, for triggers and queries, with
    /// `prefix` `"NEW."` or `"OLD."` in a trigger.
    static func expression(columns: [String], prefix: String = "") -> String {
        columns.map { column(prefix + $0.quotedDatabaseIdentifier) }.joined(separator: " || ',' || ")
    }

    /// The canonical form of one value in SQL; `value` is a column reference or a parameter.
    private static func column(_ value: String) -> String {
        """
        CASE typeof(\(value)) WHEN 'integer' THEN 'I' || \(value) WHEN 'real' THEN 'R' || quote(\(value)) \
        WHEN 'text' THEN 'T' || hex(\(value)) WHEN 'blob' THEN 'B' || hex(\(value)) ELSE 'N' END
        """
    }

    /// The values of a canonical key, or `nil` when `text` is not one.
    static func parse(_ text: String) -> [DatabaseValue]? {
        // The usual key, one INTEGER column: no split into parts (every uploaded row's key is
        // read back, and the split cost ten times the rest).
        if text.utf8.first == UInt8(ascii: "I"), !text.utf8.contains(UInt8(ascii: ",")) {
            return Int64(text.dropFirst()).map { [.integer($0)] }
        }
        var values: [DatabaseValue] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let tag = part.first else { return nil }
            let content = String(part.dropFirst())
            switch tag {
            case "N" where content.isEmpty: values.append(.null)
            case "I":
                guard let integer = Int64(content) else { return nil }
                values.append(.integer(integer))
            case "R":
                guard let real = Double(content) else { return nil }
                values.append(.real(real))
            case "T":
                guard let bytes = data(hex: content) else { return nil }
                values.append(.text(String(decoding: bytes, as: UTF8.self)))
            case "B":
                guard let bytes = data(hex: content) else { return nil }
                values.append(.blob(bytes))
            default: return nil
            }
        }
        return values
    }

    // MARK: - The form before

    /// Rewrites the side tables of a database synced before this form (keys were `quote()`
    /// of each column), and records the form so that it runs once. Call in a transaction, then
    /// reinstall the outbox triggers, which compute the old form.
    ///
    /// - Returns: whether anything was rewritten (the triggers then need reinstalling).
    static func migrateLegacyKeys(_ db: Database) throws -> Bool {
        let columns = try db.fetchAll(String.self, sql: "SELECT name FROM pragma_table_info('serialdb_sync_state')")
        guard !columns.contains("key_format") else { return false }
        try db.execute(sql: "ALTER TABLE serialdb_sync_state ADD COLUMN key_format INTEGER NOT NULL DEFAULT 1")
        // The form before never starts with N followed by a comma or nothing, I, R, T or B,
        // so a rewritten key never meets one not rewritten yet.
        for table in ["serialdb_sync_row", "serialdb_sync_outbox", "serialdb_sync_seen"] {
            let keys = try db.fetchAll(Row.self, sql: "SELECT DISTINCT table_name, key FROM \(table)")
            for entry in keys {
                let (name, old): (String, String) = (try entry.decode(at: 0), try entry.decode(at: 1))
                guard let values = parseLegacy(old) else {
                    throw SyncError(
                        .unsupportedTable,
                        "A key of \(name.quotedDatabaseIdentifier) in \(table) (\(old)) cannot be read; the "
                            + "database was changed outside SerialDB. Delete that entry to go on.")
                }
                // Both columns, so that each update finds its rows through the (table_name, key) index.
                try db.execute(
                    sql: "UPDATE \(table) SET key = ? WHERE table_name = ? AND key = ?",
                    arguments: [try make(db, values: values), name, old])
            }
        }
        try db.execute(sql: "UPDATE serialdb_sync_state SET key_format = \(currentFormat)")
        return true
    }

    /// The form written by this version, in `serialdb_sync_state.key_format`.
    static let currentFormat = 2

    /// The values of a key in the form before (`quote()` of each column: `'a1'`, `12,X'00FF'`,
    /// `NULL`), or `nil` when `text` is not one. Reads unicode scalars, not characters, so
    /// that a quote followed by a combining mark is still a quote.
    static func parseLegacy(_ text: String) -> [DatabaseValue]? {
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
        func nibble(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
            default: return nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.count / 2)
        for index in stride(from: 0, to: hex.count, by: 2) {
            guard let high = nibble(hex[index]), let low = nibble(hex[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return Data(bytes)
    }
}
