/// Whether the upgrade used the copy `prepareMigration` made for a step, reported with the
/// step's ``MigrationProgress/Event/stepCommitted`` event as ``MigrationProgress/preparedCopy``.
///
/// ```swift
/// try queue.migrate(migrator) { progress in
///     if let copy = progress.preparedCopy, !copy.wasUsed {
///         log("the upgrade rebuilt \(copy.tables) under the gate: \(copy.notUsedBecause ?? "")")
///     }
/// }
/// ```
///
/// The swap uses a copy only when it holds exactly the live table's keys (one pass over the
/// table; the values are those the mirroring triggers and the copy wrote). A copy that does not (a write the mirroring
/// triggers cannot see, such as an `INSERT OR REPLACE` that deletes another row through a
/// UNIQUE conflict while `recursive_triggers` is off), or that no longer fits the table's
/// definition, is removed, and the step rebuilds its tables under the gate as it does without
/// `prepareMigration`: the result is as exact, only other work waits for the whole rebuild.
public struct PreparedCopyOutcome: Sendable, Equatable {
    /// The live tables that were copied ahead of the step.
    public var tables: [String]
    /// Why the copy was not used (naming the rows that differed), or nil when it was swapped in.
    public var notUsedBecause: String?

    /// Whether the step swapped the prepared copy in.
    public var wasUsed: Bool { notUsedBecause == nil }

    /// Creates an outcome.
    public init(tables: [String], notUsedBecause: String? = nil) {
        self.tables = tables
        self.notUsedBecause = notUsedBecause
    }
}
