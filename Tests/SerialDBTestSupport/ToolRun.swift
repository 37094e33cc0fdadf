import Foundation

/// One run of an executable product of this package (`serialdb`, `stress`, `bench`...) to its
/// end: its exit status and everything it printed.
public struct ToolRun: Sendable {
    /// The exit status.
    public var status: Int32
    /// Standard output.
    public var output: String
    /// Standard error.
    public var errors: String

    /// Runs `product` with `arguments` and waits for it to exit (a ``ChildProcess``: both
    /// pipes read at once); a run that has not ended within `seconds` is killed and throws,
    /// so a tool that ignores its arguments fails the test instead of hanging it.
    ///
    /// The wait suspends: a test that blocked a thread of the cooperative pool (two on a
    /// two-core machine) for a tool's whole run would starve the async tests beside it, and a
    /// few such runs at once held them past their deadlock bounds.
    public init(_ product: String, _ arguments: [String], seconds: Double = 60) async throws {
        try await self.init(executable: try ChildProcess.builtProduct(named: product), arguments, seconds: seconds)
    }

    /// Runs the program at `executable` (a script of the repository, say) the same way, with
    /// `environment` in place of this process's own when it is given.
    public init(
        executable: URL, _ arguments: [String], environment: [String: String]? = nil, seconds: Double = 60
    ) async throws {
        let child = try ChildProcess(executableURL: executable, arguments: arguments, environment: environment)
        status = try await child.exitStatus(timeout: .milliseconds(Int64(seconds * 1000)))
        output = child.output
        errors = child.errors
    }
}
