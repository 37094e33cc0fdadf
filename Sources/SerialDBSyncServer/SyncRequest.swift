import Foundation
import SerialDBSyncWire

/// One HTTP request as the protocol sees it, whatever server received it.
public struct SyncRequest: Sendable {
    /// `POST`, `GET`...
    public var method: String
    /// The path, without query string (`/v1/fetch-data`).
    public var path: String
    /// The `Authorization` header, if any.
    public var authorization: String?
    /// The body bytes.
    public var body: Data

    /// Creates a request.
    public init(method: String, path: String, authorization: String?, body: Data) {
        self.method = method
        self.path = path
        self.authorization = authorization
        self.body = body
    }
}

/// The answer to a ``SyncRequest``: a status and a JSON body, plus what the request log needs.
public struct SyncResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// The JSON body.
    public var body: Data
    /// The account the token belonged to, when it was valid.
    public var account: String?
    /// For a 500, what went wrong inside: for the server's log, never for the client.
    public var internalError: String?
    /// What the request did to rows (zero but for fetch-data and post-data answered 200).
    public var rows = SyncRowCounts()
}

/// What one request did to rows, for the metrics and the request log: never a row's value.
public struct SyncRowCounts: Sendable, Equatable {
    /// Changes fetch-data sent.
    public var served = 0
    /// Mutations post-data answered `applied` (a retried seq answered from memory included).
    public var applied = 0
    /// Mutations answered `conflict`.
    public var conflicts = 0
    /// Mutations answered `rejected`.
    public var rejected = 0
    /// Mutations answered `duplicate`.
    public var duplicates = 0

    /// Creates counts, zero unless given.
    public init(served: Int = 0, applied: Int = 0, conflicts: Int = 0, rejected: Int = 0, duplicates: Int = 0) {
        self.served = served
        self.applied = applied
        self.conflicts = conflicts
        self.rejected = rejected
        self.duplicates = duplicates
    }

    /// The rows the request carried: changes served plus mutations answered.
    public var total: Int { served + applied + conflicts + rejected + duplicates }

    /// Adds post-data's answers, one per mutation.
    mutating func count(_ outcomes: [SyncUploadOutcome]) {
        for outcome in outcomes {
            switch outcome {
            case .applied: applied += 1
            case .conflict: conflicts += 1
            case .rejected: rejected += 1
            case .duplicate: duplicates += 1
            }
        }
    }
}

/// A request the protocol refuses as a whole: answered with `status` and
/// `{"error": {"code": ..., "message": ...}}`.
struct SyncRequestError: Error {
    let status: Int
    let code: String
    let message: String

    static func badRequest(_ message: String) -> SyncRequestError {
        SyncRequestError(status: 400, code: "bad_request", message: message)
    }

    static let unauthorized = SyncRequestError(
        status: 401, code: "unauthorized", message: "a valid token is required: send Authorization: Bearer TOKEN")

    /// A 401 for a JWT that failed `reason` (which never repeats the token).
    static func unauthorized(_ reason: String) -> SyncRequestError {
        SyncRequestError(status: 401, code: "unauthorized", message: "\(reason); send a valid token")
    }

    static func forbidden(_ message: String) -> SyncRequestError {
        SyncRequestError(status: 403, code: "forbidden", message: message)
    }

    static func notFound(_ path: String) -> SyncRequestError {
        let calls = SyncCall.allCases.map(\.path)
        return SyncRequestError(
            status: 404, code: "not_found",
            message:
                "no call at \(path); the calls are POST \(calls.dropLast().joined(separator: ", ")) and \(calls.last!)")
    }

    static func methodNotAllowed(_ method: String) -> SyncRequestError {
        SyncRequestError(
            status: 405, code: "method_not_allowed", message: "\(method) is not allowed: every call is POST")
    }

    static func payloadTooLarge(limit: Int) -> SyncRequestError {
        SyncRequestError(
            status: 413, code: "payload_too_large",
            message: "the body is larger than \(limit) bytes; send fewer mutations per request")
    }

    static let internalError = SyncRequestError(
        status: 500, code: "internal", message: "the server failed to answer; try again later")

    /// The error body.
    var body: Data {
        var writer = JSONWriter(capacity: 128)
        SyncErrorBody(code: code, message: message).write(to: &writer)
        return writer.data
    }
}
