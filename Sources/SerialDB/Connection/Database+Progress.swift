extension Database {
    /// Reports how far a long migration step has come, for example rows copied of a total.
    /// Outside a migration it does nothing, so steps can call it unconditionally.
    ///
    /// ```swift
    /// migrator.registerMigration("backfill") { db in
    ///     for (index, id) in ids.enumerated() {
    ///         try db.execute(sql: "UPDATE item SET slug = lower(name) WHERE id = ?", arguments: [id])
    ///         db.reportProgress(completed: index + 1, total: ids.count)
    ///     }
    /// }
    /// ```
    public func reportProgress(completed: Int, total: Int) {
        progressObserver?(completed, total)
    }
}
