/// A sync failed: the network, the server, or a condition of the client. What was applied
/// before the failure stays applied and consistent (each page and each upload result is one
/// transaction); the next ``SyncClient/sync(progress:)`` continues from there.
///
/// A closed queue surfaces as SerialDB's own `SerialDBError.Code.closed`.
///
/// Match by code, as with `SerialDBError`:
///
/// ```swift
/// catch SyncError.Code.network { showOffline() }
/// catch let error as SyncError where error.code == .server && error.httpStatus == 401 { signIn() }
/// ```
public struct SyncError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    ///
    /// A struct of constants rather than an enum, like `SerialDBError.Code`: so that
    /// `catch SyncError.Code.network { ... }` is an expression pattern, matched by
    /// ``~=(_:_:)`` against the thrown error (Swift reads an enum case there as a pattern that
    /// cannot match `any Error`, and the clause does not compile).
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's name, such as `"network"`.
        public let rawValue: String

        /// Wraps a code name.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The code's name.
        public var description: String { rawValue }

        /// The server could not be reached or the connection broke; try again later.
        public static let network = Code(rawValue: "network")
        /// The server answered with an error (``SyncError/httpStatus`` and ``SyncError/serverCode`` say which).
        public static let server = Code(rawValue: "server")
        /// The server's answer does not follow the protocol.
        public static let invalidResponse = Code(rawValue: "invalidResponse")
        /// Another sync of this client is running; wait for it.
        public static let syncInProgress = Code(rawValue: "syncInProgress")
        /// The database was synced for another account than the token's.
        public static let accountMismatch = Code(rawValue: "accountMismatch")
        /// An account id cannot be used (it is empty).
        public static let invalidAccount = Code(rawValue: "invalidAccount")
        /// A table from the server cannot be synced as declared (for example, no PRIMARY KEY).
        public static let unsupportedTable = Code(rawValue: "unsupportedTable")
        /// Rows from the server would break a foreign key of the local database (a local row
        /// still refers to a row the server deleted, or a row refers to one the server lacks):
        /// the message names the rows and what to do. Nothing of that page or answer was
        /// applied; the next sync tries it again.
        public static let brokenForeignKey = Code(rawValue: "brokenForeignKey")
    }

    /// What kind of failure this is.
    public let code: Code
    /// What happened and what to do.
    public let message: String
    /// The HTTP status, for ``Code/server``.
    public let httpStatus: Int?
    /// The server's error code (`unauthorized`, `bad_request`, ...), for ``Code/server``.
    public let serverCode: String?
    /// The error that caused this one, if any.
    public let underlying: (any Error)?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, httpStatus: Int? = nil, serverCode: String? = nil,
        underlying: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
        self.serverCode = serverCode
        self.underlying = underlying
    }

    /// The message, followed by the cause when there is one.
    public var description: String {
        if let underlying { return "\(message) (caused by: \(underlying))" }
        return message
    }
}

extension SyncError.Code {
    /// Whether `error` is a ``SyncError`` with this code.
    public static func ~= (pattern: SyncError.Code, error: any Error) -> Bool {
        (error as? SyncError)?.code == pattern
    }
}
