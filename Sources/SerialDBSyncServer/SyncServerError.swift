/// An error of the sync server itself: a configuration it cannot serve, a daemon that cannot
/// start, a store that cannot be opened. The message says what happened and what to do.
public struct SyncServerError: Error, Sendable, CustomStringConvertible {
    /// What kind of condition this is.
    public enum Code: String, Sendable, Hashable {
        /// The configuration file or a table definition in it cannot be served.
        case invalidConfiguration
        /// The HTTP daemon could not start (address not a literal, port taken...).
        case cannotStart
        /// The store holds data this server cannot use, or an operation on it was refused.
        case invalidStore
    }

    /// What kind of condition this is.
    public let code: Code
    /// What happened and what to do about it.
    public let message: String

    /// Creates an error with a code and a message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
