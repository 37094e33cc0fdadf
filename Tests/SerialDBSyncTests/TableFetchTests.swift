import Foundation
import SerialDB
import Testing

@testable import SerialDBSync

/// The per-table fetch as a state machine, fed the server's answers by hand: no transport, no
/// database.
@Suite("The per-table fetch's state machine")
struct TableFetchTests {
    private func page(
        _ versions: [Int64], cursor: Int64, more: Bool, resync: Bool = false, floor: Int64? = 0, table: String = "note"
    ) -> FetchDataResponse {
        FetchDataResponse(
            table: table,
            changes: versions.map { SyncChange(version: $0, deleted: false, row: ["id": .text("k\($0)")]) },
            version: cursor, hasMore: more, resync: resync, floor: floor)
    }

    private func application(_ action: TableFetch.Action) throws -> TableFetch.PageApplication {
        guard case .apply(let application) = action else {
            Issue.record("expected a page to apply, got \(action)")
            throw SyncError(.invalidResponse, "not a page")
        }
        return application
    }

    @Test("an incremental fetch pages from the cursor until has_more is false")
    func incrementalPages() throws {
        var fetch = TableFetch(table: "note", cursor: 40, resyncInProgress: false, pageSize: 2)
        #expect(fetch.phase == .incremental)
        #expect(fetch.nextRequest == FetchDataRequest(table: "note", since: 40, limit: 2))
        let first = try application(try fetch.receive(page([41, 42], cursor: 42, more: true)))
        #expect(!first.rewritesKnownRows && !first.recordsSeenKeys && !first.finishesResync)
        #expect(fetch.nextRequest == FetchDataRequest(table: "note", since: 42, limit: 2))
        let last = try application(try fetch.receive(page([44], cursor: 44, more: false)))
        #expect(last.page.version == 44 && !last.finishesResync)
        #expect(fetch.phase == .finished)
        #expect(fetch.nextRequest == nil)
        #expect(throws: SyncError.self) { _ = try fetch.receive(page([], cursor: 44, more: false)) }
    }

    @Test("a fetch from 0 (a first fetch, or after a definition change) rewrites rows known at their version")
    func refetchRewritesKnownRows() throws {
        var fetch = TableFetch(table: "note", cursor: 0, resyncInProgress: false, pageSize: 500)
        #expect(fetch.phase == .refetch)
        let only = try application(try fetch.receive(page([3], cursor: 3, more: false)))
        #expect(only.rewritesKnownRows && !only.recordsSeenKeys && !only.finishesResync)
        #expect(fetch.phase == .finished)
    }

    @Test("resync=true starts a resync from 0 whose pages say resyncing, record their keys, and the last deletes")
    func resyncAnswerStartsAResync() throws {
        var fetch = TableFetch(table: "note", cursor: 40, resyncInProgress: false, pageSize: 100)
        #expect(try fetch.receive(page([], cursor: 0, more: false, resync: true, floor: 90)) == .beginResync)
        #expect(fetch.phase == .resync)
        // The answer said "floor": the server honours "resyncing", so pages keep their size.
        #expect(fetch.nextRequest == FetchDataRequest(table: "note", since: 0, limit: 100, resyncing: true))
        let first = try application(try fetch.receive(page([50, 60], cursor: 60, more: true, floor: 90)))
        #expect(first.rewritesKnownRows && first.recordsSeenKeys && !first.finishesResync)
        #expect(fetch.nextRequest == FetchDataRequest(table: "note", since: 60, limit: 100, resyncing: true))
        let last = try application(try fetch.receive(page([95], cursor: 95, more: false, floor: 90)))
        #expect(last.recordsSeenKeys && last.finishesResync)
        #expect(fetch.phase == .finished && fetch.nextRequest == nil)
    }

    @Test("an interrupted resync resumes from its stored cursor, not from 0, and still finishes")
    func interruptedResyncResumes() throws {
        var fetch = TableFetch(table: "note", cursor: 5000, resyncInProgress: true, pageSize: 500)
        #expect(fetch.phase == .resync)
        // Until an answer shows the server honours "resyncing", a page is as large as the server allows.
        #expect(fetch.nextRequest == FetchDataRequest(table: "note", since: 5000, limit: 5000, resyncing: true))
        let next = try application(try fetch.receive(page([5001], cursor: 6000, more: true)))
        #expect(next.recordsSeenKeys && !next.finishesResync)
        #expect(fetch.nextRequest == FetchDataRequest(table: "note", since: 6000, limit: 500, resyncing: true))
        #expect(try application(try fetch.receive(page([], cursor: 6000, more: false))).finishesResync)
    }

    @Test("a server that predates the floor gets pages of 5000, and a second resync is an error, not a loop")
    func oldServerSecondResyncThrows() throws {
        var fetch = TableFetch(table: "note", cursor: 7, resyncInProgress: false, pageSize: 10)
        #expect(try fetch.receive(page([], cursor: 0, more: false, resync: true, floor: nil)) == .beginResync)
        #expect(fetch.nextRequest == FetchDataRequest(table: "note", since: 0, limit: 5000, resyncing: true))
        _ = try fetch.receive(page(Array(1...3), cursor: 5000, more: true, floor: nil))
        let error = #expect(throws: SyncError.self) {
            _ = try fetch.receive(page([], cursor: 0, more: false, resync: true, floor: nil))
        }
        #expect(error?.message.contains("5000 or more of its changes lie below") == true)
    }

    @Test("answers the protocol does not allow are refused with a typed error")
    func badAnswersThrow() throws {
        var fromZero = TableFetch(table: "note", cursor: 0, resyncInProgress: false, pageSize: 10)
        #expect(throws: SyncError.self) { _ = try fromZero.receive(page([], cursor: 0, more: false, resync: true)) }
        var stuck = TableFetch(table: "note", cursor: 9, resyncInProgress: false, pageSize: 10)
        #expect(throws: SyncError.self) { _ = try stuck.receive(page([9], cursor: 9, more: true)) }
        var other = TableFetch(table: "note", cursor: 9, resyncInProgress: false, pageSize: 10)
        #expect(throws: SyncError.self) { _ = try other.receive(page([10], cursor: 10, more: false, table: "memo")) }
        var resyncing = TableFetch(table: "note", cursor: 9, resyncInProgress: true, pageSize: 10)
        _ = try resyncing.receive(page([10], cursor: 10, more: true))
        #expect(throws: SyncError.self) { _ = try resyncing.receive(page([], cursor: 0, more: false, resync: true)) }
    }

    @Test("the canonical key built in Swift is the one SQLite builds, byte for byte", arguments: SyncKeyTests.oddValues)
    func swiftKeyMatchesSQL(value: DatabaseValue) throws {
        let queue = try DatabaseQueue()
        for values in [[value], [value, .text("k\u{0}"), .integer(-3), .blob(Data([0, 171])), .null]] {
            let sql = try queue.read { db in
                try db.fetchOne(
                    String.self, sql: CanonicalKey.selectSQL(count: values.count), arguments: StatementArguments(values)
                )
            }
            if case .real = value {
                #expect(CanonicalKey.withoutSQL(values) == nil, "REAL keys are left to SQLite's quote()")
            } else {
                #expect(CanonicalKey.withoutSQL(values) == sql)
            }
        }
    }
}
