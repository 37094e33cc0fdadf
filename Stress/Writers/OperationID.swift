/// Identifies one write operation: the author (writer key) that submitted it and its sequence
/// number in that author's stream.
///
/// Writer keys are `generation * 1000 + writer index`, and only one writer index ever touches a
/// given row, so two operations on the same row are ordered by generation, then sequence.
struct OperationID: Hashable, Sendable, Comparable {
    let author: Int
    let seq: Int

    /// The process generation (crash scenario) or run (fault scenario) that wrote it.
    var generation: Int { author / WriteOperation.authorsPerGeneration }

    static func < (lhs: OperationID, rhs: OperationID) -> Bool {
        (lhs.generation, lhs.seq) < (rhs.generation, rhs.seq)
    }
}
