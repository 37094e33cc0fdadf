import CSQLite

extension Database {
    /// Runs `body` with every statement that would begin or end a transaction (BEGIN, COMMIT,
    /// END, ROLLBACK) refused as it is compiled, so that none of them runs; then throws
    /// ``SerialDBError/Code/invalidMigrator`` if one was refused, even when `body` caught that
    /// statement's error and went on.
    ///
    /// A block that SerialDB runs in a transaction it commits itself (a migration step, a
    /// schema change) must not end that transaction: what ran before the COMMIT would stay
    /// committed while the error says the block left no trace. Checking after the block is too
    /// late; SQLite's authorizer sees the statement at prepare time (`SQLITE_TRANSACTION`), before
    /// it runs. Savepoints stay allowed: inside a BEGIN transaction, RELEASE and ROLLBACK TO
    /// only end the savepoint, never the transaction, so `inSavepoint` nests as usual.
    ///
    /// Installing an authorizer expires the connection's prepared statements (SQLite compiles
    /// them again on their next use, so the authorizer sees them too); removing it does not.
    /// The refusal is one purpose of the connection's shared ``DatabaseAuthorizer``: an
    /// application that installs its own authorizer through ``handle`` loses it while such a
    /// block runs.
    /// See <https://www.sqlite.org/c3ref/set_authorizer.html>.
    ///
    /// - Parameter context: what the block is, for the error: "Migration \"v2\"".
    func refusingTransactionControl<T>(in context: String, _ body: () throws -> T) throws -> T {
        // Nested blocks share the outer refusal, which reports.
        if authorizer.refusal != nil { return try body() }
        _ = try openHandle()
        let refusal = TransactionControlRefusal()
        authorizer.refusal = refusal
        updateAuthorizer()
        let outcome = Result { try body() }
        authorizer.refusal = nil
        updateAuthorizer()
        guard let verb = refusal.verb else { return try outcome.get() }
        var failure: (any Error)?
        if case .failure(let error) = outcome { failure = error }
        let statement = (failure as? DatabaseError)?.sql.map { " (in `\($0)`)" } ?? ""
        let effect: String
        switch verb {
        case "BEGIN":
            effect = "BEGIN\(statement), which would open a transaction inside the one SerialDB runs it in"
        case "ROLLBACK":
            effect = "ROLLBACK\(statement), which would end the transaction SerialDB runs it in"
        default:
            effect = "COMMIT or END\(statement), which would end the transaction SerialDB runs it in"
        }
        throw SerialDBError(
            .invalidMigrator,
            "\(context) runs \(effect) and commits itself. SerialDB refused that statement before it ran, and the "
                + "whole block is rolled back. Remove BEGIN, COMMIT, END and ROLLBACK from it: throw to roll it "
                + "back, and use db.inSavepoint to nest.",
            underlying: failure)
    }
}

/// What ``Database/refusingTransactionControl(in:_:)``'s authorizer refused: the first
/// transaction verb SQLite reported (`BEGIN`, `COMMIT` for COMMIT and END, `ROLLBACK`).
/// A class, so the C callback can write through the pointer it is given.
final class TransactionControlRefusal {
    var verb: String?
}
