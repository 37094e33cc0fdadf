/// A write its writer saw succeed: the write call returned without error. Logged after the
/// return, never before.
struct Acknowledgement: Sendable {
    let operation: WriteOperation
    /// Migration steps the write saw applied, read inside its own transaction.
    let seenSteps: Int
    /// Submitted after `startMigration` returned: it must run after the upgrade, and it wrote the
    /// column only the upgrade adds.
    let afterUpgradeStart: Bool
    /// Seconds on the scenario's clock (0 for writes reported by a child process).
    let submitted: Double
    let returned: Double

    /// The child process's line for it: `A author seq kind targetAuthor targetSeq seenSteps post`.
    var line: String {
        let id = operation.id
        return
            "A \(id.author) \(id.seq) \(operation.kind.rawValue) \(operation.target.author) \(operation.target.seq) "
            + "\(seenSteps) \(afterUpgradeStart ? 1 : 0)"
    }

    /// Parses a child's line (`nil` if it is not an acknowledgement line).
    init?(line: Substring) {
        let fields = line.split(separator: " ")
        guard fields.count == 8, fields[0] == "A", let kind = WriteOperation.Kind(rawValue: String(fields[3])) else {
            return nil
        }
        let numbers = [1, 2, 4, 5, 6, 7].compactMap { Int(fields[$0]) }
        guard numbers.count == 6 else { return nil }
        operation = WriteOperation(
            id: OperationID(author: numbers[0], seq: numbers[1]), kind: kind,
            target: RowKey(author: numbers[2], seq: numbers[3]))
        seenSteps = numbers[4]
        afterUpgradeStart = numbers[5] == 1
        submitted = 0
        returned = 0
    }

    init(operation: WriteOperation, seenSteps: Int, afterUpgradeStart: Bool, submitted: Double, returned: Double) {
        self.operation = operation
        self.seenSteps = seenSteps
        self.afterUpgradeStart = afterUpgradeStart
        self.submitted = submitted
        self.returned = returned
    }
}

/// Where a writer reports its outcomes: memory in the scenarios, standard output in the crash
/// child (the parent reads it).
protocol AcknowledgementSink: Sendable {
    /// Called after the write call returned without error.
    func acknowledged(_ acknowledgement: Acknowledgement)
    /// Called after the write call threw.
    func failed(_ failure: WriteFailure)
}
