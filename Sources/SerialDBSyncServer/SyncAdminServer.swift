import CMicroHTTPD
import Foundation

/// The admin listener of a ``SyncServer`` (``SyncServerOptions/adminPort``): a second
/// libmicrohttpd daemon, on its own address, that answers `GET` only and never the protocol's
/// calls (nor does the public listener answer these):
/// - `/metrics`: ``SyncMetricsSnapshot/prometheusText(currentVersion:)``;
/// - `/healthz`: 200 when the store reads its version counter within a second, 503 otherwise;
/// - `/`: the status page (``SyncStatusPage``).
///
/// Every call into the store goes through ``BoundedStoreCalls``, so a hung store makes the
/// listener answer "unavailable", never hang with it.
final class SyncAdminServer: @unchecked Sendable {
    // Safe to share: everything but `daemon` is immutable (`port` is written in init, before
    // the object is published); `daemon` is written in init and once in stop(), which the
    // owning SyncServer calls once. libmicrohttpd calls back on its own threads.

    /// How long the health check waits for the store, in seconds.
    static let healthDeadline: TimeInterval = 1
    /// How long the status page waits for the store's counts, in seconds (they cost a scan).
    static let summaryDeadline: TimeInterval = 5

    let host: String
    private(set) var port: UInt16 = 0
    private let service: SyncService
    private let metrics: SyncMetrics
    private let errors: RecentErrors
    private let publicURL: URL
    private let history: RequestHistory
    private let storeCalls = BoundedStoreCalls()
    private var daemon: OpaquePointer?

    /// Starts listening on `host`:`port` (0: a free port).
    ///
    /// - Throws: ``SyncServerError/Code/cannotStart`` when it cannot bind.
    init(
        host: String, port: UInt16, service: SyncService, metrics: SyncMetrics, errors: RecentErrors, publicURL: URL
    ) throws {
        self.host = host
        self.service = service
        self.metrics = metrics
        self.errors = errors
        self.publicURL = publicURL
        history = RequestHistory(metrics: metrics)
        // As for the public daemon: libmicrohttpd holds a reference until stop() joined its threads.
        let context = Unmanaged.passRetained(self).toOpaque()
        guard
            let started = serialdb_mhd_start(
                host, port, 2, 10, 64, 16, syncAdminAccessHandler, context, nil, nil, nil, nil)
        else {
            history.stop()
            Unmanaged.passUnretained(self).release()
            throw SyncServerError(
                .cannotStart,
                "cannot listen for the admin listener on \(host) port \(port): the host must be an IPv4 or IPv6 "
                    + "address and the port free")
        }
        daemon = started
        self.port = serialdb_mhd_port(started)
    }

    /// The listener's base URL.
    var url: URL { SyncServer.url(host: host, port: port) }

    /// Closes the listener and joins its threads.
    func stop() {
        guard let daemon else { return }
        self.daemon = nil
        MHD_stop_daemon(daemon)
        history.stop()
        Unmanaged.passUnretained(self).release()
    }

    fileprivate func access(
        connection: OpaquePointer?, path: String, method: String, uploadDataSize: UnsafeMutablePointer<Int>?,
        requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    ) -> MHD_Result {
        guard let requestContext, let uploadDataSize else { return .NO }
        // Answered on the first call, from the headers; a body sent anyway is read and dropped.
        if requestContext.pointee != nil {
            uploadDataSize.pointee = 0
            return .YES
        }
        requestContext.pointee = Unmanaged.passUnretained(self).toOpaque()
        let (status, contentType, body) = answer(path: path, method: method)
        return Data(body.utf8).withUnsafeBytes { bytes in
            serialdb_mhd_respond(connection, UInt32(status), bytes.baseAddress, bytes.count, contentType, 0)
        }
    }

    private func answer(path: String, method: String) -> (Int, String, String) {
        let text = "text/plain; charset=utf-8"
        guard ["/", "/metrics", "/healthz"].contains(path) else {
            return (404, text, "not found: the admin listener serves GET /, /metrics and /healthz\n")
        }
        guard method == "GET" || method == "HEAD" else { return (405, text, "\(method) is not allowed: use GET\n") }
        switch path {
        case "/metrics":
            let version = storeCalls.run(within: Self.healthDeadline) { [service] in
                try service.store.currentVersion()
            }
            return (
                200, SyncMetricsSnapshot.prometheusContentType,
                metrics.snapshot().prometheusText(currentVersion: try? version?.get())
            )
        case "/healthz":
            switch storeCalls.run(within: Self.healthDeadline, { [service] in try service.store.currentVersion() }) {
            case .success(let version): return (200, text, "ok: the store answered (version \(version))\n")
            case .failure(let error): return (503, text, "unavailable: the store failed: \(error)\n")
            case nil: return (503, text, "unavailable: the store did not answer within 1 second\n")
            }
        default:
            return (200, "text/html; charset=utf-8", statusPage().html)
        }
    }

    private func statusPage() -> SyncStatusPage {
        let summary: Result<SyncStoreSummary, SyncStatusPage.StoreUnavailable>
        switch storeCalls.run(within: Self.summaryDeadline, { [service] in try service.store.summary() }) {
        case .success(let counts): summary = .success(counts)
        case .failure(let error): summary = .failure(.init(state: "failing", detail: "The store failed: \(error)"))
        case nil:
            summary = .failure(
                .init(
                    state: "not answering",
                    detail: "The store did not answer within \(Int(Self.summaryDeadline)) seconds."))
        }
        let version =
            (try? summary.get()) == nil
            ? nil
            : try? storeCalls.run(within: Self.healthDeadline, { [service] in try service.store.currentVersion() })?
                .get()
        let snapshot = metrics.snapshot()
        return SyncStatusPage(
            metrics: snapshot, recent: SyncStatusPage.windows.map { history.counts(within: $0.seconds, now: snapshot) },
            tables: service.configuration.tables, summary: summary, currentVersion: version, errors: errors.list,
            publicURL: publicURL)
    }
}

private func syncAdminAccessHandler(
    context: UnsafeMutableRawPointer?, connection: OpaquePointer?, url: UnsafePointer<CChar>?,
    method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?, uploadData: UnsafePointer<CChar>?,
    uploadDataSize: UnsafeMutablePointer<Int>?, requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let context else { return .NO }
    return Unmanaged<SyncAdminServer>.fromOpaque(context).takeUnretainedValue().access(
        connection: connection, path: url.map { String(cString: $0) } ?? "",
        method: method.map { String(cString: $0) } ?? "", uploadDataSize: uploadDataSize,
        requestContext: requestContext)
}
