// Written once for the queue and the pool. On a pool, the upgrade runs on the writer and the
// readers share its gate: reads submitted after `startMigration` wait for it too.
extension DatabaseWriter {
    /// Applies the migrator's pending steps and blocks until done. Like
    /// ``startMigration(_:progress:)``, work submitted while it runs waits for it, and if it
    /// fails the queue refuses work until a migration succeeds.
    ///
    /// - Parameters:
    ///   - migrator: the steps.
    ///   - progress: called on the queue's thread as steps start, report rows, and commit.
    /// - Throws: the migrator's error (``SerialDBError/Code/migrationFailed`` names the step
    ///   and carries the cause; ``SerialDBError/Code/unknownMigrations`` refuses a database
    ///   written by a newer app); ``SerialDBError/Code/reentrantCall`` from inside a block.
    public func migrate(
        _ migrator: DatabaseMigrator, progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) throws {
        try writerInternals.checkNotReentrant()
        try startMigration(migrator, upTo: nil, progress: progress).wait()
    }

    /// Applies the steps up to and including `identifier`, blocking until done.
    ///
    /// - Throws: like `migrate(_:progress:)`; ``SerialDBError/Code/invalidMigrator`` for an
    ///   unknown identifier or a database already past it (migrations never go back; the
    ///   message names the step the database is at). Like any failed upgrade, that leaves the
    ///   queue refusing work until a migration succeeds.
    public func migrate(_ migrator: DatabaseMigrator, upTo identifier: String) throws {
        try writerInternals.checkNotReentrant()
        try startMigration(migrator, upTo: identifier, progress: nil).wait()
    }

    /// Async twin of `migrate(_:progress:)`: suspends instead of blocking.
    public func migrate(
        _ migrator: DatabaseMigrator, progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) async throws {
        try writerInternals.checkNotReentrant()
        try await startMigration(migrator, upTo: nil, progress: progress).wait()
    }

    /// Starts applying the migrator's pending steps and returns at once.
    ///
    /// Work already submitted keeps its place in line; every block submitted to the queue (or
    /// every read and write submitted to the pool) after
    /// this returns — from any thread, sync or async — runs only after the upgrade has
    /// finished, against the new schema. If the upgrade fails, those blocks throw
    /// ``SerialDBError/Code/migrationFailed`` carrying the cause instead of running against a
    /// half-upgraded schema, and the queue keeps refusing work until a later migration
    /// succeeds. The database stays at the last step that committed.
    ///
    /// ```swift
    /// let upgrade = queue.startMigration(migrator)
    /// startServingRequests(queue)     // their database work waits for the upgrade
    /// try upgrade.wait()
    /// ```
    public func startMigration(
        _ migrator: DatabaseMigrator, progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) -> MigrationHandle {
        startMigration(migrator, upTo: nil, progress: progress)
    }

    private func startMigration(
        _ migrator: DatabaseMigrator, upTo target: String?, progress: (@Sendable (MigrationProgress) -> Void)?
    ) -> MigrationHandle {
        let internals = writerInternals
        guard let readers = internals.readers else {
            return internals.serializer.startUpgrade(migrator, upTo: target, progress: progress)
        }
        // Reads are held from the same moment the writer's line is: the ticket is taken first.
        let ticket = readers.upgradeSubmitted()
        return internals.serializer.startUpgrade(migrator, upTo: target, progress: progress) { gateError in
            readers.upgradeFinished(ticket: ticket, error: gateError)
        }
    }
}
