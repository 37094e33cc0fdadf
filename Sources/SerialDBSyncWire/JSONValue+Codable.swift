/// JSON values through `Codable`, so that a message's `Codable` form is its wire form.
extension JSONValue: Codable {
    private struct Name: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Reads any JSON value: null, a boolean, an integer, another number, a string, an array
    /// or an object.
    public init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer() {
            if single.decodeNil() {
                self = .null
                return
            }
            if let bool = try? single.decode(Bool.self) {
                self = .bool(bool)
                return
            }
            if let integer = try? single.decode(Int64.self) {
                self = .integer(integer)
                return
            }
            if let number = try? single.decode(Double.self) {
                self = .number(number)
                return
            }
            if let string = try? single.decode(String.self) {
                self = .string(string)
                return
            }
        }
        if let keyed = try? decoder.container(keyedBy: Name.self) {
            var members: [String: JSONValue] = [:]
            for key in keyed.allKeys {
                members[key.stringValue] = try keyed.decode(JSONValue.self, forKey: key)
            }
            self = .object(members)
            return
        }
        var unkeyed = try decoder.unkeyedContainer()
        var elements: [JSONValue] = []
        while !unkeyed.isAtEnd {
            elements.append(try unkeyed.decode(JSONValue.self))
        }
        self = .array(elements)
    }

    /// Writes the value; a non-finite number is refused by the encoder as it would be anywhere.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let bool):
            var single = encoder.singleValueContainer()
            try single.encode(bool)
        case .integer(let integer):
            var single = encoder.singleValueContainer()
            try single.encode(integer)
        case .number(let number):
            var single = encoder.singleValueContainer()
            try single.encode(number)
        case .string(let string):
            var single = encoder.singleValueContainer()
            try single.encode(string)
        case .array(let elements):
            var unkeyed = encoder.unkeyedContainer()
            for element in elements { try unkeyed.encode(element) }
        case .object(let members):
            var keyed = encoder.container(keyedBy: Name.self)
            for (name, value) in members { try keyed.encode(value, forKey: Name(stringValue: name)) }
        }
    }
}
