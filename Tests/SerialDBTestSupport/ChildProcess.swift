import Foundation

/// A child process of the test suite, talking over pipes: tests that need two processes on
/// one file, or a process to kill, use it.
public final class ChildProcess: @unchecked Sendable {
    // Safe to share: `process` and the pipes are used from the test's thread only; the
    // reader keeps the output behind its own lock.
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let reader: PipeReader

    /// Starts `executable` (a product built next to the test bundle) with `arguments`.
    public init(executable name: String, arguments: [String]) throws {
        process.executableURL = try Self.builtProduct(named: name)
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        reader = PipeReader(output.fileHandleForReading)
        try process.run()
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

    /// Everything the child printed so far.
    public var printed: String { reader.text }

    /// Waits until the child printed `line` (true), or `seconds` passed or it exited (false).
    public func waitForLine(_ line: String, seconds: Double = 30) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if printed.split(separator: "\n").contains(where: { $0 == line }) { return true }
            if !process.isRunning && !printed.contains(line) { return false }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return false
    }

    /// Sends a line to the child's standard input.
    public func send(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Kills the child with SIGKILL, as a crash or the OOM killer would.
    public func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
    }

    /// Waits for the child to exit and returns its status; a child still running after
    /// `seconds` is killed (its status is then SIGKILL's), so a child that hangs fails the test
    /// instead of hanging it.
    @discardableResult
    public func waitForExit(seconds: Double = 120) -> Int32 {
        let watchdog = DispatchWorkItem { [process] in
            if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: watchdog)
        process.waitUntilExit()
        watchdog.cancel()
        return process.terminationStatus
    }
}

/// A child process could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
