import Foundation

/// One column value as it travels on the wire: INTEGER as a JSON integer, REAL as a JSON
/// number, TEXT as a string, NULL as null, BLOB as `{"base64": "..."}`.
///
/// JSON numbers do not say INTEGER or REAL, so a value read from the wire is converted by the
/// declared type affinity of the column it goes into (see ``converted(to:)``).
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

    /// The value converted for a column of this affinity, as a device applies a value it
    /// received: a JSON integer going into a REAL column becomes a double, an integral number
    /// going into an INTEGER or NUMERIC column becomes an integer; anything else stays as sent
    /// (SQLite's own affinity rules do the rest when the value is stored).
    /// See <https://www.sqlite.org/datatype3.html#determination_of_column_affinity>.
    public func converted(to affinity: ColumnAffinity) -> SyncValue {
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

    /// Reads null, a number, a string or `{"base64": ...}`; `true` and `false` read as 1 and 0.
    public init(from decoder: any Decoder) throws {
        try self.init(json: try JSONValue(from: decoder), context: "a column value")
    }

    /// Writes the wire form. A non-finite double has no JSON form and throws.
    public func encode(to encoder: any Encoder) throws {
        var writer = JSONWriter(capacity: 32)
        try write(to: &writer)
        try JSONValue.parse(writer.bytes).encode(to: encoder)
    }
}
