import CSQLite
import Foundation

/// A Swift type that converts to and from one SQLite value.
///
/// Conforming types can be bound as statement arguments, read from a ``Row``, and fetched
/// directly (`db.fetchAll(String.self, sql: "SELECT name FROM player")` reads the first column).
///
/// Only ``databaseValue`` and ``fromDatabaseValue(_:)`` are required. The library's own types
/// also implement the two statement-level requirements to bind and read without building an
/// intermediate ``DatabaseValue``; their default implementations go through it.
public protocol DatabaseValueConvertible: RowDecodable, Sendable {
    /// The value to store.
    var databaseValue: DatabaseValue { get }

    /// Converts a stored value, or returns `nil` when it cannot represent one of this type.
    static func fromDatabaseValue(_ value: DatabaseValue) -> Self?

    /// Binds the value to parameter `index` (1-based) of a prepared statement; returns the
    /// SQLite result code. See <https://www.sqlite.org/c3ref/bind_blob.html>.
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32

    /// Reads column `index` (0-based) of the current row of a stepped statement, or `nil` when
    /// the stored value cannot represent one of this type.
    /// See <https://www.sqlite.org/c3ref/column_blob.html>.
    static func fromStatement(_ statement: OpaquePointer, column index: Int32) -> Self?
}

extension DatabaseValueConvertible {
    /// Binds through ``databaseValue``.
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        databaseValue.bind(to: statement, at: index)
    }

    /// Reads through ``DatabaseValue``.
    public static func fromStatement(_ statement: OpaquePointer, column index: Int32) -> Self? {
        fromDatabaseValue(DatabaseValue.column(statement, index))
    }

    /// Fetching a value type reads the first column of each row.
    public init(row: Row) throws {
        self = try row.decode(Self.self, at: 0)
    }
}

/// SQLite copies transient buffers before the bind call returns.
let transientDestructor = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

extension DatabaseValue: DatabaseValueConvertible {
    /// The value itself.
    public var databaseValue: DatabaseValue { self }

    /// The value itself; never `nil`.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> DatabaseValue? { value }

    /// Binds according to the case.
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        switch self {
        case .null:
            return sqlite3_bind_null(statement, index)
        case .integer(let value):
            return sqlite3_bind_int64(statement, index, value)
        case .real(let value):
            return sqlite3_bind_double(statement, index, value)
        case .text(let value):
            return value.bind(to: statement, at: index)
        case .blob(let data):
            return data.bind(to: statement, at: index)
        }
    }

    /// Reads the column with its own storage class.
    public static func fromStatement(_ statement: OpaquePointer, column index: Int32) -> DatabaseValue? {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, index))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, index))
        case SQLITE_TEXT: return String.fromStatement(statement, column: index).map { .text($0) }
        case SQLITE_BLOB: return Data.fromStatement(statement, column: index).map { .blob($0) }
        default: return .null
        }
    }

    /// Every column has a DatabaseValue: the non-optional reading.
    static func column(_ statement: OpaquePointer, _ index: Int32) -> DatabaseValue {
        let value: DatabaseValue? = fromStatement(statement, column: index)
        return value ?? .null
    }
}

extension Optional: RowDecodable where Wrapped: DatabaseValueConvertible {}

extension Optional: DatabaseValueConvertible where Wrapped: DatabaseValueConvertible {
    /// The wrapped value's, or NULL.
    public var databaseValue: DatabaseValue {
        self?.databaseValue ?? .null
    }

    /// `.some(nil)` for NULL, `.some(value)` when the wrapped type accepts it, `nil` otherwise.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Wrapped?? {
        if value.isNull { return .some(nil) }
        return Wrapped.fromDatabaseValue(value).map { .some($0) }
    }

    /// Binds the wrapped value, or NULL.
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        guard let self else { return sqlite3_bind_null(statement, index) }
        return self.bind(to: statement, at: index)
    }

    /// `.some(nil)` for NULL, otherwise the wrapped type's reading.
    public static func fromStatement(_ statement: OpaquePointer, column index: Int32) -> Wrapped?? {
        if sqlite3_column_type(statement, index) == SQLITE_NULL { return .some(nil) }
        return Wrapped.fromStatement(statement, column: index).map { .some($0) }
    }
}
