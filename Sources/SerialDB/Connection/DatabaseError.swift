import CSQLite

/// An error reported by SQLite.
///
/// It carries the primary and extended result codes, SQLite's own message, and the SQL that
/// failed. Bound values are included only when ``Configuration/publicStatementArguments`` is
/// true, because they often hold personal data that must not reach logs.
///
/// Match by code with ``ResultCode``:
///
/// ```swift
/// catch ResultCode.SQLITE_BUSY { ... }
/// catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE { ... }
/// ```
///
/// See <https://www.sqlite.org/rescode.html>.
public struct DatabaseError: Error, Sendable, CustomStringConvertible {
    /// The primary result code (`SQLITE_CONSTRAINT` for `SQLITE_CONSTRAINT_UNIQUE`).
    public var resultCode: ResultCode { extendedResultCode.primary }
    /// The extended result code (`sqlite3_extended_errcode`).
    public let extendedResultCode: ResultCode
    /// SQLite's message (`sqlite3_errmsg`).
    public let message: String
    /// The SQL that failed, when the failure came from a statement.
    public let sql: String?
    /// The bound values, rendered; `nil` unless the configuration makes arguments public.
    public let arguments: String?

    /// Creates an error; the library builds these from SQLite's state, tests may build their own.
    public init(extendedResultCode: ResultCode, message: String, sql: String? = nil, arguments: String? = nil) {
        self.extendedResultCode = extendedResultCode
        self.message = message
        self.sql = sql
        self.arguments = arguments
    }

    /// `SQLite error 19 (constraint failed): UNIQUE constraint failed: player.id - while executing `INSERT ...``
    ///
    /// The primary code, as SQLite's documentation names errors; the extended code is
    /// ``extendedResultCode``.
    public var description: String {
        var text = "SQLite error \(resultCode): \(message)"
        if let sql {
            text += " - while executing `\(sql)`"
        }
        if let arguments {
            text += " with arguments \(arguments)"
        }
        return text
    }
}

extension DatabaseError {
    /// Reads the error state of `connection` right after a call returned `code`.
    static func fromConnection(
        _ connection: OpaquePointer?,
        code: Int32,
        sql: String? = nil,
        arguments: String? = nil
    ) -> DatabaseError {
        // The extended code from the connection is only meaningful if it agrees with the
        // primary code that the failing call returned; otherwise keep what the call said.
        var extended = code
        var message = String(cString: sqlite3_errstr(code))
        if let connection {
            let connectionCode = sqlite3_extended_errcode(connection)
            if connectionCode & 0xFF == code & 0xFF {
                extended = connectionCode
                message = String(cString: sqlite3_errmsg(connection))
            }
        }
        return DatabaseError(
            extendedResultCode: ResultCode(rawValue: extended), message: message, sql: sql, arguments: arguments)
    }
}
