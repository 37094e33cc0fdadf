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
    /// If SQLite ends the transaction by itself while the block runs (a constraint with
    /// `ON CONFLICT ROLLBACK`, an interrupt, some I/O or full-disk errors) and the block catches
    /// that error and goes on, its later statements and the COMMIT throw
    /// ``SerialDBError/Code/transactionAborted`` instead of running in autocommit: nothing of
    /// the block is committed. Returning `.rollback` then simply returns.
    ///
    /// - Throws: the block's error, or ``DatabaseError`` from BEGIN / COMMIT (a transaction is
    ///   already open: use `inSavepoint(_:)` to nest); ``SerialDBError/Code/transactionAborted``
    ///   as above.
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
    /// `.rollback` undoes what the block did and keeps the enclosing transaction going. If
    /// SQLite ends the transaction while the block runs (see
    /// ``SerialDBError/Code/transactionAborted``), the block's later statements throw instead
    /// of running in autocommit, and `.rollback` simply returns.
    ///
    /// - Throws: the block's error (after rolling back to the savepoint) or ``DatabaseError``.
    ///   See <https://www.sqlite.org/lang_savepoint.html>.
    public func inSavepoint(_ block: (Database) throws -> TransactionCompletion) throws {
        let name = nextSavepointName.quotedDatabaseIdentifier
        // A savepoint outside a transaction opens one, which ROLLBACK alone ends cleanly.
        let opensTransaction = !isInsideTransaction
        try execute(sql: "SAVEPOINT " + name)
        enterSavepoint()
        defer { leaveSavepoint() }
        try guardingTransaction {
            let completion: TransactionCompletion
            do {
                completion = try block(self)
                if completion == .commit {
                    try execute(sql: "RELEASE SAVEPOINT " + name)
                    return
                }
            } catch {
                throw rollbackSavepointAfterFailure(name, opensTransaction: opensTransaction, error)
            }
            // .rollback: nothing to undo if SQLite has already rolled the transaction back.
            guard isInsideTransaction else { return }
            if opensTransaction {
                try rollback()
            } else {
                try execute(sql: "ROLLBACK TRANSACTION TO SAVEPOINT " + name)
                try execute(sql: "RELEASE SAVEPOINT " + name)
            }
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

    /// Rolls back after `error`, if SQLite has not already done so (it does by itself after
    /// some I/O and full-disk errors), and returns the error to throw: `error` itself, or
    /// ``SerialDBError/Code/rollbackFailed`` carrying it when the transaction is still open
    /// afterwards, so that an open transaction never goes unnoticed.
    func rollbackAfterFailure(_ error: any Error) -> any Error {
        guard isInsideTransaction else { return error }
        do {
            try rollback()
            return error
        } catch let rollbackError {
            guard isInsideTransaction else { return error }
            // An interrupt meant for the statement that failed (a task cancelled at that very
            // moment) can land on the first ROLLBACK; SQLite clears it when the next statement
            // starts, so one more try is enough then.
            if (try? rollback()) != nil { return error }
            return SerialDBError(
                .rollbackFailed,
                "The transaction could not be rolled back after an error (\(rollbackError)); it is still open on "
                    + "this connection. Roll it back before new work, or close the connection.",
                underlying: error)
        }
    }

    /// Undoes a failed savepoint and returns the error to throw, like ``rollbackAfterFailure(_:)``.
    private func rollbackSavepointAfterFailure(
        _ quotedName: String, opensTransaction: Bool, _ error: any Error
    ) -> any Error {
        guard isInsideTransaction else { return error }
        if opensTransaction { return rollbackAfterFailure(error) }
        do {
            try execute(sql: "ROLLBACK TRANSACTION TO SAVEPOINT " + quotedName)
        } catch let rollbackError {
            return SerialDBError(
                .rollbackFailed,
                "The savepoint could not be rolled back after an error (\(rollbackError)); its changes are still "
                    + "part of the enclosing transaction. Roll that transaction back.",
                underlying: error)
        }
        // Releasing a savepoint that was rolled back changes nothing; if it fails (a cancelled
        // task in a transaction that wrote), the enclosing transaction ends it with its own
        // COMMIT or ROLLBACK.
        try? execute(sql: "RELEASE SAVEPOINT " + quotedName)
        return error
    }
}

extension Database {
    /// A deferred transaction with writes refused, committed after the block (a read-only
    /// transaction has nothing to keep; COMMIT just ends it).
    ///
    /// What `transaction(.deferred)` around `readOnly` does, written out as a straight line:
    /// the read round trip is the cost of every `read`, and the nested closures of the general
    /// path cost a tenth of it. The order is the same: BEGIN; the block with writes refused and
    /// the transaction guarded; COMMIT, still guarded; on any error, the guard restored, then
    /// whatever is left of the transaction rolled back.
    func readTransaction<T>(_ block: (Database) throws -> T) throws -> T {
        try run(.beginDeferred)
        let wasGuarding = beginGuard()
        do {
            readOnlyDepth += 1
            let value: T
            do {
                value = try block(self)
            } catch {
                readOnlyDepth -= 1
                throw error
            }
            readOnlyDepth -= 1
            try commit()  // throws transactionAborted if SQLite already ended the transaction
            endGuard(wasGuarding: wasGuarding)
            return value
        } catch {
            endGuard(wasGuarding: wasGuarding)
            throw rollbackAfterFailure(error)
        }
    }

    /// An immediate transaction that commits unless the block throws.
    func writeTransaction<T>(_ block: (Database) throws -> T) throws -> T {
        try transaction(.immediate) { db in (try block(db), .commit) }
    }

    /// BEGIN, the block, then COMMIT or ROLLBACK as it asks; if the block, COMMIT or ROLLBACK
    /// throws, whatever is left of the transaction is rolled back and the error rethrown.
    /// While the block runs the transaction is guarded: once SQLite has ended it, every later
    /// statement (COMMIT included) throws ``SerialDBError/Code/transactionAborted``.
    private func transaction<T>(
        _ kind: TransactionKind, _ block: (Database) throws -> (T, TransactionCompletion)
    ) throws -> T {
        try beginTransaction(kind)
        do {
            return try guardingTransaction {
                let (value, completion) = try block(self)
                switch completion {
                case .commit:
                    try commit()  // throws transactionAborted if SQLite already ended the transaction
                case .rollback:
                    // Nothing to undo if SQLite has already rolled the transaction back.
                    if isInsideTransaction { try rollback() }
                }
                return value
            }
        } catch {
            throw rollbackAfterFailure(error)
        }
    }
}
