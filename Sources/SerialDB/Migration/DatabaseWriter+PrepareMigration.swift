extension DatabaseWriter {
    /// Copies the tables the first pending step rebuilds while the queue or pool keeps serving,
    /// so that the upgrade that follows holds other work only for a short swap. On a pool the
    /// copy runs on the writer, and reads keep seeing the old table until the swap.
    ///
    /// ```swift
    /// try await queue.prepareMigration(migrator)   // the service keeps writing the old schema
    /// try queue.migrate(migrator)                  // finds the copy: only the swap holds work
    /// ```
    ///
    /// It covers the first pending step when it is declarative
    /// (``DatabaseMigrator/registerMigration(_:schema:options:)``) and rebuilds tables. Each new
    /// table is created under a `serialdb_` name and kept in step with the live table by
    /// triggers; the existing rows are copied in chunks of `rowsPerChunk`, each its own short
    /// transaction, so other work runs between them. It returns once the copy has caught up;
    /// from then on the triggers keep it in step until `migrate` or `startMigration` swaps it
    /// in. If nothing is pending, or the step copies nothing, it returns at once and `migrate`
    /// behaves as it always did.
    ///
    /// **Expand, then contract.** Work submitted while the copy runs, and until the swap, runs
    /// against the old schema: code that runs then must work on both shapes of the table (write
    /// only columns both have, satisfy the new constraints). A row the new definition refuses
    /// does not make that write fail: it is reported in ``PreparedMigration/refusedRows``, and
    /// the swap refuses, naming it, until it is fixed.
    ///
    /// Cancelling the task removes the copy and its triggers; the old table never stops
    /// serving. When the process dies mid-copy, the next open of the file (a `DatabaseQueue`,
    /// or a `DatabasePool`) removes the unfinished copy and its triggers, unless some process
    /// is still copying; a process that already had the file open resumes it with
    /// `prepareMigration`, or finishes it with `migrate` (which removes a copy made for another
    /// step). A copy that had caught up is kept, in step, for the next `migrate` to swap in.
    /// Whether `migrate` used the copy is reported as ``MigrationProgress/preparedCopy``.
    ///
    /// - Parameters:
    ///   - migrator: the steps; the first one not applied is prepared.
    ///   - rowsPerChunk: rows per copy transaction (default 2,000).
    ///   - progress: rows copied of rows to copy, as ``MigrationProgress/Event/stepProgress``.
    /// - Returns: what was copied, and the rows the new definition refuses.
    /// - Throws: ``SerialDBError/Code/schemaChangeRefused`` when the step's plan is refused
    ///   (nothing is copied); `CancellationError`; the queue's errors.
    @discardableResult
    public func prepareMigration(
        _ migrator: DatabaseMigrator, rowsPerChunk: Int = 2_000,
        progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) async throws -> PreparedMigration {
        try await OnlinePreparation.prepare(
            migrator, writer: writerInternals.serializer, rowsPerChunk: rowsPerChunk, progress: progress)
    }
}
