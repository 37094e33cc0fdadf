import Foundation
import SerialDBTestSupport

/// The real `serialdb-sync-server` executable as a child process, for the tests that kill it:
/// a ``ChildProcess`` (both pipes read at once, bounded waits that suspend) under the names
/// these tests use.
final class ServerProcess: Sendable {
    private let child: ChildProcess

    /// Starts the executable with `arguments`.
    init(arguments: [String]) throws {
        child = try ChildProcess(executable: "serialdb-sync-server", arguments: arguments)
    }

    /// Standard output so far.
    var standardOutput: String { child.output }
    /// Standard error so far.
    var standardError: String { child.errors }

    /// The URL of the line "listening on http://HOST:PORT".
    func listeningURL(timeout: Duration = .seconds(120)) async throws -> URL {
        try await child.listeningURL(timeout: timeout)
    }

    /// Sends a signal.
    func signal(_ number: Int32) {
        child.signal(number)
    }

    /// Waits for the process to end and returns its exit status (or the signal that ended it).
    func exitStatus(timeout: Duration = .seconds(120)) async throws -> Int32 {
        try await child.exitStatus(timeout: timeout)
    }
}
