import CSQLite
import Foundation

// Conversions of the standard library and Foundation types. Integers are stored as INTEGER,
// floating point as REAL, Bool as 0/1, String as TEXT, Data as BLOB, Date as UTC text
// "YYYY-MM-DD HH:MM:SS.SSS" (what SQLite's date functions read), UUID as a 16-byte BLOB.
// Reading is strict: NULL or a value of the wrong kind gives nil, never a silent 0 or "".
//
// The hot readers (Int64, Double, String) take the column's value once with
// `sqlite3_column_value` and read its type and contents from it: each `sqlite3_column_*` call
// pays SQLite's API bookkeeping again, which made the strict type check cost as much as the
// read. SQLite calls such values "unprotected", which matters only when other threads may use
// the connection through its mutex; SerialDB opens connections without one and uses each from
// one thread at a time, exactly as it uses the `sqlite3_column_*` functions.

extension Int64: DatabaseValueConvertible {
    /// INTEGER.
    public var databaseValue: DatabaseValue { .integer(self) }

    /// From INTEGER, or from a REAL with no fractional part.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Int64? {
        switch value {
        case .integer(let integer): return integer
        case .real(let real): return Int64(exactly: real)
        default: return nil
        }
    }

    /// `sqlite3_bind_int64`.
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        sqlite3_bind_int64(statement, index, self)
    }

    /// The column's integer when it holds an INTEGER (or a REAL with no fractional part).
    public static func fromStatement(_ statement: OpaquePointer, column index: Int32) -> Int64? {
        let value = sqlite3_column_value(statement, index)
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: return sqlite3_value_int64(value)
        case SQLITE_FLOAT: return Int64(exactly: sqlite3_value_double(value))
        default: return nil
        }
    }
}

extension Int: DatabaseValueConvertible {
    /// INTEGER.
    public var databaseValue: DatabaseValue { .integer(Int64(self)) }

    /// From an INTEGER (or integral REAL) that fits.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Int? {
        Int64.fromDatabaseValue(value).flatMap { Int(exactly: $0) }
    }

    /// `sqlite3_bind_int64`.
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        sqlite3_bind_int64(statement, index, Int64(self))
    }

    /// `sqlite3_column_int64` when the column holds an INTEGER that fits.
    public static func fromStatement(_ statement: OpaquePointer, column index: Int32) -> Int? {
        Int64.fromStatement(statement, column: index).flatMap { Int(exactly: $0) }
    }
}

extension Int32: DatabaseValueConvertible {
    /// INTEGER.
    public var databaseValue: DatabaseValue { .integer(Int64(self)) }

    /// From an INTEGER (or integral REAL) that fits.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Int32? {
        Int64.fromDatabaseValue(value).flatMap { Int32(exactly: $0) }
    }
}

extension Double: DatabaseValueConvertible {
    /// REAL.
    public var databaseValue: DatabaseValue { .real(self) }

    /// From REAL or INTEGER.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Double? {
        switch value {
        case .real(let real): return real
        case .integer(let integer): return Double(integer)
        default: return nil
        }
    }

    /// `sqlite3_bind_double`.
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        sqlite3_bind_double(statement, index, self)
    }

    /// The column's number when it holds a REAL or an INTEGER.
    public static func fromStatement(_ statement: OpaquePointer, column index: Int32) -> Double? {
        let value = sqlite3_column_value(statement, index)
        switch sqlite3_value_type(value) {
        case SQLITE_FLOAT, SQLITE_INTEGER: return sqlite3_value_double(value)
        default: return nil
        }
    }
}

extension Float: DatabaseValueConvertible {
    /// REAL.
    public var databaseValue: DatabaseValue { .real(Double(self)) }

    /// From REAL or INTEGER.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Float? {
        Double.fromDatabaseValue(value).map { Float($0) }
    }
}

extension Bool: DatabaseValueConvertible {
    /// INTEGER 0 or 1.
    public var databaseValue: DatabaseValue { .integer(self ? 1 : 0) }

    /// From an INTEGER: 0 is false, anything else true.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Bool? {
        Int64.fromDatabaseValue(value).map { $0 != 0 }
    }

    /// `sqlite3_bind_int64` of 0 or 1.
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        sqlite3_bind_int64(statement, index, self ? 1 : 0)
    }

    /// From an INTEGER column.
    public static func fromStatement(_ statement: OpaquePointer, column index: Int32) -> Bool? {
        Int64.fromStatement(statement, column: index).map { $0 != 0 }
    }
}

