/// Why a benchmark run is not trustworthy: a side failed, or produced the wrong result.
enum BenchError: Error, CustomStringConvertible {
    /// A raw C baseline call returned a SQLite error code.
    case sqlite(call: String, code: Int32)
    /// A side is not set up the way the comparison requires.
    case setup(String)
    /// A side's result differs from what the workload must produce.
    case mismatch(workload: String, side: String, expected: Digest, actual: Digest)
    /// The sync server answered something other than success.
    case sync(String)

    var description: String {
        switch self {
        case .sqlite(let call, let code):
            return "\(call) failed with SQLite result code \(code)"
        case .setup(let problem):
            return "setup: \(problem)"
        case .mismatch(let workload, let side, let expected, let actual):
            return "\(workload): the \(side) side produced [\(actual)], expected [\(expected)]"
        case .sync(let problem):
            return "sync server: \(problem)"
        }
    }
}
