/// Deliberate bugs for testing the harness itself (hidden flag `--broken-writer`): the checks
/// must catch them, or they prove nothing. Only writer 0 misbehaves, on every third write.
enum BrokenWriterMode: String, Sendable, CaseIterable {
    /// Rolls the write back but acknowledges it anyway: the checker must report it lost.
    case skipCommit = "skip-commit"
    /// Applies an insert twice in its transaction: the checker must report a duplicate.
    case duplicate
    /// Commits the write but reports it failed: the checker must report an unexpected write.
    case forgetAcknowledgement = "forget-ack"

    /// Whether writer `index` misbehaves on `operation`.
    func applies(toWriter index: Int, _ operation: WriteOperation) -> Bool {
        guard index == 0, operation.id.seq % 3 == 1 else { return false }
        return self != .duplicate || operation.kind == .insert
    }
}
