import Foundation
import SerialDBTestSupport

/// The real `serialdb-sync-server` executable as a child process, for the tests that kill it.
/// Every wait polls with `Task.sleep` and is bounded; nothing blocks a cooperative thread.
final class ServerProcess: @unchecked Sendable {
    // Safe to share: `process` is used from the test's task only; the readers lock their text.
    private let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    private let printed: PipeReader
    private let logged: PipeReader

    /// Starts the executable with `arguments`.
    init(arguments: [String]) throws {
        process.executableURL = try ChildProcess.builtProduct(named: "serialdb-sync-server")
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = errors
        printed = PipeReader(output.fileHandleForReading)
        logged = PipeReader(errors.fileHandleForReading)
        try process.run()
    }

    /// Standard output so far.
    var standardOutput: String { printed.text }
    /// Standard error so far.
    var standardError: String { logged.text }

    /// The URL of the first line, "listening on http://HOST:PORT".
    func listeningURL(timeout: Duration = .seconds(120)) async throws -> URL {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let line = standardOutput.split(separator: "\n").first, standardOutput.contains("\n") {
                guard line.hasPrefix("listening on "), let url = URL(string: String(line.dropFirst(13))) else {
                    throw ServerProcessError(message: "unexpected first line: \(line)")
                }
                return url
            }
            guard process.isRunning else {
                throw ServerProcessError(message: "the server exited: \(standardError)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw ServerProcessError(message: "the server printed no address in time")
    }

    /// Sends a signal.
    func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// Waits for the process to end and returns its exit status (or the signal that ended it).
    func exitStatus(timeout: Duration = .seconds(120)) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else {
                kill(process.processIdentifier, SIGKILL)
                throw ServerProcessError(message: "the server did not exit in time")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        // Let the pipes drain what the process wrote last.
        try await Task.sleep(for: .milliseconds(50))
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

/// The child did not do what a test waited for.
struct ServerProcessError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
