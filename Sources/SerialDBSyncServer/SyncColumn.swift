import Foundation
import SerialDB
import SerialDBSyncWire

/// One writable column of a synced table, as SQLite parsed it from the declared CREATE TABLE.
struct SyncColumn: Sendable {
    /// The name as declared.
    let name: String
    /// How JSON values become column values.
    let affinity: ColumnAffinity
    /// The declared type, for messages.
    let declaredType: String
    /// Whether NULL is refused.
    let isNotNull: Bool
    /// Whether the column has a DEFAULT, so a row may leave it out.
    let hasDefault: Bool
    /// Whether the column is part of the primary key.
    let isKey: Bool

    /// Converts a JSON value by the column's affinity, or says why it does not fit.
    ///
    /// Integers and fractions stay apart: an INTEGER column takes `3` (and `3.0`, which is the
    /// same number) but refuses `3.5`; a TEXT column refuses numbers and a numeric column
    /// refuses strings, so that a client's type mistake is reported instead of stored.
    func value(from json: JSONValue) -> Result<DatabaseValue, SyncRejection> {
        switch json {
        case .null:
            return isNotNull ? .failure(reject("is NOT NULL")) : .success(.null)
        case .bool:
            return .failure(reject("takes no booleans: send 0 or 1"))
        case .integer(let integer):
            switch affinity {
            case .integer, .numeric, .blob, .any: return .success(.integer(integer))
            case .real: return .success(.real(Double(integer)))
            case .text: return .failure(reject("is \(typeName) and takes strings, not numbers"))
            }
        case .number(let double):
            switch affinity {
            case .integer, .numeric:
                if let integer = Int64(exactly: double) { return .success(.integer(integer)) }
                if affinity == .numeric { return .success(.real(double)) }
                return .failure(reject("is \(typeName) and takes whole numbers, not \(double)"))
            case .real, .blob, .any: return .success(.real(double))
            case .text: return .failure(reject("is \(typeName) and takes strings, not numbers"))
            }
        case .string(let string):
            switch affinity {
            case .text, .blob, .any: return .success(.text(string))
            case .integer, .numeric, .real: return .failure(reject("is \(typeName) and takes numbers, not strings"))
            }
        case .object(let members):
            guard members.count == 1, let encoded = members[WireName.base64.string]?.stringValue else {
                return .failure(reject("takes no objects other than {\"base64\": \"...\"}"))
            }
            guard affinity == .blob || affinity == .any else {
                return .failure(reject("is \(typeName) and takes no BLOB"))
            }
            guard let data = Data(base64Encoded: encoded) else {
                return .failure(reject("has a \"base64\" value that is not valid base64"))
            }
            return .success(.blob(data))
        case .array:
            return .failure(reject("takes no arrays"))
        }
    }

    private var typeName: String { declaredType.isEmpty ? "untyped" : declaredType }

    private func reject(_ problem: String) -> SyncRejection {
        SyncRejection("column \(JSONWriter.quoted(name)) \(problem)")
    }
}
