import CSQLite

extension Database {
    /// Runs `body` with the triggers of the connection's main and attached schemas turned off
    /// (`SQLITE_DBCONFIG_ENABLE_TRIGGER`), and turns them back on when it returns or throws.
    ///
    /// A trigger costs its sub-program for every row a statement writes, even when its WHEN
    /// clause is false: this is for a caller that writes many rows and knows that no trigger
    /// those writes could reach has anything to do (the sync applying server rows, when the
    /// only triggers are its own outbox triggers, quiet then). The caller checks the schema
    /// inside the same transaction, so that no trigger created meanwhile is skipped. Since
    /// SQLite 3.35, TEMP triggers fire anyway.
    ///
    /// Changing the setting expires every prepared statement of the connection: SQLite
    /// prepares each again the next time it runs. Wrap a batch of writes, not one. Triggers
    /// that were already off stay off, and cost nothing more.
    /// See <https://www.sqlite.org/c3ref/c_dbconfig_defensive.html#sqlitedbconfigenabletrigger>.
    ///
    /// - Throws: ``SerialDBError/Code/closed``, and what `body` throws.
    package func withTriggersDisabled<T>(_ body: () throws -> T) throws -> T {
        let handle = try openHandle()
        // -1 asks without changing; the answer to a change is the setting after it.
        var enabled: Int32 = 0
        _ = serialdb_db_config_flag(handle, SQLITE_DBCONFIG_ENABLE_TRIGGER, -1, &enabled)
        guard enabled != 0 else { return try body() }
        _ = serialdb_db_config_flag(handle, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nil)
        defer {
            // `body` may have closed the connection: its handle is gone then, with the setting.
            if let handle = self.handle {
                _ = serialdb_db_config_flag(handle, SQLITE_DBCONFIG_ENABLE_TRIGGER, 1, nil)
            }
        }
        return try body()
    }
}
