import Foundation
import SerialDB

/// One column value as it travels on the wire: INTEGER as a JSON integer, REAL as a JSON
/// number, TEXT as a string, NULL as null, BLOB as `{"base64": "..."}`.
///
/// JSON numbers do not say INTEGER or REAL, so a value read from the wire is converted by the
/// declared type affinity of the column it goes into (see `converted(toAffinityOf:)`).
public enum SyncValue: Sendable, Hashable, Codable {
    /// SQL NULL.
    case null
    /// A signed 64-bit integer.
    case integer(Int64)
    /// A double.
    case real(Double)
    /// UTF-8 text.
    case text(String)
    /// Raw bytes.
    case blob(Data)

    /// The value of a database column.
    public init(_ value: DatabaseValue) {
        switch value {
        case .null: self = .null
        case .integer(let integer): self = .integer(integer)
        case .real(let real): self = .real(real)
        case .text(let text): self = .text(text)
        case .blob(let data): self = .blob(data)
        }
    }

    /// The value to store in a column.
    public var databaseValue: DatabaseValue {
        switch self {
        case .null: return .null
        case .integer(let integer): return .integer(integer)
        case .real(let real): return .real(real)
        case .text(let text): return .text(text)
        case .blob(let data): return .blob(data)
        }
    }

    /// The value converted the way the column's declared type asks: a JSON integer going into
    /// a REAL column becomes a double, an integral number going into an INTEGER or NUMERIC
    /// column becomes an integer. See <https://www.sqlite.org/datatype3.html#determination_of_column_affinity>.
    func converted(toAffinityOf declaredType: String) -> SyncValue {
        converted(to: Self.affinity(of: declaredType))
    }

    /// The value converted for a column of this affinity (computed once per column by callers
    /// that convert many values).
    func converted(to affinity: Affinity) -> SyncValue {
        switch (affinity, self) {
        case (.real, .integer(let integer)):
            return .real(Double(integer))
        case (.integer, .real(let real)), (.numeric, .real(let real)):
            if let exact = Int64(exactly: real) { return .integer(exact) }
            return self
        default:
            return self
        }
    }

    enum Affinity {
        case integer
        case text
        case blob
        case real
        case numeric
    }

    /// SQLite's five rules, in order.
    static func affinity(of declaredType: String) -> Affinity {
        let type = declaredType.uppercased()
        if type.contains("INT") { return .integer }
        if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") { return .text }
        if type.contains("BLOB") || type.isEmpty { return .blob }
        if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") { return .real }
        return .numeric
    }

    private enum BlobKeys: String, CodingKey {
        case base64
    }

    /// Reads null, a number, a string or `{"base64": ...}`; `true` and `false` read as 1 and 0.
    public init(from decoder: any Decoder) throws {
        if let keyed = try? decoder.container(keyedBy: BlobKeys.self) {
            let encoded = try keyed.decode(String.self, forKey: .base64)
            guard let data = Data(base64Encoded: encoded) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .base64, in: keyed, debugDescription: "not valid base64")
            }
            self = .blob(data)
            return
        }
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let integer = try? container.decode(Int64.self) {
            self = .integer(integer)
        } else if let real = try? container.decode(Double.self) {
            self = .real(real)
        } else if let text = try? container.decode(String.self) {
            self = .text(text)
        } else if let bool = try? container.decode(Bool.self) {
            self = .integer(bool ? 1 : 0)
        } else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "a column value is null, a number, a string or {\"base64\": ...}")
        }
    }

    /// Writes the wire form. A non-finite double has no JSON form and throws.
    public func encode(to encoder: any Encoder) throws {
        if case .blob(let data) = self {
            var keyed = encoder.container(keyedBy: BlobKeys.self)
            try keyed.encode(data.base64EncodedString(), forKey: .base64)
            return
        }
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .integer(let integer): try container.encode(integer)
        case .real(let real): try container.encode(real)
        case .text(let text): try container.encode(text)
        case .blob: break
        }
    }
}
