/// An error of the sync server itself: a configuration it cannot serve, a daemon that cannot
/// start, a store that cannot be opened. The message says what happened and what to do.
///
/// Match by code:
///
/// ```swift
/// catch SyncServerError.Code.cannotStart { tryAnotherPort() }
/// catch let error as SyncServerError where error.code == .invalidConfiguration { print(error) }
/// ```
public struct SyncServerError: Error, Sendable, CustomStringConvertible {
    /// What kind of condition this is.
    ///
    /// A struct of constants rather than an enum, like `SerialDBError.Code`: so that
    /// `catch SyncServerError.Code.cannotStart { ... }` is an expression pattern, matched by
    /// ``~=(_:_:)`` against the thrown error (Swift reads an enum case there as a pattern that
    /// cannot match `any Error`, and the clause does not compile).
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's name, such as `"cannotStart"`.
        public let rawValue: String

        /// Wraps a code name.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The code's name.
        public var description: String { rawValue }

        /// The configuration file or a table definition in it cannot be served.
        public static let invalidConfiguration = Code(rawValue: "invalidConfiguration")
        /// The HTTP daemon could not start (address not a literal, port taken...).
        public static let cannotStart = Code(rawValue: "cannotStart")
        /// The store holds data this server cannot use, or an operation on it was refused.
        public static let invalidStore = Code(rawValue: "invalidStore")
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

extension SyncServerError.Code {
    /// Whether `error` is a ``SyncServerError`` with this code.
    public static func ~= (pattern: SyncServerError.Code, error: any Error) -> Bool {
        (error as? SyncServerError)?.code == pattern
    }
}
