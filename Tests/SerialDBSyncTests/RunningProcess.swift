import Foundation
import SerialDBSync
import SerialDBTestSupport

/// A child process of the tests (the sync server, the `serialdb` tool) that async tests wait
/// for without blocking a cooperative thread: a ``ChildProcess`` (both pipes read at once,
/// every wait bounded) under the names these tests use.
final class RunningProcess: Sendable {
    private let child: ChildProcess

    /// Starts a product built next to the test bundle.
    init(product: String, arguments: [String]) throws {
        child = try ChildProcess(executable: product, arguments: arguments)
    }

    /// Everything printed on standard output so far.
    var printed: String { child.output }

    var isRunning: Bool { child.isRunning }

    /// The first complete line printed, waiting for it.
    func firstLine(timeout: Duration = .seconds(120)) async throws -> String {
        try await child.firstLine(timeout: timeout)
    }

    /// The URL of the line "listening on http://HOST:PORT", waiting for it.
    func listeningURL(timeout: Duration = .seconds(120)) async throws -> URL {
        try await child.listeningURL(timeout: timeout)
    }

    /// Sends `signal` and waits for the process to exit; returns its status.
    @discardableResult
    func stop(_ signal: Int32 = SIGTERM, timeout: Duration = .seconds(120)) async throws -> Int32 {
        try await child.stop(signal, timeout: timeout)
    }

    /// Waits for the process to exit on its own; returns its status.
    @discardableResult
    func waitForExit(timeout: Duration = .seconds(120)) async throws -> Int32 {
        try await child.exitStatus(timeout: timeout)
    }
}

/// A `serialdb-sync-server` on a free port, over a store file in `directory`.
final class SyncServerProcess: Sendable {
    let process: RunningProcess
    let url: URL

    static let configV1 = """
        {"tables": [
           {"name": "note", "scope": "account", "struct_version": 1,
            "schema": "CREATE TABLE note(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, body TEXT)"},
           {"name": "country", "scope": "global", "struct_version": 1,
            "schema": "CREATE TABLE country(code TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL)"}],
         "tokens": [{"token": "t-alice", "account": "alice"}, {"token": "t-bob", "account": "bob"}]}
        """

    /// Writes `config` and starts the server on the store `server.sqlite` of `directory`, or
    /// on the store that `store` names (`["--postgres", URL]`, say).
    init(in directory: TemporaryDirectory, config: String = SyncServerProcess.configV1, store: [String]? = nil)
        async throws
    {
        let configPath = directory.path("sync.json")
        try Data(config.utf8).write(to: URL(fileURLWithPath: configPath))
        process = try RunningProcess(
            product: "serialdb-sync-server",
            arguments: ["--config", configPath] + (store ?? ["--db", directory.path("server.sqlite")]) + [
                "--port", "0",
            ])
        url = try await process.listeningURL()
    }

    func transport(token: String = "t-alice") -> HTTPSyncTransport {
        HTTPSyncTransport(baseURL: url, token: token)
    }

    /// SIGTERM: the server finishes what is in flight and exits 0.
    func stop() async throws {
        let status = try await process.stop()
        guard status == 0 else { throw ServerProcessError(message: "the server exited with status \(status)") }
    }
}

/// A child process did not behave: it exited early, printed something else, or failed.
struct ServerProcessError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
