import Foundation
import SerialDBSyncServer
import SerialDBTestSupport

/// An in-process server on a free port over a new store, with its request log kept.
final class RunningSyncServer: Sendable {
    let directory: TemporaryDirectory
    /// Where the store keeps its data (the database URL of a PostgreSQL store).
    let location: StoreLocation
    let store: any SyncStore
    let server: SyncServer
    let log = Locked<[SyncRequestLog]>([])

    init(
        _ kind: SyncStoreKind, configuration: SyncServerConfiguration? = nil, clock: TestClock? = nil,
        configure: (inout SyncServerOptions) -> Void = { _ in }
    ) throws {
        directory = try TemporaryDirectory()
        location = try kind.makeLocation(in: directory)
        store = try location.open(clock: clock)
        var options = SyncServerOptions()
        options.port = 0
        let log = self.log
        options.log = { entry in log.withLock { $0.append(entry) } }
        configure(&options)
        server = try SyncServer(
            configuration: try configuration ?? SyncFixtures.configuration(), store: store, options: options)
    }

    /// A client with a token (`nil`: none).
    func client(_ token: String?) -> SyncHTTPClient {
        SyncHTTPClient(baseURL: server.url, token: token)
    }

    var alice: SyncHTTPClient { client("t-alice") }
    var bob: SyncHTTPClient { client("t-bob") }

    /// Stops the server and closes the store.
    func stop() throws {
        server.stop()
        try store.close()
    }
}
