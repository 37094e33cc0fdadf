extension Serializer {
    /// Submits the migrator's pending steps (up to `target`) as an upgrade, and returns the
    /// handle that reports its progress and outcome. `finished` runs with the outcome and the
    /// error the gate now holds (nil on success) before the handle's waiters are released.
    func startUpgrade(
        _ migrator: DatabaseMigrator, upTo target: String?, progress: (@Sendable (MigrationProgress) -> Void)?,
        finished: (@Sendable (SerialDBError?) -> Void)? = nil
    ) -> MigrationHandle {
        let handle = MigrationHandle(serializer: self)
        // A swapped-in copy leaves the old table set aside: it is dropped once the gate is open.
        let setAside = LockedValue(false)
        submitUpgrade(
            { db in
                try migrator.migrate(db, upTo: target, dropsTablesSetAside: false) { report in
                    if report.preparedCopy?.wasUsed == true { setAside.withLock { $0 = true } }
                    handle.report(report)
                    progress?(report)
                }
            },
            gateError: Self.gateError(for:),
            completion: { result in
                if case .failure(let error) = result {
                    finished?(Self.gateError(for: error))
                } else {
                    finished?(nil)
                }
                if setAside.withLock({ $0 }) { OnlineAsideTable.dropInBackground(self) }
                handle.finish(result)
            })
        return handle
    }

    /// What work submitted after a failed upgrade throws: the migrator's own `migrationFailed`
    /// (which names the step), or one that wraps an error raised before any step ran.
    private static func gateError(for error: any Error) -> SerialDBError {
        if let error = error as? SerialDBError, error.code == .migrationFailed { return error }
        return SerialDBError(
            .migrationFailed,
            "The schema upgrade failed before any step ran; work submitted after it is refused until a "
                + "migration succeeds.",
            underlying: error)
    }
}
