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

    func close() throws {
        switch self {
        case .queue(let queue): try queue.close()
        case .pool(let pool): try pool.close()
        }
    }
}
