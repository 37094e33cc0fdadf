import Dispatch
import Foundation
import SerialDB
import SerialDBSync
import SerialDBSyncServer
import SerialDBSyncWire
import Synchronization

/// The sync client side of the sync workloads: a `SyncClient` on an app database, talking to a
/// `SyncServer` (SQLite store) over loopback HTTP, the way an app syncs. Unlike ``SyncSide``,
/// which speaks the protocol by hand, these time everything the client does: reading the
/// outbox and settling each upload result, or creating the table from FetchSchema and applying
/// each downloaded page in a transaction with its cursor.
///
/// The workload's path is the measured device's database; the server's store and the seeding
/// device live beside it and are removed afterwards.
enum SyncClientSide {
    /// A device inserts `1...rows` into `t` (untimed: the outbox triggers record them), then one
    /// timed `sync()` uploads them in requests of 500. The digest is of the server's rows.
    static func upload(path: String, rows: Int) throws -> SideRun {
        try withServer(path: path) { server in
            let device = try DatabaseQueue(path: path, configuration: SerialDBSide.configuration)
            defer { try? device.close() }
            let client = try SyncClient(queue: device, transport: transport(server))
            _ = try blocking { try await client.sync() }  // creates `t` from the server's schema
            try insertRows(rows, into: device)
            var uploaded = 0
            let cpu = ProcessCPUTime()
            let elapsed = try ContinuousClock().measure {
                uploaded = try blocking { try await client.sync() }.uploaded
            }
            cpu.report("sync_client_upload", rows: rows, elapsed: elapsed)
            return SideRun(elapsed: elapsed, digest: try SyncSide.digest(server, operations: uploaded))
        }
    }

    /// A seeding device uploads `1...rows` (untimed); then one timed `sync()` of a fresh device
    /// creates `t` and downloads them, a transaction per page of 500. The digest is of the new
    /// device's table, read by the C verifier.
    static func download(path: String, rows: Int) throws -> SideRun {
        try withServer(path: path) { server in
            try seed(server, rows: rows, path: path + "-seeder")
            let device = try DatabaseQueue(path: path, configuration: SerialDBSide.configuration)
            let client = try SyncClient(queue: device, transport: transport(server))
            var downloaded = 0
            let elapsed = try ContinuousClock().measure {
                downloaded = try blocking { try await client.sync() }.downloaded
            }
            try device.close()
            return SideRun(elapsed: elapsed, digest: try RawConnection.digest(path: path, operations: downloaded))
        }
    }

    private static func withServer<T>(path: String, _ body: (SyncServer) throws -> T) throws -> T {
        let storePath = path + "-server"
        let store = try SQLiteSyncStore(path: storePath)
        var options = SyncServerOptions()
        options.port = 0
        let server = try SyncServer(
            configuration: try SyncServerConfiguration(json: Data(SyncSide.configurationJSON.utf8)), store: store,
            options: options)
        defer {
            server.stop()
            try? store.close()
            for extra in [storePath, path + "-seeder"] {
                for suffix in ["", "-wal", "-shm", "-journal"] {
                    try? FileManager.default.removeItem(atPath: extra + suffix)
                }
            }
        }
        return try body(server)
    }

    private static func transport(_ server: SyncServer) -> HTTPSyncTransport {
        HTTPSyncTransport(baseURL: server.url, token: "bench-token")
    }

    private static func seed(_ server: SyncServer, rows: Int, path: String) throws {
        let seeder = try DatabaseQueue(path: path, configuration: SerialDBSide.configuration)
        defer { try? seeder.close() }
        let client = try SyncClient(queue: seeder, transport: transport(server))
        _ = try blocking { try await client.sync() }
        try insertRows(rows, into: seeder)
        let report = try blocking { try await client.sync() }
        guard report.uploaded == rows else {
            throw BenchError.sync("the seeding device uploaded \(report.uploaded) of \(rows) rows")
        }
    }

    private static func insertRows(_ rows: Int, into queue: DatabaseQueue) throws {
        try queue.write { db in
            let insert = try db.cachedStatement(sql: SerialDBSide.insertSQL)
            for i in 1...rows {
                try insert.execute(values: i, i, "row-\(i)", Double(i) * 0.5)
            }
        }
    }

    /// Runs an async call to completion from `bench`'s synchronous main thread, which is not a
    /// cooperative one, so blocking it on a semaphore starves nothing.
    private static func blocking<T: Sendable>(_ call: @escaping @Sendable () async throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<T, any Error>?>(nil)
        Task {
            let result: Result<T, any Error>
            do { result = .success(try await call()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        guard done.wait(timeout: .now() + 300) == .success else { throw BenchError.sync("a sync did not finish") }
        return try outcome.withLock { $0! }.get()
    }
}
