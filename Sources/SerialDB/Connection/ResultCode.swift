// swift-format-ignore-file: AlwaysUseLowerCamelCase
// The constants keep SQLite's own names so they can be found in its documentation.

import CSQLite

/// A SQLite result code, primary or extended.
///
/// Match errors by code in `catch` clauses; a primary code also matches its extended codes:
///
/// ```swift
/// do {
///     try db.execute(sql: "INSERT INTO player(id) VALUES (1)")
/// } catch ResultCode.SQLITE_CONSTRAINT {
///     // any constraint violation, whatever its extended code
/// }
/// ```
///
/// See <https://www.sqlite.org/rescode.html>.
public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The integer code SQLite returned.
    public let rawValue: Int32

    /// Wraps a raw SQLite result code.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The primary code: the low 8 bits of an extended code.
    public var primary: ResultCode {
        ResultCode(rawValue: rawValue & 0xFF)
    }

    /// SQLite's English description of the code (`sqlite3_errstr`).
    public var description: String {
        "\(rawValue) (\(String(cString: sqlite3_errstr(rawValue))))"
    }

    /// Whether `error` is a ``DatabaseError`` with this code, primary or extended.
    public static func ~= (pattern: ResultCode, error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        return pattern.matches(error.extendedResultCode)
    }

    /// Whether `code` is this code, or an extended code of this primary code.
    public func matches(_ code: ResultCode) -> Bool {
        if self == code { return true }
        return rawValue == (rawValue & 0xFF) && code.primary == self
    }

    /// Generic error.
    public static let SQLITE_ERROR = ResultCode(rawValue: 1)
    /// Internal logic error in SQLite.
    public static let SQLITE_INTERNAL = ResultCode(rawValue: 2)
    /// Access permission denied.
    public static let SQLITE_PERM = ResultCode(rawValue: 3)
    /// Callback routine requested an abort.
    public static let SQLITE_ABORT = ResultCode(rawValue: 4)
    /// The database file is locked.
    public static let SQLITE_BUSY = ResultCode(rawValue: 5)
    /// A table in the database is locked.
    public static let SQLITE_LOCKED = ResultCode(rawValue: 6)
    /// A malloc() failed.
    public static let SQLITE_NOMEM = ResultCode(rawValue: 7)
    /// Attempt to write a readonly database.
    public static let SQLITE_READONLY = ResultCode(rawValue: 8)
    /// Operation terminated by sqlite3_interrupt().
    public static let SQLITE_INTERRUPT = ResultCode(rawValue: 9)
    /// Some kind of disk I/O error occurred.
    public static let SQLITE_IOERR = ResultCode(rawValue: 10)
    /// The database disk image is malformed.
    public static let SQLITE_CORRUPT = ResultCode(rawValue: 11)
    /// Insertion failed because database is full.
    public static let SQLITE_FULL = ResultCode(rawValue: 13)
    /// Unable to open the database file.
    public static let SQLITE_CANTOPEN = ResultCode(rawValue: 14)
    /// The database schema changed.
    public static let SQLITE_SCHEMA = ResultCode(rawValue: 17)
    /// A string or BLOB exceeds the length limit (`SQLITE_LIMIT_LENGTH`).
    public static let SQLITE_TOOBIG = ResultCode(rawValue: 18)
    /// Abort due to constraint violation.
    public static let SQLITE_CONSTRAINT = ResultCode(rawValue: 19)
    /// Data type mismatch.
    public static let SQLITE_MISMATCH = ResultCode(rawValue: 20)
    /// Library used incorrectly.
    public static let SQLITE_MISUSE = ResultCode(rawValue: 21)
    /// Bind parameter out of range.
    public static let SQLITE_RANGE = ResultCode(rawValue: 25)
    /// File opened that is not a database file.
    public static let SQLITE_NOTADB = ResultCode(rawValue: 26)
    /// A UNIQUE constraint failed.
    public static let SQLITE_CONSTRAINT_UNIQUE = ResultCode(rawValue: 2067)
    /// A PRIMARY KEY constraint failed.
    public static let SQLITE_CONSTRAINT_PRIMARYKEY = ResultCode(rawValue: 1555)
    /// A NOT NULL constraint failed.
    public static let SQLITE_CONSTRAINT_NOTNULL = ResultCode(rawValue: 1299)
    /// A FOREIGN KEY constraint failed.
    public static let SQLITE_CONSTRAINT_FOREIGNKEY = ResultCode(rawValue: 787)
    /// A CHECK constraint failed.
    public static let SQLITE_CONSTRAINT_CHECK = ResultCode(rawValue: 275)
}
