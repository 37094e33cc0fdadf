/// A message of the protocol, or a part of one, with its one wire form: written with
/// ``JSONWriter`` and read from ``JSONValue``. Clients and servers both go through it, so that
/// each message is written out once.
///
/// Its `Codable` form is the same wire form (``init(wireDecoder:)``, ``encode(wireEncoder:)``),
/// for apps and transports that go through `JSONEncoder` and `JSONDecoder`.
public protocol WireCodable: Codable, Sendable {
    /// Where a value of this type stands when it is the whole message, for error messages
    /// (`the check-update answer`).
    static var wireContext: String { get }

    /// Reads the wire form. `context` says where the value is, for error messages.
    /// - Throws: ``WireFormatError`` naming what is missing or of the wrong kind.
    init(json: JSONValue, context: String) throws

    /// Writes the wire form.
    /// - Throws: ``NonFiniteValueError`` for a REAL value JSON cannot carry.
    func write(to writer: inout JSONWriter) throws
}

extension WireCodable {
    /// Reads the wire form of a whole message.
    public init(json: JSONValue) throws {
        try self.init(json: json, context: Self.wireContext)
    }

    /// Parses and reads UTF-8 JSON text.
    /// - Throws: ``JSONParseError`` for text that is not JSON, ``WireFormatError`` for JSON
    ///   that is not this message.
    public init(jsonBytes bytes: some Collection<UInt8>) throws {
        try self.init(json: try JSONValue.parse(bytes))
    }

    /// The wire form as UTF-8 JSON.
    public func jsonBytes() throws -> [UInt8] {
        var writer = JSONWriter(capacity: 512)
        try write(to: &writer)
        return writer.bytes
    }

    /// Reads the value from a `Decoder` through its wire form.
    public init(wireDecoder decoder: any Decoder) throws {
        try self.init(json: try JSONValue(from: decoder))
    }

    /// Writes the value to an `Encoder` in its wire form.
    public func encode(wireEncoder encoder: any Encoder) throws {
        try JSONValue.parse(try jsonBytes()).encode(to: encoder)
    }
}

/// Reads the elements of an array member, each with its own context (`change 3 of ...`),
/// worked out only for an error message: `read` is the element type's reader taking a lazy
/// context.
func elements<Element>(
    _ name: WireName, of fields: WireFields, each label: String,
    read: (JSONValue, @escaping @Sendable () -> String) throws -> Element
) throws -> [Element] {
    let entries = try fields.array(name)
    var elements: [Element] = []
    elements.reserveCapacity(entries.count)
    for (index, entry) in entries.enumerated() {
        elements.append(try read(entry, { "\(label) \(index + 1) of \(fields.context)" }))
    }
    return elements
}

/// Reads the elements of an array member, each with its own context (`change 3 of ...`).
func elements<Element: WireCodable>(
    _ name: WireName, of fields: WireFields, each label: String, as: Element.Type = Element.self
) throws -> [Element] {
    try fields.array(name).enumerated().map { index, entry in
        try Element(json: entry, context: "\(label) \(index + 1) of \(fields.context)")
    }
}

extension JSONWriter {
    /// Writes an array of messages.
    mutating func array<Element: WireCodable>(_ elements: [Element]) throws {
        raw("[")
        for (index, element) in elements.enumerated() {
            if index > 0 { raw(",") }
            try element.write(to: &self)
        }
        raw("]")
    }
}
