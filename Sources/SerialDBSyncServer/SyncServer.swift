import CMicroHTTPD
import Foundation
import SerialDB

/// The sync server: the protocol of ``SyncService`` over HTTP/1.1, served by libmicrohttpd with
/// its own thread pool (epoll), keep-alive, an idle timeout, a deadline for each request, a
/// connection limit (overall and per client address) and a body limit (413 before the body is
/// read when Content-Length announces more). A request without a valid token is answered 401
/// from its headers, before any of its body is read.
///
/// ```swift
/// var options = SyncServerOptions()
/// options.port = 0
/// let server = try SyncServer(configuration: configuration, store: store, options: options)
/// print("listening on http://\(server.host):\(server.port)")
/// ...
/// server.stop()          // finishes the requests in flight
/// try store.close()
/// ```
///
/// Every request is counted in ``metrics``; with ``SyncServerOptions/adminPort`` set, a second
/// listener (``adminURL``) serves them to Prometheus at `/metrics`, a health check at
/// `/healthz` and a status page for operators at `/`.
public final class SyncServer: @unchecked Sendable {
    // Safe to share: `service`, `host` and the options are immutable; `boundPort` and `admin`
    // are written once in init, before the object is published; `metrics` and `recentErrors`
    // are thread-safe; `daemon`, `inFlight` and `stopping` are
    // behind `lock`; libmicrohttpd calls back on its own threads, and each request's state is
    // used by one of them at a time.

    /// The protocol this server speaks.
    public let service: SyncService
    /// The address it is bound to.
    public let host: String
    /// The port it listens on (the one picked when ``SyncServerOptions/port`` was 0).
    public var port: UInt16 { boundPort }
    /// What it has answered so far.
    public let metrics = SyncMetrics()
    /// The admin listener's base URL, when ``SyncServerOptions/adminPort`` started one.
    public var adminURL: URL? { admin?.url }
    private var admin: SyncAdminServer?
    private let recentErrors = RecentErrors()
    private let options: SyncServerOptions
    private let deadlines: RequestDeadlines
    private let lock = NSCondition()
    private var daemon: OpaquePointer?
    private var inFlight = 0
    private var stopping = false
    private var boundPort: UInt16 = 0

    /// Starts serving `configuration` from `store`.
    ///
    /// - Throws: ``SyncServerError/Code/cannotStart`` when the host is not an address literal
    ///   or the daemon cannot bind (port taken, no permission).
    public convenience init(
        configuration: SyncServerConfiguration, store: any SyncStore, options: SyncServerOptions = SyncServerOptions()
    ) throws {
        try self.init(service: SyncService(configuration: configuration, store: store), options: options)
    }

    /// Starts serving `service`.
    ///
    /// - Throws: ``SyncServerError/Code/cannotStart``, as above.
    public init(service: SyncService, options: SyncServerOptions = SyncServerOptions()) throws {
        self.service = service
        self.options = options
        host = options.host
        deadlines = RequestDeadlines(timeout: .seconds(max(1, options.requestTimeoutSeconds)))
        // libmicrohttpd calls back with `self` as context. The daemon holds a reference until
        // stop() has joined its threads, so no callback can outlive the object; a server
        // nobody stops serves until the process ends.
        let context = Unmanaged.passRetained(self).toOpaque()
        let started = serialdb_mhd_start(
            options.host, options.port, UInt32(max(1, options.threads)),
            UInt32(max(1, options.connectionTimeoutSeconds)),
            UInt32(max(1, options.maximumConnections)), UInt32(max(1, options.maximumConnectionsPerAddress)),
            syncServerAccessHandler, context, syncServerRequestCompleted, context, syncServerConnectionNotified,
            context)
        guard let started else {
            deadlines.stop()
            Unmanaged.passUnretained(self).release()
            throw SyncServerError(
                .cannotStart,
                "cannot listen on \(options.host) port \(options.port): the host must be an IPv4 or IPv6 address "
                    + "and the port free")
        }
        lock.withLock { daemon = started }
        boundPort = serialdb_mhd_port(started)
        if let adminPort = options.adminPort {
            do {
                admin = try SyncAdminServer(
                    host: options.adminHost, port: adminPort, service: service, metrics: metrics, errors: recentErrors,
                    publicURL: url)
            } catch {
                stop()
                throw error
            }
        }
    }

