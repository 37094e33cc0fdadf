import Foundation

extension SyncValue {
    /// Reads the wire form: null, a number (an integer literal stays an integer, any other
    /// number is a double), a string or `{"base64": ...}`; `true` and `false` read as 1 and 0.
    public init(json: JSONValue, context: @autoclosure () -> String) throws(WireFormatError) {
        switch json {
        case .null: self = .null
        case .integer(let integer): self = .integer(integer)
        case .number(let number): self = .real(number)
        case .string(let text): self = .text(text)
        case .bool(let bool): self = .integer(bool ? 1 : 0)
        case .object(let members):
            guard members.count == 1, let encoded = members[WireName.base64.string]?.stringValue,
                let data = Data(base64Encoded: encoded)
            else {
                throw WireFormatError(message: "\(context()) is an object other than {\"base64\": \"...\"}")
            }
            self = .blob(data)
        case .array:
            throw WireFormatError(message: "\(context()) is an array, not a column value")
        }
    }

    /// A row object of the wire: column name → value.
    public static func row(_ members: [String: JSONValue], context: String) throws(WireFormatError)
        -> [String: SyncValue]
    {
        try row(members, describingContext: context)
    }

    /// ``row(_:context:)``, its context worked out only for an error message.
    static func row(_ members: [String: JSONValue], describingContext context: @autoclosure () -> String)
        throws(WireFormatError) -> [String: SyncValue]
    {
        var row: [String: SyncValue] = [:]
        row.reserveCapacity(members.count)
        for (name, value) in members {
            row[name] = try SyncValue(json: value, context: "column \(JSONWriter.quoted(name)) of \(context())")
        }
        return row
    }

    /// Writes the wire form: INTEGER → integer, REAL → number, TEXT → string, NULL → null,
    /// BLOB → `{"base64": "..."}`.
    ///
    /// - Throws: ``NonFiniteValueError`` for an infinite or NaN double, which JSON cannot carry
    ///   (SQLite stores NaN as NULL, so only infinities reach here from a database).
    public func write(to writer: inout JSONWriter) throws(NonFiniteValueError) {
        if case .real(let real) = self, !real.isFinite { throw NonFiniteValueError(value: real) }
        writer.value(self)
    }

    /// Writes a row object, its columns in name order (so that a stored mutation and its
    /// retry are byte for byte the same). ``WireRowLayout`` writes the same bytes from values
    /// already in that order.
    public static func write(row: [String: SyncValue], to writer: inout JSONWriter) throws(NonFiniteValueError) {
        writer.raw("{")
        for (index, column) in row.sorted(by: { writesBefore($0.key, $1.key) }).enumerated() {
            if index > 0 { writer.raw(",") }
            writer.member(column.key)
            try column.value.write(to: &writer)
        }
        writer.raw("}")
    }

    /// The order of a row object's members on the wire: by name.
    static func writesBefore(_ name: String, _ other: String) -> Bool {
        name < other
    }
}
