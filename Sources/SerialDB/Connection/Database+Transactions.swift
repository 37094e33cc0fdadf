import CSQLite

extension Database {
    /// Runs `block` in a transaction; commits or rolls back as it returns.
    ///
    /// If `block` throws, or COMMIT fails, the transaction is rolled back and the error rethrown.
    ///
    /// ```swift
    /// try db.inTransaction(.immediate) { db in
    ///     try db.execute(sql: "UPDATE account SET balance = balance - 10 WHERE id = 1")
    ///     try db.execute(sql: "UPDATE account SET balance = balance + 10 WHERE id = 2")
    ///     return .commit
    /// }
    /// ```
    ///
    /// - Throws: the block's error, or ``DatabaseError`` from BEGIN / COMMIT (a transaction is
    ///   already open: use `inSavepoint(_:)` to nest).
    ///   See <https://www.sqlite.org/lang_transaction.html>.
    public func inTransaction(
        _ kind: TransactionKind = .deferred,
        _ block: (Database) throws -> TransactionCompletion
    ) throws {
        try transaction(kind) { db in ((), try block(db)) }
    }

    /// Runs `block` inside a savepoint, which nests: in a transaction it is a sub-transaction,
    /// outside one it acts as a deferred transaction.
    ///
    /// `.rollback` undoes what the block did and keeps the enclosing transaction going.
    ///
    /// - Throws: the block's error (after rolling back to the savepoint) or ``DatabaseError``.
    ///   See <https://www.sqlite.org/lang_savepoint.html>.
    public func inSavepoint(_ block: (Database) throws -> TransactionCompletion) throws {
        let name = nextSavepointName.quotedDatabaseIdentifier
        try execute(sql: "SAVEPOINT " + name)
        enterSavepoint()
        defer { leaveSavepoint() }
        let completion: TransactionCompletion
        do {
            completion = try block(self)
        } catch {
            rollbackSavepointAfterFailure(name)
            throw error
        }
        switch completion {
        case .commit:
            do {
                try execute(sql: "RELEASE SAVEPOINT " + name)
            } catch {
                rollbackSavepointAfterFailure(name)
                throw error
            }
        case .rollback:
            try execute(sql: "ROLLBACK TRANSACTION TO SAVEPOINT " + name)
            try execute(sql: "RELEASE SAVEPOINT " + name)
        }
    }

    /// `BEGIN <kind> TRANSACTION`, from a statement prepared once per connection.
    public func beginTransaction(_ kind: TransactionKind = .deferred) throws {
        switch kind {
        case .deferred: try run(.beginDeferred)
        case .immediate: try run(.beginImmediate)
        case .exclusive: try run(.beginExclusive)
        }
    }

    /// `COMMIT TRANSACTION`, from a statement prepared once per connection.
    public func commit() throws {
        try run(.commit)
    }

    /// `ROLLBACK TRANSACTION`, from a statement prepared once per connection.
    public func rollback() throws {
        try run(.rollback)
    }

    /// Rolls back after an error, if SQLite has not already done so (it does by itself after
    /// some I/O and full-disk errors). A failure here is not thrown: the caller is already
    /// throwing the error that matters, and a transaction still open afterwards is caught and
    /// reported by the queue.
    func rollbackAfterFailure() {
        guard isInsideTransaction else { return }
        try? rollback()
    }

    /// Undoes a failed savepoint; like ``rollbackAfterFailure()``, a failure here is not thrown
    /// because the caller is already throwing the error that matters.
    private func rollbackSavepointAfterFailure(_ quotedName: String) {
        guard isInsideTransaction else { return }
        try? execute(sql: "ROLLBACK TRANSACTION TO SAVEPOINT " + quotedName)
        try? execute(sql: "RELEASE SAVEPOINT " + quotedName)
    }
}

extension Database {
    /// A deferred transaction with writes refused, committed after the block (a read-only
    /// transaction has nothing to keep; COMMIT just ends it).
    func readTransaction<T>(_ block: (Database) throws -> T) throws -> T {
        try transaction(.deferred) { db in (try db.readOnly { try block(db) }, .commit) }
    }

    /// An immediate transaction that commits unless the block throws.
    func writeTransaction<T>(_ block: (Database) throws -> T) throws -> T {
        try transaction(.immediate) { db in (try block(db), .commit) }
    }

    /// BEGIN, the block, then COMMIT or ROLLBACK as it asks; if the block, COMMIT or ROLLBACK
    /// throws, whatever is left of the transaction is rolled back and the error rethrown.
    private func transaction<T>(
        _ kind: TransactionKind, _ block: (Database) throws -> (T, TransactionCompletion)
    ) throws -> T {
        try beginTransaction(kind)
        do {
            let (value, completion) = try block(self)
            switch completion {
            case .commit: try commit()
            case .rollback: try rollback()
            }
            return value
        } catch {
            rollbackAfterFailure()
            throw error
        }
    }
}
