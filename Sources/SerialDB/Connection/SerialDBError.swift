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
    ///
    /// A struct of constants rather than an enum, like ``ResultCode``: so that
    /// `catch SerialDBError.Code.migrationFailed { ... }` is an expression pattern, matched by
    /// ``~=(_:_:)`` against the thrown error (Swift reads an enum case there as a pattern that
    /// cannot match `any Error`, and the clause does not compile).
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's name, such as `"migrationFailed"`.
        public let rawValue: String

        /// Wraps a code name.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The code's name.
        public var description: String { rawValue }

        /// A queue method was called from inside a block of the same queue; it would deadlock.
        public static let reentrantCall = Code(rawValue: "reentrantCall")
        /// Waiting for a queue would close a lock-order cycle across threads (thread 1 runs A's
        /// block and waits for B while thread 2 runs B's block and waits for A); it would
        /// deadlock. The message names the queues.
        public static let lockOrderCycle = Code(rawValue: "lockOrderCycle")
        /// The queue or connection was closed.
        public static let closed = Code(rawValue: "closed")
        /// A block returned while a transaction it began was still open; it was rolled back.
        public static let transactionLeftOpen = Code(rawValue: "transactionLeftOpen")
        /// SQLite ended the transaction a block opened (after a constraint with ON CONFLICT
        /// ROLLBACK, an interrupt, some I/O or full-disk errors), or a statement of the block
        /// ended it; the block's later statements are refused so that none of them commits on
        /// its own. ``SerialDBError/underlying`` is the error after which SQLite ended it.
        public static let transactionAborted = Code(rawValue: "transactionAborted")
        /// A transaction could not be rolled back after an error: the connection still has it
        /// open. ``SerialDBError/underlying`` is the error that caused the rollback.
        public static let rollbackFailed = Code(rawValue: "rollbackFailed")
        /// A statement that writes ran inside a read-only block.
        public static let writeInReadOnlyBlock = Code(rawValue: "writeInReadOnlyBlock")
        /// Arguments do not match the statement's parameters.
        public static let invalidArguments = Code(rawValue: "invalidArguments")
        /// A column value could not be converted to the requested Swift type.
        public static let decodingFailed = Code(rawValue: "decodingFailed")
        /// The schema upgrade failed; work submitted after it is refused until a migration succeeds.
        public static let migrationFailed = Code(rawValue: "migrationFailed")
        /// The database has migrations applied that this migrator does not know.
        public static let unknownMigrations = Code(rawValue: "unknownMigrations")
        /// A migrator was configured incorrectly (duplicate identifiers, unknown target, a
        /// target the database is already past...).
        public static let invalidMigrator = Code(rawValue: "invalidMigrator")
        /// A foreign key check found violations.
        public static let foreignKeyViolation = Code(rawValue: "foreignKeyViolation")
        /// Foreign keys could not be turned back on after a schema change; the connection
        /// should be reopened before it writes.
        public static let foreignKeysNotRestored = Code(rawValue: "foreignKeysNotRestored")
        /// A schema change was refused because it would lose data or cannot be carried out.
        public static let schemaChangeRefused = Code(rawValue: "schemaChangeRefused")
        /// The work was cancelled before or while it ran.
        public static let cancelled = Code(rawValue: "cancelled")
        /// An online backup could not be completed, or its copy failed `integrity_check`.
        public static let backupFailed = Code(rawValue: "backupFailed")
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