    /// The base URL (`http://127.0.0.1:8080`).
    public var url: URL { Self.url(host: host, port: port) }

    static func url(host: String, port: UInt16) -> URL {
        let literal = host.contains(":") ? "[\(host)]" : host
        return URL(string: "http://\(literal):\(port)")!
    }

    /// Stops accepting connections, waits up to `gracePeriod` for the requests in flight to be
    /// answered, then closes every connection and joins the server's threads, and closes the
    /// admin listener. The store is left open: close it afterwards. Stopping twice is harmless.
    /// A server serves until it is stopped, whether or not anything still refers to it.
    public func stop(gracePeriod: Duration = .seconds(30)) {
        let quiesced: OpaquePointer? = lock.withLock {
            guard let daemon, !stopping else { return nil }
            stopping = true
            return daemon
        }
        guard let quiesced else { return }
        let listener = MHD_quiesce_daemon(quiesced)
        let deadline = Date().addingTimeInterval(
            Double(gracePeriod.components.seconds) + Double(gracePeriod.components.attoseconds) / 1e18)
        lock.withLock {
            while inFlight > 0 && lock.wait(until: deadline) {}
        }
        MHD_stop_daemon(quiesced)
        deadlines.stop()
        if listener >= 0 { Foundation.close(listener) }
        lock.withLock { daemon = nil }
        admin?.stop()
        // The daemon's threads are joined: its reference can go.
        Unmanaged.passUnretained(self).release()
    }

    // MARK: - Called by libmicrohttpd

    fileprivate func access(
        connection: OpaquePointer?, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
        uploadData: UnsafePointer<CChar>?, uploadDataSize: UnsafeMutablePointer<Int>?,
        requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    ) -> MHD_Result {
        guard let requestContext, let uploadDataSize else { return .NO }
        guard let existing = requestContext.pointee else {
            // First call: the headers are in, the body is not read yet. The request keeps the
            // configuration of this moment, whatever a reload does before its body is in.
            let state = RequestState(
                method: method.map { String(cString: $0) } ?? "", path: url.map { String(cString: $0) } ?? "",
                configuration: service.configuration)
            requestContext.pointee = Unmanaged.passRetained(state).toOpaque()
            lock.withLock { inFlight += 1 }
            // Refused from the headers alone (no or unknown token, unknown path, wrong method):
            // answered now, so the body is never read, let alone buffered.
            if let refusal = service.refusal(
                method: state.method, path: state.path, authorization: header(connection, "Authorization"),
                configuration: state.configuration)
            {
                state.answered = true
                return answer(connection, state: state, response: refusal)
            }
            if let length = header(connection, "Content-Length").flatMap({ Int($0) }), length > options.maximumBodySize
            {
                state.answered = true
                return answer(connection, state: state, error: .payloadTooLarge(limit: options.maximumBodySize))
            }
            return .YES
        }
        let state = Unmanaged<RequestState>.fromOpaque(existing).takeUnretainedValue()
        if uploadDataSize.pointee > 0 {
            // More body: keep it unless it is over the limit (a chunked body announces no length).
            let count = uploadDataSize.pointee
            if !state.tooLarge, !state.answered, let uploadData {
                if state.body.count + count > options.maximumBodySize {
                    state.tooLarge = true
                    state.body = Data()
                } else {
                    state.body.append(UnsafeRawPointer(uploadData).assumingMemoryBound(to: UInt8.self), count: count)
                }
            }
            uploadDataSize.pointee = 0
            return .YES
        }
        guard !state.answered else { return .YES }
        state.answered = true
        if state.tooLarge {
            return answer(connection, state: state, error: .payloadTooLarge(limit: options.maximumBodySize))
        }
        // The request is in: the time the store takes is the server's, not the client's.
        deadlines.pause(connection)
        let response = service.handle(
            SyncRequest(
                method: state.method, path: state.path, authorization: header(connection, "Authorization"),
                body: state.body), configuration: state.configuration)
        return answer(connection, state: state, response: response)
    }

