import Foundation

/// A few connections to one PostgreSQL database, lent to one caller at a time. A connection
/// that broke is dropped when it comes back, and a new one is made when next needed: that is
/// how a terminated session or a restarted server is got over.
final class PostgresConnectionPool: @unchecked Sendable {
    // Safe to share: every mutable property is behind `condition`; a connection is used only
    // by the caller it is lent to.
    private let url: String
    private let size: Int
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    /// Connections made and not dropped, idle or lent.
    private var open = 0
    private var lent = 0
    private var closed = false

    /// Opens the first connection at once, so that a URL that cannot be reached fails here.
    init(url: String, size: Int) throws {
        self.url = url
        self.size = max(1, size)
        idle.append(try PostgresConnection(url: url))
        open = 1
    }

    /// Runs `body` with a connection, waiting for one when all are lent.
    func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let connection = try checkOut()
        defer { checkIn(connection) }
        return try body(connection)
    }

    /// Drops the idle connections: after one session was lost, the others most likely were too
    /// (a restarted server, an administrator's `pg_terminate_backend`), and new ones are made on demand.
    func dropIdleConnections() {
        condition.withLock {
            open -= idle.count
            idle.removeAll()
            condition.broadcast()
        }
    }

    /// Waits for the lent connections to come back and closes every connection; later calls throw.
    func close() {
        condition.withLock {
            closed = true
            while lent > 0 { condition.wait() }
            idle.removeAll()
            open = 0
            condition.broadcast()
        }
    }

    private func checkOut() throws -> PostgresConnection {
        let reused: PostgresConnection? = try condition.withLock {
            while !closed && idle.isEmpty && open >= size { condition.wait() }
            guard !closed else {
                throw SyncServerError(.invalidStore, "the PostgreSQL sync store is closed; open a new one")
            }
            lent += 1
            if let connection = idle.popLast() { return connection }
            open += 1
            return nil
        }
        if let reused { return reused }
        do {
            // Connecting takes a round trip or more: not while holding the lock.
            return try PostgresConnection(url: url)
        } catch {
            condition.withLock {
                open -= 1
                lent -= 1
                condition.broadcast()
            }
            throw error
        }
    }

    private func checkIn(_ connection: PostgresConnection) {
        condition.withLock {
            lent -= 1
            if connection.isBroken || closed {
                open -= 1
            } else {
                idle.append(connection)
            }
            condition.broadcast()
        }
    }
}
