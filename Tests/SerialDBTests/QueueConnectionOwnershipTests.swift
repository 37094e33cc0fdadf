import CSQLite
import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// The queue owns its connection: a block that closes it closes the queue, and the queue never
/// again reaches the freed connection (nor another one SQLite allocates at the same address).
@Suite struct QueueConnectionOwnershipTests {
    @Test(arguments: DatabaseKind.allCases)
    func aBlockThatClosesItsConnectionClosesTheQueue(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in try Player.createTable(db, rows: 3) }
        try queue.inDatabase { db in db.close() }
        queue.interrupt()
        let calls: [() throws -> Void] = [
            { try queue.inDatabase { _ in } }, { try queue.write { _ in } }, { try queue.read { _ in } },
            { try queue.inTransaction { _ in .commit } }, { try queue.migrate(UserLadder.migrator()) },
        ]
        for call in calls {
            let error = #expect(throws: SerialDBError.self) { try call() }
            #expect(error?.code == .closed)
        }
        try queue.close()
    }

    @Test func anAsyncBlockThatClosesItsConnectionClosesTheQueue() async throws {
        let queue = try DatabaseQueue()
        try await queue.inDatabase { db in db.close() }
        let error = await #expect(throws: SerialDBError.self) { try await queue.read { _ in } }
        #expect(error?.code == .closed)
        try await queue.close()
    }

    @Test func interruptingAQueueWhoseBlockClosedTheConnectionNeverReachesANewConnection() throws {
        let first = try DatabaseQueue()
        let freed = try first.inDatabase { db -> OpaquePointer? in
            let handle = db.handle
            db.close()
            return handle
        }
        // SQLite's allocator tends to hand the freed memory to the next connection: open a few,
        // keeping them alive, so that one of them most likely sits where the first one was.
        var others: [DatabaseQueue] = []
        for _ in 0..<8 {
            let other = try DatabaseQueue()
            others.append(other)
            if try other.inDatabase({ $0.handle }) == freed { break }
        }
        for other in others {
            let codes = try other.inDatabase { db -> [Int32] in
                var statement: OpaquePointer?
                let sql =
                    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100) SELECT x FROM c"
                guard sqlite3_prepare_v2(db.handle, sql, -1, &statement, nil) == SQLITE_OK else { return [-1] }
                defer { sqlite3_finalize(statement) }
                // A statement of the new connection is running while the first queue is interrupted.
                var codes = [sqlite3_step(statement)]
                first.interrupt()
                while codes.last == SQLITE_ROW { codes.append(sqlite3_step(statement)) }
                return codes
            }
            #expect(codes == Array(repeating: SQLITE_ROW, count: 100) + [SQLITE_DONE])
        }
    }
}
