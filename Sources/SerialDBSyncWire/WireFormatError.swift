/// JSON that parsed but is not the shape the protocol fixes (a missing field, a string where a
/// number belongs), naming the field and where it is.
///
/// A server answers it as 400 `bad_request` with ``message``; a client reports the answer as
/// not the protocol's.
public struct WireFormatError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, naming the member and the object it belongs to.
    public let message: String

    /// An error with this message.
    public init(message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
