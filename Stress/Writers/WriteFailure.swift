import SerialDB

/// A write whose call threw: it is not acknowledged and must not be found in the database.
struct WriteFailure: Sendable {
    let operation: OperationID
    /// The queue refused it because the upgrade before it failed (`migrationFailed`): the
    /// expected outcome for writes held by an upgrade that failed.
    let refusedByFailedUpgrade: Bool
    let message: String

    init(operation: OperationID, error: any Error) {
        self.operation = operation
        refusedByFailedUpgrade = (error as? SerialDBError)?.code == .migrationFailed
        message = "\(error)"
    }

    init(operation: OperationID, refusedByFailedUpgrade: Bool, message: String) {
        self.operation = operation
        self.refusedByFailedUpgrade = refusedByFailedUpgrade
        self.message = message
    }

    /// The child process's line for it: `E author seq refused|error message`.
    var line: String {
        "E \(operation.author) \(operation.seq) \(refusedByFailedUpgrade ? "refused" : "error") "
            + message.replacingOccurrences(of: "\n", with: " ")
    }

    /// Parses a child's line (`nil` if it is not a failure line).
    init?(line: Substring) {
        let fields = line.split(separator: " ", maxSplits: 4, omittingEmptySubsequences: false)
        guard fields.count >= 4, fields[0] == "E", let author = Int(fields[1]), let seq = Int(fields[2]) else {
            return nil
        }
        operation = OperationID(author: author, seq: seq)
        refusedByFailedUpgrade = fields[3] == "refused"
        message = fields.count > 4 ? String(fields[4]) : ""
    }
}
