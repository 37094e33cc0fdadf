/// A parsed JSON value. Numbers keep what the text said: an integer literal that fits in 64
/// bits is ``integer(_:)``, anything else (a fraction, an exponent, a huge integer) is
/// ``number(_:)``, so that a value can be converted by its column's declared type without
/// losing digits.
public enum JSONValue: Sendable, Equatable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// An integer literal that fits in `Int64`.
    case integer(Int64)
    /// Any other number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object. Member order is not kept; a repeated name keeps its last value.
    case object([String: JSONValue])

    /// The members when this is an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The elements when this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The string when this is a string.
    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    /// The integer when this is an integer literal, or a number with no fraction that fits.
    public var integerValue: Int64? {
        switch self {
        case .integer(let value): return value
        case .number(let value): return Int64(exactly: value)
        default: return nil
        }
    }

    /// The boolean when this is `true` or `false`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// A short name of the kind of value, for error messages.
    public var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .integer, .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// Parses UTF-8 JSON text.
    /// - Throws: ``JSONParseError`` saying where the text stops being JSON.
    public static func parse(_ bytes: some Collection<UInt8>) throws -> JSONValue {
        var parser = JSONParser(Array(bytes))
        return try parser.parseDocument()
    }
}
