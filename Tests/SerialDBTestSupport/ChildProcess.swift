import Foundation

/// A child process of the tests (the `serialdb` tool, the sync server, the stress harness, the
/// test child), talking over pipes. The one place the test suites start a process:
///
/// - standard output and standard error are each read on a thread of their own with blocking
///   reads (``PipeReader``, never `readabilityHandler`), at the same time, so a child that
///   writes much to one of them never blocks on a full pipe;
/// - every wait is bounded and polls `isRunning`, blocking (`waitForLine`, `waitForExit`) for
///   synchronous tests, suspending (`line(withPrefix:)`, `exitStatus`) for async ones, which
///   must not park a cooperative thread;
/// - a child still running when the helper goes away is killed with SIGKILL.
/// - the child is started by ``SpawnedProcess`` (`posix_spawn`), not Foundation's `Process`,
///   whose start reads out of bounds when many descriptors are open (see there).
public final class ChildProcess: @unchecked Sendable {
    // Safe to share: `process` is thread-safe, the pipes are set up in init, and the stdin
    // pipe is written by the test that owns the child. The readers lock their own text.
    private let process: SpawnedProcess
    private let input: Pipe
    private let outputReader: PipeReader
    private let errorReader: PipeReader
    /// The program, for messages.
    public let name: String

    /// Starts `name` (a product built next to the test bundle) with `arguments`, its standard
    /// input a pipe (see ``send(_:)``).
    public convenience init(executable name: String, arguments: [String]) throws {
        try self.init(executableURL: try Self.builtProduct(named: name), arguments: arguments)
    }

    /// Starts the program at `executableURL` (a script of the repository, say) the same way,
    /// with `environment` in place of this process's own when it is given.
    public init(executableURL: URL, arguments: [String], environment: [String: String]? = nil) throws {
        name = executableURL.lastPathComponent
        let input = Pipe()
        self.input = input
        let output = Pipe()
        let errors = Pipe()
        outputReader = PipeReader(output.fileHandleForReading)
        errorReader = PipeReader(errors.fileHandleForReading)
        defer {
            // Only the child writes now (or nobody, if it did not start): the pipes end when it
            // (and any child it started) exits. The child's end of its input is its own.
            try? output.fileHandleForWriting.close()
            try? errors.fileHandleForWriting.close()
            try? input.fileHandleForReading.close()
        }
        process = try SpawnedProcess(
            path: executableURL.path, arguments: [executableURL.path] + arguments,
            environment: environment ?? ProcessInfo.processInfo.environment,
            standardInput: input.fileHandleForReading.fileDescriptor,
            standardOutput: output.fileHandleForWriting.fileDescriptor,
            standardError: errors.fileHandleForWriting.fileDescriptor)
    }

    deinit {
        process.signal(SIGKILL)
    }

