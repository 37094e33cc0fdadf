/// A sync failed: the network, the server, or a condition of the client. What was applied
/// before the failure stays applied and consistent (each page and each upload result is one
/// transaction); the next ``SyncClient/sync(progress:)`` continues from there.
///
/// A closed queue surfaces as SerialDB's own `SerialDBError.Code.closed`.
///
/// ```swift
/// catch let error as SyncError where error.code == .network { showOffline() }
/// ```
public struct SyncError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Code: String, Sendable, Hashable {
        /// The server could not be reached or the connection broke; try again later.
        case network
        /// The server answered with an error (``SyncError/httpStatus`` and ``SyncError/serverCode`` say which).
        case server
        /// The server's answer does not follow the protocol.
        case invalidResponse
        /// Another sync of this client is running; wait for it.
        case syncInProgress
        /// The database was synced for another account than the token's.
        case accountMismatch
        /// An account id cannot be used (it is empty).
        case invalidAccount
        /// A table from the server cannot be synced as declared (for example, no PRIMARY KEY).
        case unsupportedTable
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
