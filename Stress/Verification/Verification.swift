/// What the checker found when it compared a database with the acknowledged writes. Problems are
/// kept as sets of identities so that checks repeated over one file (the crash scenario checks
/// after every kill) count each problem once.
struct Verification: Sendable {
    /// Acknowledged writes checked.
    var acknowledged = 0
    /// Acknowledged writes whose effect is missing: an insert without its row, an update whose row
    /// holds an older write.
    var lost: Set<OperationID> = []
    /// Rows stored more than once.
    var duplicated: Set<RowKey> = []
    /// Writes found in the database that nobody acknowledged (and that were not in flight when
    /// a process was killed).
    var unexpected: Set<OperationID> = []
    /// Rows whose values do not match the write they claim to hold.
    var wrongValues: Set<RowKey> = []
    /// Writes in flight at a kill that committed before it: allowed, counted for the report.
    var inFlightCommitted: Set<OperationID> = []
    /// Seed rows missing (the rebuild must copy every one).
    var seedRowsMissing = 0
    /// The first problems, described for the summary.
    var examples: [String] = []

    var found: Int { acknowledged - lost.count }
    var isClean: Bool {
        lost.isEmpty && duplicated.isEmpty && unexpected.isEmpty && wrongValues.isEmpty && seedRowsMissing == 0
    }

    mutating func note(_ example: String) {
        if examples.count < 5 { examples.append(example) }
    }

    /// Adds another check's findings (of the same or a later state of the same file).
    mutating func merge(_ other: Verification) {
        lost.formUnion(other.lost)
        duplicated.formUnion(other.duplicated)
        unexpected.formUnion(other.unexpected)
        wrongValues.formUnion(other.wrongValues)
        inFlightCommitted.formUnion(other.inFlightCommitted)
        seedRowsMissing = max(seedRowsMissing, other.seedRowsMissing)
        for example in other.examples { note(example) }
    }
}
