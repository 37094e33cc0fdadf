/// A queue or pool block that waited or ran longer than ``Configuration/slowBlockThreshold``.
///
/// ```swift
/// config.slowBlockThreshold = .milliseconds(100)
/// config.onSlowBlock = { report in
///     logger.warning("\(report.file):\(report.line) waited \(report.waited), ran \(report.ran)")
/// }
/// ```
public struct SlowBlockReport: Sendable, CustomStringConvertible {
    /// The file that called the queue method (`#fileID`: module/file).
    public let file: String
    /// The line of the call.
    public let line: Int
    /// The function that made the call.
    public let function: String
    /// From the call to the moment the block started: time spent behind other work.
    public let waited: Duration
    /// How long the block ran, transaction included.
    public let ran: Duration
    /// The queue's or pool's label (its path when no label was set).
    public let label: String

    /// `file:line function: waited W, ran R on label`.
    public var description: String {
        "\(file):\(line) \(function): waited \(waited), ran \(ran) on \(label)"
    }
}
