/// An error raised by SerialDB itself rather than by SQLite: misuse, a closed queue, a failed
/// migration, a value that cannot be decoded, a schema change that would lose data.
///
/// The ``message`` says what happened and what to do. Match by code:
///
/// ```swift
/// catch SerialDBError.Code.migrationFailed { ... }
/// catch let error as SerialDBError where error.code == .reentrantCall { ... }
/// ```
public struct SerialDBError: Error, Sendable, CustomStringConvertible {
    /// What kind of condition this is.
    public enum Code: String, Sendable, Hashable {
        /// A queue method was called from inside a block of the same queue; it would deadlock.
        case reentrantCall
        /// Waiting for a queue would close a lock-order cycle across threads (thread 1 runs A's
        /// block and waits for B while thread 2 runs B's block and waits for A); it would
        /// deadlock. The message names the queues.
        case lockOrderCycle
        /// The queue or connection was closed.
        case closed
        /// A block returned while a transaction it began was still open; it was rolled back.
        case transactionLeftOpen
        /// A statement that writes ran inside a read-only block.
        case writeInReadOnlyBlock
        /// Arguments do not match the statement's parameters.
        case invalidArguments
        /// A column value could not be converted to the requested Swift type.
        case decodingFailed
        /// The schema upgrade failed; work submitted after it is refused until a migration succeeds.
        case migrationFailed
        /// The database has migrations applied that this migrator does not know.
        case unknownMigrations
        /// A migrator was configured incorrectly (duplicate identifiers, unknown target...).
        case invalidMigrator
        /// A foreign key check found violations.
        case foreignKeyViolation
        /// Foreign keys could not be turned back on after a schema change; the connection
        /// should be reopened before it writes.
        case foreignKeysNotRestored
        /// A schema change was refused because it would lose data or cannot be carried out.
        case schemaChangeRefused
        /// The work was cancelled before or while it ran.
        case cancelled
    }

    /// What kind of condition this is.
    public let code: Code
    /// What happened and what to do about it.
    public let message: String
    /// The error that caused this one, if any (for ``Code/migrationFailed``, the step's error).
    public let underlying: (any Error)?

    /// Creates an error with a code, a message and an optional cause.
    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// The message, followed by the cause when there is one.
    public var description: String {
        if let underlying {
            return "\(message) (caused by: \(underlying))"
        }
        return message
    }
}

extension SerialDBError.Code {
    /// Whether `error` is a ``SerialDBError`` with this code.
    public static func ~= (pattern: SerialDBError.Code, error: any Error) -> Bool {
        (error as? SerialDBError)?.code == pattern
    }
}
