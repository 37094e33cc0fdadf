/// A command line a tool cannot run: its message says what is wrong. ``ToolArguments`` prints
/// it on standard error with a pointer to `--help` and exits with status 2.
public struct UsageError: Error, CustomStringConvertible {
    /// What is wrong, for example "--rows needs a whole number of at least 0, not `x`".
    public let message: String

    /// A usage error saying `message`.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
