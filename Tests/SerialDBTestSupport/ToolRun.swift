import Foundation

/// One run of an executable product of this package (`serialdb`, `stress`, `bench`) to its
/// end: its exit status and everything it printed.
public struct ToolRun: Sendable {
    /// The exit status.
    public var status: Int32
    /// Standard output.
    public var output: String
    /// Standard error.
    public var errors: String

    /// Runs `product` with `arguments` and waits for it to exit; a run that has not ended
    /// within `seconds` is killed, so a tool that ignores its arguments fails the test instead
    /// of hanging it.
    public init(_ product: String, _ arguments: [String], seconds: Double = 60) throws {
        try self.init(executable: try ChildProcess.builtProduct(named: product), arguments, seconds: seconds)
    }

    /// Runs the program at `executable` (a script of the repository, say) the same way, with
    /// `environment` in place of this process's own when it is given.
    public init(
        executable: URL, _ arguments: [String], environment: [String: String]? = nil, seconds: Double = 60
    ) throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let outputPipe = Pipe()
        let errorPipe = Pipe()
        process.standardOutput = outputPipe
        process.standardError = errorPipe
        try process.run()
        let watchdog = DispatchWorkItem { [process] in if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: watchdog)
        let out = outputPipe.fileHandleForReading.readDataToEndOfFile()
        let err = errorPipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        watchdog.cancel()
        status = process.terminationStatus
        output = String(decoding: out, as: UTF8.self)
        errors = String(decoding: err, as: UTF8.self)
    }
}
