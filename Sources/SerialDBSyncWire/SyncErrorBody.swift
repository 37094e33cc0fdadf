/// The body of every error answer: `{"error": {"code": "bad_request", "message": "..."}}`.
public struct SyncErrorBody: Sendable, Equatable, WireCodable {
    /// The machine-readable code (`unauthorized`, `forbidden`, `bad_request`, `not_found`,
    /// `method_not_allowed`, `payload_too_large`, `internal`).
    public var code: String
    /// What happened and what to do, for people.
    public var message: String

    /// A body with this code and message.
    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    /// As a client reads it.
    public static let wireContext = "the error answer"

    /// Reads an error body.
    public init(json: JSONValue, context: String) throws {
        let detail = WireFields(members: try WireFields(json, context: context).object(.error), context: "the error")
        self.init(code: try detail.string(.code), message: try detail.string(.message))
    }

    /// Writes the error body.
    public func write(to writer: inout JSONWriter) {
        writer.raw("{")
        writer.field(.error)
        writer.raw("{")
        writer.field(.code)
        writer.string(code)
        writer.field(.message)
        writer.string(message)
        writer.raw("}}")
    }

    /// Reads the body through its wire form.
    public init(from decoder: any Decoder) throws { try self.init(wireDecoder: decoder) }

    /// Writes the body in its wire form.
    public func encode(to encoder: any Encoder) throws { try encode(wireEncoder: encoder) }
}
