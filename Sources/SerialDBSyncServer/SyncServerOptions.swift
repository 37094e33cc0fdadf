import Foundation

/// How a ``SyncServer`` listens and what it accepts.
public struct SyncServerOptions: Sendable {
    /// The address to bind: an IPv4 or IPv6 literal.
    public var host = "127.0.0.1"
    /// The port; 0 lets the system pick a free one (read it back from ``SyncServer/port``).
    public var port: UInt16 = 8080
    /// Threads serving connections (libmicrohttpd's thread pool, each polling with epoll).
    public var threads = 4
    /// An idle or stalled connection is closed after this many seconds.
    public var connectionTimeoutSeconds = 30
    /// Connections beyond this number are refused.
    public var maximumConnections = 1000
    /// A larger body is answered 413 `payload_too_large`; one announced by Content-Length is
    /// refused before it is read.
    public var maximumBodySize = 4 * 1024 * 1024
    /// Called once per request, after the answer was queued, on the thread that served it.
    public var log: (@Sendable (SyncRequestLog) -> Void)?

    /// The defaults: 127.0.0.1:8080, 4 threads, 30 s timeout, 1000 connections, 4 MiB bodies.
    public init() {}
}

/// What the server logs of one request: never a token or a row value.
public struct SyncRequestLog: Sendable, CustomStringConvertible {
    /// The HTTP method.
    public var method: String
    /// The path.
    public var path: String
    /// The account, when the token was valid.
    public var account: String?
    /// The status answered.
    public var status: Int
    /// From the request's headers to the queued answer.
    public var duration: Duration
    /// For a 500, what failed inside (store errors name SQL, never bound values).
    public var internalError: String?

    /// One line: `POST /v1/post-data account=alice status=200 3.2ms`.
    public var description: String {
        let milliseconds = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        var line = "\(method) \(path) account=\(account ?? "-") status=\(status) "
        line += String(format: "%.1fms", milliseconds)
        if let internalError { line += " error=\(internalError)" }
        return line
    }
}
