extension DatabaseQueue {
    /// Opens (creating if needed) a database file.
    ///
    /// Before any work reaches the connection, an online copy that a killed process left
    /// unfinished (see ``DatabaseWriter/prepareMigration(_:rowsPerChunk:progress:)``) is
    /// removed, unless some process is still copying; a copy that had caught up is kept for
    /// `migrate`. A file that is busy or read-only is left as it is: the open never fails for it.
    ///
    /// - Parameters:
    ///   - path: the file path.
    ///   - configuration: journal mode (WAL by default), foreign keys (on by default), busy
    ///     timeout, and hooks.
    /// - Throws: ``DatabaseError``, for example `SQLITE_NOTADB` for a file that is not a
    ///   database (left untouched) or `SQLITE_CANTOPEN`.
    public convenience init(path: String, configuration: Configuration = Configuration()) throws {
        try self.init(path: path, configuration: configuration, housekeeping: OnlineCopyState.removeAbandoned)
    }
}
