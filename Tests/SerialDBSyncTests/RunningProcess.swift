import Foundation
import SerialDBSync
import SerialDBTestSupport

/// A child process of the tests (the sync server, the `serialdb` tool) that async tests can
/// wait for without blocking a cooperative thread: every wait polls and is bounded.
final class RunningProcess: @unchecked Sendable {
    // Safe to share: `process` is configured before `run()` and then only asked for its state
    // and pid (thread-safe); the reader locks its text.
    private let process = Process()
    private let output = Pipe()
    private let reader: PipeReader

    /// Starts a product built next to the test bundle; its standard error is discarded (the
    /// server logs a line per request there, and a full pipe would block it).
    init(product: String, arguments: [String]) throws {
        process.executableURL = try ChildProcess.builtProduct(named: product)
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        reader = PipeReader(output.fileHandleForReading)
        try process.run()
    }

    /// Everything printed so far.
    var printed: String { reader.text }

    var isRunning: Bool { process.isRunning }

    /// The first complete line printed, waiting for it.
    func firstLine(timeout: Duration = .seconds(120)) async throws -> String {
        try await waitUntil(timeout: timeout) { self.printed.contains("\n") || !self.isRunning }
        guard let line = printed.split(separator: "\n", omittingEmptySubsequences: false).first, printed.contains("\n")
        else {
            throw ServerProcessError(message: "the process exited without printing a line")
        }
        return String(line)
    }

    /// Sends `signal` and waits for the process to exit; returns its status.
    @discardableResult
    func stop(_ signal: Int32 = SIGTERM, timeout: Duration = .seconds(120)) async throws -> Int32 {
        if process.isRunning { kill(process.processIdentifier, signal) }
        return try await waitForExit(timeout: timeout)
    }

    /// Waits for the process to exit on its own; returns its status.
    @discardableResult
    func waitForExit(timeout: Duration = .seconds(120)) async throws -> Int32 {
        try await waitUntil(timeout: timeout) { !self.isRunning }
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
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

    /// Writes `config` and starts the server on the store `server.sqlite` of `directory`.
    init(in directory: TemporaryDirectory, config: String = SyncServerProcess.configV1) async throws {
        let configPath = directory.path("sync.json")
        try Data(config.utf8).write(to: URL(fileURLWithPath: configPath))
        process = try RunningProcess(
            product: "serialdb-sync-server",
            arguments: ["--config", configPath, "--db", directory.path("server.sqlite"), "--port", "0"])
        let line = try await process.firstLine()
        guard line.hasPrefix("listening on "), let url = URL(string: String(line.dropFirst("listening on ".count)))
        else {
            throw ServerProcessError(message: "the server's first line is `\(line)`")
        }
        self.url = url
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
