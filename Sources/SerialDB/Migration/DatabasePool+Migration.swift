extension DatabasePool {
    /// Applies the migrator's pending steps on the writer and blocks until done. Reads and writes
    /// submitted while it runs wait for it; if it fails, both refuse work until a migration
    /// succeeds. See `DatabaseQueue/migrate(_:progress:)`.
    ///
    /// - Throws: the migrator's error; ``SerialDBError/Code/reentrantCall`` from inside a block
    ///   of this pool.
    public func migrate(
        _ migrator: DatabaseMigrator, progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) throws {
        try checkNotReentrant()
        try startMigration(migrator, upTo: nil, progress: progress).wait()
    }

    /// Applies the steps up to and including `identifier`, blocking until done.
    public func migrate(_ migrator: DatabaseMigrator, upTo identifier: String) throws {
        try checkNotReentrant()
        try startMigration(migrator, upTo: identifier, progress: nil).wait()
    }

    /// Async twin of `migrate(_:progress:)`: suspends instead of blocking.
    public func migrate(
        _ migrator: DatabaseMigrator, progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) async throws {
        try checkNotReentrant()
        try await startMigration(migrator, upTo: nil, progress: progress).wait()
    }

    /// Starts applying the migrator's pending steps on the writer and returns at once.
    ///
    /// Reads and writes already submitted keep their place; every read and write submitted
    /// after this returns runs only after the upgrade has finished, against the new schema. If
    /// the upgrade fails, they throw ``SerialDBError/Code/migrationFailed`` carrying the cause,
    /// until a later migration succeeds.
    public func startMigration(
        _ migrator: DatabaseMigrator, progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) -> MigrationHandle {
        startMigration(migrator, upTo: nil, progress: progress)
    }

    private func startMigration(
        _ migrator: DatabaseMigrator, upTo target: String?, progress: (@Sendable (MigrationProgress) -> Void)?
    ) -> MigrationHandle {
        // Reads are held from the same moment the writer's line is: the ticket is taken first.
        let ticket = readers.upgradeSubmitted()
        return writer.startUpgrade(migrator, upTo: target, progress: progress) { [readers] gateError in
            readers.upgradeFinished(ticket: ticket, error: gateError)
        }
    }
}
