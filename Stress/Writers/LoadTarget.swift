import Dispatch
import HarnessSupport
import SerialDB

/// What the writers write through: a queue (every scenario), or a pool (`--pool`), whose reads
/// then run beside the writes.
enum LoadTarget: Sendable {
    case queue(DatabaseQueue)
    case pool(DatabasePool)

    func write<T>(_ block: (Database) throws -> T) throws -> T {
        switch self {
        case .queue(let queue): return try queue.write(block)
        case .pool(let pool): return try pool.write(block)
        }
    }

    func write<T: Sendable>(_ block: @escaping @Sendable (Database) throws -> T) async throws -> T {
        switch self {
        case .queue(let queue): return try await queue.write(block)
        case .pool(let pool): return try await pool.write(block)
        }
    }

    func inTransaction(_ kind: TransactionKind, _ block: (Database) throws -> TransactionCompletion) throws {
        switch self {
        case .queue(let queue): try queue.inTransaction(kind, block)
        case .pool(let pool): try pool.inTransaction(kind, block)
        }
    }

    func startMigration(
        _ migrator: DatabaseMigrator, progress: @escaping @Sendable (MigrationProgress) -> Void
    ) -> MigrationHandle {
        switch self {
        case .queue(let queue): return queue.startMigration(migrator, progress: progress)
        case .pool(let pool): return pool.startMigration(migrator, progress: progress)
        }
    }

    /// Copies the upgrade's rebuilt table while the writers keep writing.
    func prepareMigration(_ migrator: DatabaseMigrator) async throws -> PreparedMigration {
        switch self {
        case .queue(let queue): return try await queue.prepareMigration(migrator)
        case .pool(let pool): return try await pool.prepareMigration(migrator)
        }
    }

    /// ``prepareMigration(_:)`` for the harness's threads: blocks until the copy caught up.
    func prepareMigrationBlocking(_ migrator: DatabaseMigrator) throws -> PreparedMigration {
        try waitForTask { try await prepareMigration(migrator) }
    }

    func close() throws {
        switch self {
        case .queue(let queue): try queue.close()
        case .pool(let pool): try pool.close()
        }
    }
}
