import CSQLite
import Foundation

extension Database {
    /// Makes a Swift function callable from SQL on this connection.
    ///
    /// Register it in ``Configuration/prepareDatabase`` so that every connection a queue or a
    /// pool opens has it. The scratch database a schema change parses its SQL in is given
    /// every function registered on the connection, so that indexes, CHECK constraints,
    /// defaults and generated columns may use it. Registering a name again
    /// with the same argument count replaces the earlier function.
    ///
    /// - Throws: ``DatabaseError`` when SQLite refuses the registration (for example a name
    ///   longer than 255 bytes, or an argument count outside -1...127).
    ///   See <https://www.sqlite.org/c3ref/create_function.html>.
    public func add(function: DatabaseFunction) throws {
        let handle = try openHandle()
        guard let count = Int32(exactly: function.argumentCount ?? -1), (-1...127).contains(count) else {
            throw SerialDBError(
                .invalidArguments,
                "The function \(function.name) takes \(function.argumentCount ?? -1) arguments; SQLite "
                    + "allows 0 to 127, or nil for any number.")
        }
        let flags = SQLITE_UTF8 | (function.isDeterministic ? SQLITE_DETERMINISTIC : 0)
        // SQLite owns one retain of the box and releases it through the destructor, also when the
        // registration fails or is replaced.
        let box = Unmanaged.passRetained(FunctionBox(function.body)).toOpaque()
        let code = sqlite3_create_function_v2(
            handle, function.name, count, flags, box,
            { context, argumentCount, arguments in
                guard let context else { return }
                let box = Unmanaged<FunctionBox>.fromOpaque(sqlite3_user_data(context)).takeUnretainedValue()
                let values = (0..<Int(argumentCount)).map { index in
                    DatabaseValue(sqliteValue: arguments?[index])
                }
                do {
                    let result = try box.body(values)?.databaseValue ?? .null
                    result.setResult(of: context)
                } catch {
                    sqlite3_result_error(context, "\(error)", -1)
                }
            }, nil, nil,
            { box in
                if let box { Unmanaged<FunctionBox>.fromOpaque(box).release() }
            })
        guard code == SQLITE_OK else { throw self.error(code: code) }
        registeredFunctions.removeAll {
            $0.name.isSameSQLiteName(as: function.name) && $0.argumentCount == function.argumentCount
        }
        registeredFunctions.append(function)
    }

    /// Makes a Swift collation usable in `COLLATE name` on this connection.
    ///
    /// Register it in ``Configuration/prepareDatabase`` so that every connection has it: a
    /// connection without it cannot use a table or index declared with it. The scratch database
    /// a schema change parses its SQL in is given every collation registered on the connection.
    ///
    /// - Throws: ``DatabaseError`` when SQLite refuses the registration.
    ///   See <https://www.sqlite.org/c3ref/create_collation.html>.
    public func add(collation: DatabaseCollation) throws {
        let handle = try openHandle()
        let box = Unmanaged.passRetained(CollationBox(collation.compare)).toOpaque()
        let code = sqlite3_create_collation_v2(
            handle, collation.name, SQLITE_UTF8, box,
            { box, leftCount, left, rightCount, right in
                guard let box else { return 0 }
                let compare = Unmanaged<CollationBox>.fromOpaque(box).takeUnretainedValue().compare
                let result = compare(
                    String(utf8Bytes: left, count: leftCount), String(utf8Bytes: right, count: rightCount))
                switch result {
                case .orderedAscending: return -1
                case .orderedSame: return 0
                case .orderedDescending: return 1
                }
            },
            { box in
                if let box { Unmanaged<CollationBox>.fromOpaque(box).release() }
            })
        guard code == SQLITE_OK else { throw self.error(code: code) }
        registeredCollations.removeAll { $0.name.isSameSQLiteName(as: collation.name) }
        registeredCollations.append(collation)
    }

    /// Registers on this connection every function and collation registered on `other`, in
    /// ``Configuration/prepareDatabase`` or later, so that SQL compiles here as it does there.
    func addRegistrations(of other: Database) throws {
        for function in other.registeredFunctions { try add(function: function) }
        for collation in other.registeredCollations { try add(collation: collation) }
    }
}

/// Keeps a function's closure alive for SQLite's C callbacks.
private final class FunctionBox {
    let body: @Sendable ([DatabaseValue]) throws -> (any DatabaseValueConvertible)?

    init(_ body: @escaping @Sendable ([DatabaseValue]) throws -> (any DatabaseValueConvertible)?) {
        self.body = body
    }
}

/// Keeps a collation's closure alive for SQLite's C callbacks.
private final class CollationBox {
    let compare: @Sendable (String, String) -> ComparisonResult

    init(_ compare: @escaping @Sendable (String, String) -> ComparisonResult) {
        self.compare = compare
    }
}

extension String {
    /// The string in a buffer SQLite hands a collation: UTF-8, not NUL-terminated.
    fileprivate init(utf8Bytes start: UnsafeRawPointer?, count: Int32) {
        guard let start, count > 0 else {
            self = ""
            return
        }
        self = String(decoding: UnsafeRawBufferPointer(start: start, count: Int(count)), as: UTF8.self)
    }
}

extension DatabaseValue {
    /// Reads a function argument with its own storage class.
    fileprivate init(sqliteValue value: OpaquePointer?) {
        guard let value else {
            self = .null
            return
        }
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER:
            self = .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT:
            self = .real(sqlite3_value_double(value))
        case SQLITE_TEXT:
            let count = Int(sqlite3_value_bytes(value))
            self = .text(
                sqlite3_value_text(value).map {
                    String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
                } ?? "")
        case SQLITE_BLOB:
            let count = Int(sqlite3_value_bytes(value))
            self = .blob(sqlite3_value_blob(value).map { Data(bytes: $0, count: count) } ?? Data())
        default:
            self = .null
        }
    }

    /// Sets a function's result; text and blobs are copied by SQLite before this returns.
    fileprivate func setResult(of context: OpaquePointer) {
        switch self {
        case .null:
            sqlite3_result_null(context)
        case .integer(let value):
            sqlite3_result_int64(context, value)
        case .real(let value):
            sqlite3_result_double(context, value)
        case .text(let text):
            var text = text
            text.withUTF8 { bytes in
                guard let start = bytes.baseAddress, !bytes.isEmpty else {
                    return sqlite3_result_text(context, "", 0, transientDestructor)
                }
                sqlite3_result_text64(
                    context, UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self), sqlite3_uint64(bytes.count),
                    transientDestructor, UInt8(SQLITE_UTF8))
            }
        case .blob(let data):
            data.withUnsafeBytes { bytes in
                guard let start = bytes.baseAddress, !bytes.isEmpty else {
                    return sqlite3_result_zeroblob(context, 0)
                }
                sqlite3_result_blob64(context, start, sqlite3_uint64(bytes.count), transientDestructor)
            }
        }
    }
}
