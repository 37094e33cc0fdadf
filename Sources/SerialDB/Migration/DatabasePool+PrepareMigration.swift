extension DatabasePool {
    /// Copies the tables the first pending step rebuilds on the writer while the pool keeps
    /// serving; reads keep seeing the old table until the swap. See
    /// `DatabaseQueue/prepareMigration(_:rowsPerChunk:progress:)`.
    ///
    /// ```swift
    /// try await pool.prepareMigration(migrator)
    /// try pool.migrate(migrator)                   // only the swap holds reads and writes
    /// ```
    ///
    /// - Parameters:
    ///   - migrator: the steps; the first one not applied is prepared.
    ///   - rowsPerChunk: rows per copy transaction (default 2,000).
    ///   - progress: rows copied of rows to copy.
    /// - Returns: what was copied, and the rows the new definition refuses.
    /// - Throws: like the queue's; ``SerialDBError/Code/reentrantCall`` from inside a block of
    ///   this pool.
    @discardableResult
    public func prepareMigration(
        _ migrator: DatabaseMigrator, rowsPerChunk: Int = 2_000,
        progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) async throws -> PreparedMigration {
        try checkNotReentrant()
        return try await OnlinePreparation.prepare(
            migrator, writer: writer, rowsPerChunk: rowsPerChunk, progress: progress)
    }
}