    /// Finds an executable product of this package: beside the test bundle, where SwiftPM
    /// builds every product of the package.
    public static func builtProduct(named name: String) throws -> URL {
        let candidates = [
            Bundle.main.bundleURL.appendingPathComponent(name),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name),
        ]
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw ChildProcessError(
                message: "cannot find the built product \(name); looked in \(candidates.map(\.path))")
        }
        return found
    }

    // MARK: - State

    /// Standard output so far.
    public var output: String { outputReader.text }
    /// Standard error so far.
    public var errors: String { errorReader.text }
    /// Standard output so far (the name the migration tests use).
    public var printed: String { output }
    /// Whether the child has not exited yet.
    public var isRunning: Bool { process.isRunning }
    /// The child's process identifier.
    public var processIdentifier: Int32 { process.pid }

    /// The first complete line of standard output that starts with `prefix`, if printed yet.
    public func printedLine(withPrefix prefix: String) -> String? {
        let text = output
        guard let end = text.lastIndex(of: "\n") else { return nil }
        return text[..<end].split(separator: "\n").first { $0.hasPrefix(prefix) }.map(String.init)
    }

    // MARK: - Talking to it

    /// Sends a line to the child's standard input.
    public func send(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Sends `signal` (no effect once the child has exited).
    public func signal(_ number: Int32) {
        process.signal(number)
    }

    /// Kills the child with SIGKILL, as a crash or the OOM killer would.
    public func kill() {
        signal(SIGKILL)
    }

    // MARK: - Blocking waits, for synchronous tests

    /// Waits until the child printed the line `line` (true), or `seconds` passed or it exited
    /// without printing it (false).
    public func waitForLine(_ line: String, seconds: Double = 30) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if output.split(separator: "\n").contains(where: { $0 == line }) { return true }
            if !isRunning && outputReader.isFinished {
                return output.split(separator: "\n").contains(where: { $0 == line })
            }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return false
    }

    /// Waits at most `seconds` for the child to exit and for both pipes to end, and returns its
    /// exit status (or the signal that ended it). A child still running then is killed.
    ///
    /// - Throws: ``ChildProcessError`` when it did not exit in time.
    @discardableResult
    public func waitForExit(seconds: Double = 120) throws -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        while !hasEnded {
            guard Date() < deadline else { throw timedOut("exit", seconds: seconds) }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return endStatus
    }

    // MARK: - Suspending waits, for async tests

    /// The first line of standard output that starts with `prefix`, waiting at most `timeout`.
    ///
    /// - Throws: ``ChildProcessError`` when the child exits without printing it, or it does
    ///   not come in time (the child is then killed).
    public func line(withPrefix prefix: String, timeout: Duration = .seconds(120)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let line = printedLine(withPrefix: prefix) { return line }
            if hasEnded {
                throw ChildProcessError(
                    message: "\(name) exited (status \(endStatus)) without printing a line "
                        + "starting with `\(prefix)`; it printed `\(output)`, and on standard error `\(errors)`")
            }
            guard ContinuousClock.now < deadline else { throw timedOut("a line `\(prefix)…`", timeout: timeout) }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// The URL a server prints on its line "listening on http://HOST:PORT".
    public func listeningURL(timeout: Duration = .seconds(120)) async throws -> URL {
        let prefix = "listening on "
        let line = try await line(withPrefix: prefix, timeout: timeout)
        guard let url = URL(string: String(line.dropFirst(prefix.count))) else {
            throw ChildProcessError(message: "\(name) printed `\(line)`, which holds no URL")
        }
        return url
    }

    /// The first complete line of standard output, whatever it says.
    public func firstLine(timeout: Duration = .seconds(120)) async throws -> String {
        try await line(withPrefix: "", timeout: timeout)
    }

    /// Waits at most `timeout` for the child to exit and for both pipes to end, and returns its
    /// exit status (or the signal that ended it). A child still running then is killed.
    @discardableResult
    public func exitStatus(timeout: Duration = .seconds(120)) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while !hasEnded {
            guard ContinuousClock.now < deadline else { throw timedOut("exit", timeout: timeout) }
            try await Task.sleep(for: .milliseconds(5))
        }
        return endStatus
    }

    /// Sends `signal` and waits for the child to exit; returns its status.
    @discardableResult
    public func stop(_ signal: Int32 = SIGTERM, timeout: Duration = .seconds(120)) async throws -> Int32 {
        self.signal(signal)
        return try await exitStatus(timeout: timeout)
    }

    // MARK: - Helpers

    /// Exited, and everything it wrote has been read.
    private var hasEnded: Bool { !process.isRunning && outputReader.isFinished && errorReader.isFinished }

    /// The exit code, or the signal that ended it; read once ``hasEnded``.
    private var endStatus: Int32 { process.terminationStatus ?? -1 }

    private func timedOut(_ what: String, seconds: Double? = nil, timeout: Duration? = nil) -> ChildProcessError {
        kill()
        let bound = seconds.map { "\($0) s" } ?? timeout.map { "\($0)" } ?? ""
        return ChildProcessError(
            message: "\(name) did not \(what == "exit" ? "exit" : "print \(what)") within \(bound), so it was "
                + "killed; it printed `\(output.suffix(2000))`, and on standard error `\(errors.suffix(2000))`")
    }
}

/// A child process could not be started, or did not do what a test waited for in time.
public struct ChildProcessError: Error, CustomStringConvertible {
    /// What happened, with what the child printed.
    public let message: String
    /// An error saying `message`.
    public init(message: String) {
        self.message = message
    }
    /// The message.
    public var description: String { message }
}