extension String: DatabaseValueConvertible {
    /// TEXT.
    public var databaseValue: DatabaseValue { .text(self) }

    /// From TEXT only.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> String? {
        if case .text(let text) = value { return text }
        return nil
    }

    /// `sqlite3_bind_text64` with the string's own UTF-8 bytes (copied by SQLite). A string
    /// longer than the connection's `SQLITE_LIMIT_LENGTH` gives `SQLITE_TOOBIG`, whatever its
    /// size: the 64-bit call takes any length, where a 32-bit one could not represent 2 GiB.
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        var string = self
        return string.withUTF8 { bytes in
            guard let base = bytes.baseAddress else {
                return sqlite3_bind_text(statement, index, "", 0, transientDestructor)
            }
            let text = UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self)
            return sqlite3_bind_text64(
                statement, index, text, UInt64(bytes.count), transientDestructor, UInt8(SQLITE_UTF8))
        }
    }

    /// The column's text when it holds TEXT.
    public static func fromStatement(_ statement: OpaquePointer, column index: Int32) -> String? {
        let value = sqlite3_column_value(statement, index)
        guard sqlite3_value_type(value) == SQLITE_TEXT else { return nil }
        guard let bytes = sqlite3_value_text(value) else { return "" }
        let count = Int(sqlite3_value_bytes(value))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}

extension Data: DatabaseValueConvertible {
    /// BLOB.
    public var databaseValue: DatabaseValue { .blob(self) }

    /// From BLOB (or TEXT, as its UTF-8 bytes).
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Data? {
        switch value {
        case .blob(let data): return data
        case .text(let text): return Data(text.utf8)
        default: return nil
        }
    }

    /// `sqlite3_bind_blob64` (copied by SQLite). An empty Data binds an empty blob, not NULL.
    /// Data longer than the connection's `SQLITE_LIMIT_LENGTH` gives `SQLITE_TOOBIG`, whatever
    /// its size: the 64-bit call takes any length, where a 32-bit one could not represent 2 GiB.
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else {
                return sqlite3_bind_zeroblob(statement, index, 0)
            }
            return sqlite3_bind_blob64(statement, index, base, UInt64(bytes.count), transientDestructor)
        }
    }

    /// `sqlite3_column_blob` when the column holds a BLOB (or TEXT).
    public static func fromStatement(_ statement: OpaquePointer, column index: Int32) -> Data? {
        let type = sqlite3_column_type(statement, index)
        guard type == SQLITE_BLOB || type == SQLITE_TEXT else { return nil }
        let count = Int(sqlite3_column_bytes(statement, index))
        guard count > 0, let bytes = sqlite3_column_blob(statement, index) else { return Data() }
        return Data(bytes: bytes, count: count)
    }
}

extension UUID: DatabaseValueConvertible {
    /// A 16-byte BLOB.
    public var databaseValue: DatabaseValue {
        withUnsafeBytes(of: uuid) { .blob(Data($0)) }
    }

    /// From a 16-byte BLOB, or from TEXT in the usual hyphenated form.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> UUID? {
        switch value {
        case .blob(let data) where data.count == 16:
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { $0.copyBytes(from: data) }
            return UUID(uuid: uuid)
        case .text(let text):
            return UUID(uuidString: text)
        default:
            return nil
        }
    }
}

extension Date: DatabaseValueConvertible {
    /// UTC text `YYYY-MM-DD HH:MM:SS.SSS`, which sorts chronologically and which SQLite's date
    /// functions understand. See <https://www.sqlite.org/lang_datefunc.html>.
    ///
    /// A date whose milliseconds since 1970 do not fit in 64 bits (hundreds of millions of
    /// years away, or infinite, as read back from a REAL) has no such text: it is stored as
    /// REAL seconds, which read back as the same date, instead of trapping.
    public var databaseValue: DatabaseValue {
        guard let milliseconds = Int64(exactly: (timeIntervalSince1970 * 1000).rounded(.down)) else {
            return .real(timeIntervalSince1970)
        }
        return .text(DatabaseDateFormat.format(millisecondsSince1970: milliseconds))
    }

    /// From that text (also with a `T` separator, a trailing `Z`, or no fraction), or from a
    /// number of seconds since 1970.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Date? {
        switch value {
        case .text(let text): return DatabaseDateFormat.parse(text)
        case .integer(let seconds): return Date(timeIntervalSince1970: TimeInterval(seconds))
        case .real(let seconds): return Date(timeIntervalSince1970: seconds)
        default: return nil
        }
    }
}