    fileprivate func completed(
        connection: OpaquePointer?, requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    ) {
        // A kept-alive connection's next request gets a whole deadline of its own.
        deadlines.restart(connection)
        guard let requestContext, let existing = requestContext.pointee else { return }
        Unmanaged<RequestState>.fromOpaque(existing).release()
        requestContext.pointee = nil
        lock.withLock {
            inFlight -= 1
            if inFlight == 0 { lock.broadcast() }
        }
    }

    /// A header's value, whole: a NUL inside it is kept (and refused by whoever reads it), not
    /// taken as its end.
    private func header(_ connection: OpaquePointer?, _ name: String) -> String? {
        var value: UnsafePointer<CChar>?
        var length = 0
        let found = name.withCString { key in
            MHD_lookup_connection_value_n(connection, .HEADER_KIND, key, strlen(key), &value, &length)
        }
        guard found == .YES, let value else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: value, count: length), as: UTF8.self)
    }

    private func answer(_ connection: OpaquePointer?, state: RequestState, error: SyncRequestError) -> MHD_Result {
        answer(connection, state: state, response: SyncResponse(status: error.status, body: error.body))
    }

    fileprivate func connection(_ connection: OpaquePointer?, notified code: MHD_ConnectionNotificationCode) {
        if serialdb_mhd_connection_started(code) != 0, let connection {
            metrics.connectionOpened()
            deadlines.opened(connection, socket: serialdb_mhd_connection_socket(connection))
        } else {
            metrics.connectionClosed()
            deadlines.closed(connection)
        }
    }

    private func answer(_ connection: OpaquePointer?, state: RequestState, response: SyncResponse) -> MHD_Result {
        // The client has the whole deadline again to read the answer.
        deadlines.restart(connection)
        let closing = lock.withLock { stopping }
        // Counted before it is queued: a client that has its answer finds it counted.
        let call = SyncRequestCall(path: state.path)
        let duration = ContinuousClock.now - state.started
        metrics.record(
            call: call, status: response.status, duration: duration, rows: response.rows,
            storeFailed: response.internalError != nil)
        if let internalError = response.internalError {
            recentErrors.add(
                .init(
                    time: Date(), call: call, account: response.account, status: response.status, message: internalError
                ))
        }
        let result = response.body.withUnsafeBytes { bytes in
            serialdb_mhd_respond(
                connection, UInt32(response.status), bytes.baseAddress, bytes.count, "application/json",
                closing ? 1 : 0)
        }
        options.log?(
            SyncRequestLog(
                method: state.method, path: state.path, account: response.account, status: response.status,
                duration: duration, internalError: response.internalError, call: call, rows: response.rows.total))
        return result
    }
}

/// One request's state between libmicrohttpd's calls: kept in its `con_cls` pointer.
private final class RequestState {
    let method: String
    let path: String
    let configuration: SyncServerConfiguration
    let started = ContinuousClock.now
    var body = Data()
    var tooLarge = false
    var answered = false

    init(method: String, path: String, configuration: SyncServerConfiguration) {
        self.method = method
        self.path = path
        self.configuration = configuration
    }
}

private func syncServerAccessHandler(
    context: UnsafeMutableRawPointer?, connection: OpaquePointer?, url: UnsafePointer<CChar>?,
    method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?, uploadData: UnsafePointer<CChar>?,
    uploadDataSize: UnsafeMutablePointer<Int>?, requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let context else { return .NO }
    return Unmanaged<SyncServer>.fromOpaque(context).takeUnretainedValue().access(
        connection: connection, url: url, method: method, uploadData: uploadData, uploadDataSize: uploadDataSize,
        requestContext: requestContext)
}

private func syncServerRequestCompleted(
    context: UnsafeMutableRawPointer?, connection: OpaquePointer?,
    requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, reason: MHD_RequestTerminationCode
) {
    guard let context else { return }
    Unmanaged<SyncServer>.fromOpaque(context).takeUnretainedValue().completed(
        connection: connection, requestContext: requestContext)
}

private func syncServerConnectionNotified(
    context: UnsafeMutableRawPointer?, connection: OpaquePointer?,
    socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, code: MHD_ConnectionNotificationCode
) {
    guard let context else { return }
    Unmanaged<SyncServer>.fromOpaque(context).takeUnretainedValue().connection(connection, notified: code)
}
