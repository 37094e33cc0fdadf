/// Text that is not JSON, or JSON nested deeper than the parser allows.
public struct JSONParseError: Error, Sendable, CustomStringConvertible {
    /// What is wrong and at which byte offset.
    public let message: String

    /// The message.
    public var description: String { message }
}
