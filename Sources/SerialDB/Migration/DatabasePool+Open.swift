extension DatabasePool {
    /// Opens a pool on a database file in WAL mode.
    ///
    /// Before any work reaches the writer, an online copy that a killed process left
    /// unfinished (see ``DatabaseWriter/prepareMigration(_:rowsPerChunk:progress:)``) is
    /// removed, unless some process is still copying; a copy that had caught up is kept for
    /// `migrate`. A file that is busy is left as it is: the open never fails for it.
    ///
    /// - Parameters:
    ///   - path: a file path (an in-memory database cannot be shared between connections).
    ///   - configuration: how every connection is opened; `journalMode` must be `.wal`.
    ///   - maximumReaderCount: the most reader connections, opened when first needed (at least 1).
    /// - Throws: ``SerialDBError/Code/invalidArguments`` for an in-memory path or another
    ///   journal mode; ``DatabaseError`` when the file cannot be opened.
    public convenience init(
        path: String, configuration: Configuration = Configuration(), maximumReaderCount: Int = 5
    ) throws {
        try self.init(
            path: path, configuration: configuration, maximumReaderCount: maximumReaderCount,
            housekeeping: OnlineCopyState.removeAbandoned)
    }
}
