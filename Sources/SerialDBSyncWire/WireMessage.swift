import SerialDBSyncWire

/// A request body the client writes with the protocol's ``JSONWriter`` (several times faster
/// than `JSONEncoder`; the public types stay `Codable` for apps and other transports).
protocol WireRequest {
    func write(to writer: inout JSONWriter) throws
}

/// An answer the client reads from the protocol's parser, which keeps integers and fractions
/// apart as the wire encoding needs.
protocol WireResponse {
    init(json: JSONValue) throws
}

extension WireRequest {
    /// The body as UTF-8 JSON.
    func jsonBytes() throws -> [UInt8] {
        var writer = JSONWriter(capacity: 512)
        try write(to: &writer)
        return writer.bytes
    }
}
