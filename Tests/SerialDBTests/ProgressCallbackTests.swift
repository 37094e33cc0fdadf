import SerialDB
import SerialDBTestSupport
import Synchronization
import Testing

/// `Database.withProgressCallback`, which the sync uses to give up the processor inside its
/// long statements: the callback runs while a looping statement runs in the block, and never
/// after the block, however the block ends.
@Suite("A progress callback for the length of a block")
struct ProgressCallbackTests {
    /// A statement that loops 100,000 times.
    private static let longQuery = """
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000) SELECT count(*) FROM n
        """

    @Test("the callback runs during a long statement of the block, and not after it", arguments: DatabaseKind.allCases)
    func callbackRunsOnlyInsideTheBlock(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        let calls = Mutex(0)
        try queue.inDatabase { db in
            let count = try db.withProgressCallback(everyInstructions: 1000, { calls.withLock { $0 += 1 } }) {
                try db.fetchOne(Int.self, sql: Self.longQuery)
            }
            #expect(count == 100_000)
        }
        let during = calls.withLock { $0 }
        // A few instructions per loop of the query: hundreds of calls, not one or two.
        #expect(during > 100)
        try queue.inDatabase { db in _ = try db.fetchOne(Int.self, sql: Self.longQuery) }
        #expect(calls.withLock { $0 } == during)
    }

    @Test("a block that throws removes the callback too")
    func throwingBlockRemovesTheCallback() throws {
        let queue = try DatabaseQueue()
        let calls = Mutex(0)
        struct Failure: Error {}
        try queue.inDatabase { db in
            #expect(throws: Failure.self) {
                try db.withProgressCallback(everyInstructions: 1000, { calls.withLock { $0 += 1 } }) {
                    _ = try db.fetchOne(Int.self, sql: Self.longQuery)
                    throw Failure()
                }
            }
            let during = calls.withLock { $0 }
            #expect(during > 0)
            _ = try db.fetchOne(Int.self, sql: Self.longQuery)
            #expect(calls.withLock { $0 } == during)
        }
    }
}
