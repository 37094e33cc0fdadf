import Foundation
import SerialDBSyncWire

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
    /// A request must arrive whole (line, headers and body) within this many seconds, and its
    /// answer be read within as many again, however steadily the client trickles bytes; the
    /// connection is closed otherwise. The time the server itself takes to answer is not counted.
    public var requestTimeoutSeconds = 60
    /// Connections beyond this number are refused.
    public var maximumConnections = 1000
    /// Connections from one client address beyond this number are refused, so that one client
    /// cannot take every connection.
    public var maximumConnectionsPerAddress = 100
    /// A larger body is answered 413 `payload_too_large`; one announced by Content-Length is
    /// refused before it is read.
    public var maximumBodySize = SyncLimits.defaultBodyLimit
    /// Called once per request, after the answer was queued, on the thread that served it.
    public var log: (@Sendable (SyncRequestLog) -> Void)?
    /// The admin listener's port (`/metrics`, `/healthz`, the status page at `/`; see
    /// ``SyncServer/adminURL``); 0 picks a free one; `nil`, the default, starts none.
    public var adminPort: UInt16?
    /// The admin listener's address: an IPv4 or IPv6 literal, loopback unless told otherwise.
    public var adminHost = "127.0.0.1"

    /// The defaults: 127.0.0.1:8080, 4 threads, 30 s idle timeout, 60 s to send a request and
    /// to read its answer, 1000 connections, 100 per client address, 4 MiB bodies.
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
    /// The call the path names.
    public var call = SyncRequestCall.other
    /// The rows the request carried: changes served, mutations answered.
    public var rows = 0
    /// When the answer was queued.
    public var time = Date()

    /// One line: `POST /v1/post-data account=alice status=200 3.2ms`. Control characters and
    /// backslashes of the method, path, account and error are escaped (`\x1b`, `\\`), and so
    /// are spaces but the error's, so that what a client sends can neither split the line, nor
    /// forge a field, nor drive the terminal showing it.
    public var description: String {
        let milliseconds = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        let field = { (text: String) in Self.escaped(text, spaces: true) }
        var line = "\(field(method)) \(field(path)) account=\(account.map(field) ?? "-") "
        line += "status=\(status) " + String(format: "%.1fms", milliseconds)
        if let internalError { line += " error=\(Self.escaped(internalError, spaces: false))" }
        return line
    }

    /// `text` with C0 and C1 control characters, DEL, the backslash and (when `spaces`) the
    /// space written as escapes.
    static func escaped(_ text: String, spaces: Bool) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x5C: result += "\\\\"
            case 0x20 where spaces: result += "\\x20"
            case 0..<0x20, 0x7F: result += String(format: "\\x%02x", scalar.value)
            case 0x80..<0xA0: result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
