/// How a transaction takes its locks. See <https://www.sqlite.org/lang_transaction.html>.
public enum TransactionKind: String, Sendable {
    /// Locks nothing until the first read or write: the default for SQLite and for reads.
    case deferred = "DEFERRED"
    /// Takes the write lock at once, so the transaction cannot fail later with `SQLITE_BUSY`
    /// when upgrading from read to write.
    case immediate = "IMMEDIATE"
    /// Like immediate; in rollback-journal mode it also keeps readers out.
    case exclusive = "EXCLUSIVE"
}

/// What a transaction or savepoint block asks for when it returns.
public enum TransactionCompletion: Sendable {
    /// Keep the changes.
    case commit
    /// Undo the changes.
    case rollback
}
