import Foundation
import PostgresHarness
import SerialDBSyncServer
import SerialDBTestSupport
import Testing

/// The ``SyncStore`` promises called directly, on every store: what an upload does to a key it
/// names more than once, and values that are awkward to carry (quotes, backslashes, braces,
/// commas, the word NULL, non-ASCII).
@Suite(.timeLimit(.minutes(5))) struct StoreConformanceTests {
    private func mutation(
        _ seq: Int64, _ id: String, deleted: Bool = false, base: Int64?, owner: String = "alice"
    ) -> SyncStoreMutation {
        let key = JSONWriterForTests.key(id)
        let keyJSON = #"{"id":\#(JSONWriterForTests.string(id))}"#
        let rowJSON = #"{"id":\#(JSONWriterForTests.string(id)),"title":"t\#(seq)","body":null}"#
        return SyncStoreMutation(
            seq: seq, table: "note", owner: owner,
            action: deleted
                ? .delete(key: key, keyJSON: keyJSON) : .upsert(key: key, keyJSON: keyJSON, rowJSON: rowJSON),
            baseVersion: base)
    }

    @Test(arguments: SyncStoreKind.allCases)
    func aKeyChangedSeveralTimesInOneUploadEndsInItsLatestState(_ kind: SyncStoreKind) throws {
        let directory = try TemporaryDirectory()
        let store = try kind.makeStore(in: directory)
        defer { try? store.close() }
        let results = try store.apply(
            account: "alice", clientID: "d",
            mutations: [
                mutation(1, "a", base: 0), mutation(2, "a", base: 1), mutation(3, "a", deleted: true, base: 2),
                mutation(4, "b", base: 0), mutation(5, "a", base: 0), mutation(6, "b", base: 0),
            ])
        #expect(Array(results.prefix(5)) == (1...5).map { SyncUploadOutcome.applied(version: Int64($0)) })
        guard case .conflict(let current) = results[5] else {
            Issue.record("a second insert of b in the same upload is a conflict, got \(results[5])")
            return
        }
        #expect(current.version == 4)
        let page = try store.changes(table: "note", owner: "alice", since: 0, limit: 10)
        #expect(page.changes.map(\.version) == [4, 5])
        #expect(page.changes.map(\.deleted) == [false, false])
        #expect(try store.latestVersions(of: [("note", "alice"), ("note", "bob")]) == [5, 0])
    }

    @Test(arguments: SyncStoreKind.allCases)
    func awkwardKeysValuesAndClientIDsComeBackExactlyAndRetriesFindTheirResults(_ kind: SyncStoreKind) throws {
        let directory = try TemporaryDirectory()
        let store = try kind.makeStore(in: directory)
        defer { try? store.close() }
        let ids = [#"a"b"#, #"back\slash"#, "{braces}", "comma,semicolon;", "NULL", "", " spaced ", "é🎉\u{1}", #"\""#]
        let account = #"acc"ount\"#
        let mutations = ids.enumerated().map { mutation(Int64($0.offset + 1), $0.element, base: 0, owner: account) }
        let clientID = #"client "quoted", {braced} \ NULL"#
        let first = try store.apply(account: account, clientID: clientID, mutations: mutations)
        #expect(first == (1...Int64(ids.count)).map { .applied(version: $0) })
        let retry = try store.apply(account: account, clientID: clientID, mutations: mutations)
        #expect(retry == first, "the retry finds the first results under the same awkward client id")

        let page = try store.changes(table: "note", owner: account, since: 0, limit: 100)
        #expect(
            page.changes.map(\.rowJSON)
                == mutations.map { mutation in
                    if case .upsert(_, _, let rowJSON) = mutation.action { return rowJSON }
                    return ""
                })
        #expect(try store.changes(table: "note", owner: "alice", since: 0, limit: 100).changes.isEmpty)
    }
}

/// Pages that end exactly at their limit or their byte budget, purges through a version in
/// the middle, and a counter that only ever moves with the rows it numbers: on every store.
@Suite(.timeLimit(.minutes(5))) struct StorePagingTests {
    /// Upserts of `titles` under keys k1, k2... (versions 1, 2...), as one upload.
    private func load(_ titles: [String], into store: any SyncStore) throws -> [SyncStoreMutation] {
        let mutations = titles.enumerated().map { index, title in
            let id = JSONWriterForTests.string("k\(index + 1)")
            return SyncStoreMutation(
                seq: Int64(index + 1), table: "note", owner: "alice",
                action: .upsert(
                    key: "[\(id)]", keyJSON: #"{"id":\#(id)}"#,
                    rowJSON: #"{"id":\#(id),"title":\#(JSONWriterForTests.string(title)),"body":null}"#),
                baseVersion: 0)
        }
        let results = try store.apply(account: "alice", clientID: nil, mutations: mutations)
        #expect(results == (1...Int64(titles.count)).map { .applied(version: $0) })
        return mutations
    }

    @Test(arguments: SyncStoreKind.allCases)
    func aPageEndingExactlyAtItsLimitSaysWhetherMoreFollow(_ kind: SyncStoreKind) throws {
        let directory = try TemporaryDirectory()
        let store = try kind.makeStore(in: directory)
        defer { try? store.close() }
        _ = try load((1...6).map { "title \($0)" }, into: store)
        let all = try store.changes(table: "note", owner: "alice", since: 0, limit: 6)
        #expect(all.changes.map(\.version) == [1, 2, 3, 4, 5, 6])
        #expect(all.hasMore == false)
        let five = try store.changes(table: "note", owner: "alice", since: 0, limit: 5)
        #expect(five.changes.map(\.version) == [1, 2, 3, 4, 5])
        #expect(five.hasMore)
        let lastFive = try store.changes(table: "note", owner: "alice", since: 1, limit: 5)
        #expect(lastFive.changes.map(\.version) == [2, 3, 4, 5, 6])
        #expect(lastFive.hasMore == false)
        // Pages of one: each holds exactly its change, and only the last says nothing follows.
        var since: Int64 = 0
        var pages: [SyncChangePage] = []
        while pages.count < 10 {
            let page = try store.changes(table: "note", owner: "alice", since: since, limit: 1)
            pages.append(page)
            guard page.hasMore, let last = page.changes.last else { break }
            since = last.version
        }
        #expect(pages.map { $0.changes.map(\.version) } == [[1], [2], [3], [4], [5], [6]])
        #expect(pages.map(\.hasMore) == [true, true, true, true, true, false])
        let past = try store.changes(table: "note", owner: "alice", since: 6, limit: 1)
        #expect(past.changes.isEmpty && !past.hasMore)
    }

    @Test(arguments: SyncStoreKind.allCases)
    func aPageStopsBeforeTheChangeThatWouldPassItsByteBudget(_ kind: SyncStoreKind) throws {
        let directory = try TemporaryDirectory()
        let store = try kind.makeStore(in: directory)
        defer { try? store.close() }
        // Non-ASCII, so that bytes and characters differ; sizes all different.
        let titles = (1...5).map { String(repeating: "é", count: 500 * $0) }
        _ = try load(titles, into: store)
        let sizes = try store.changes(table: "note", owner: "alice", since: 0, limit: 10).changes.map(\.wireSize)
        #expect(sizes.count == 5)
        func page(since: Int64 = 0, limit: Int = 10, bytes: Int) throws -> ([Int64], Bool) {
            let page = try store.changes(table: "note", owner: "alice", since: since, limit: limit, maximumBytes: bytes)
            return (page.changes.map(\.version), page.hasMore)
        }
        #expect(try page(bytes: sizes[0] + sizes[1]) == ([1, 2], true), "exactly at the budget")
        #expect(try page(bytes: sizes[0] + sizes[1] - 1) == ([1], true), "one byte short")
        #expect(try page(bytes: sizes[0] + sizes[1] + sizes[2] - 1) == ([1, 2], true))
        #expect(try page(bytes: 1) == ([1], true), "the first change comes whatever its size")
        #expect(try page(since: 4, bytes: 1) == ([5], false), "alone and last")
        #expect(try page(since: 2, bytes: sizes[2] + sizes[3] + sizes[4]) == ([3, 4, 5], false))
        #expect(try page(limit: 2, bytes: .max) == ([1, 2], true), "the count still bounds it")
        #expect(try page(limit: 2, bytes: sizes[0] + sizes[1]) == ([1, 2], true), "both bounds at once")
        #expect(try page(bytes: sizes.reduce(0, +)) == ([1, 2, 3, 4, 5], false))
    }

    @Test(arguments: SyncStoreKind.allCases)
    func aPurgeThroughAVersionInTheMiddleKeepsTheTombstonesAboveIt(_ kind: SyncStoreKind) throws {
        let directory = try TemporaryDirectory()
        let store = try kind.makeStore(in: directory)
        defer { try? store.close() }
        let upserts = try load(["one", "two", "three", "four"], into: store)
        // Deletes of k1, k2, k3 (versions 5, 6, 7), then k4 changes (version 8).
        let deletes = upserts.prefix(3).enumerated().map { index, upsert in
            guard case .upsert(let key, let keyJSON, _) = upsert.action else { fatalError("an upsert") }
            return SyncStoreMutation(
                seq: Int64(10 + index), table: "note", owner: "alice", action: .delete(key: key, keyJSON: keyJSON),
                baseVersion: Int64(index + 1))
        }
        var change = upserts[3]
        change.seq = 20
        change.baseVersion = 4
        let results = try store.apply(account: "alice", clientID: "d", mutations: deletes + [change])
        #expect(results == [.applied(version: 5), .applied(version: 6), .applied(version: 7), .applied(version: 8)])

        let (purged, floor) = try store.purgeTombstones(through: 6)
        #expect(purged == 2)
        #expect(floor == 6)
        let fromFloor = try store.changes(table: "note", owner: "alice", since: 6, limit: 10)
        #expect(fromFloor.floor == 6)
        #expect(!fromFloor.mustResync(since: 6, resyncing: false))
        #expect(fromFloor.changes.map(\.version) == [7, 8], "the tombstone just above the floor stays")
        #expect(fromFloor.changes.map(\.deleted) == [true, false])
        #expect(
            try store.changes(table: "note", owner: "alice", since: 5, limit: 10).mustResync(since: 5, resyncing: false)
        )
        #expect(try store.changes(table: "note", owner: "alice", since: 0, limit: 10).changes.map(\.version) == [7, 8])
    }

    @Test(arguments: SyncStoreKind.allCases)
    func anUploadWhoseCounterCannotAdvanceLeavesNoRowBehind(_ kind: SyncStoreKind) throws {
        let directory = try TemporaryDirectory()
        let location = try kind.makeLocation(in: directory)
        let store = try location.open()
        defer { try? store.close() }
        // The counter's row refuses every update: an upload that numbers its rows with it must
        // fail whole, or a later upload would hand out the same versions again.
        let (refuse, allow): (String, String)
        if kind == .postgres {
            refuse = """
                CREATE FUNCTION refuse_counter() RETURNS trigger LANGUAGE plpgsql
                    AS $$ BEGIN RAISE EXCEPTION 'the counter is refused'; END $$;
                CREATE TRIGGER refuse_counter BEFORE UPDATE ON serialdb_sync_state
                    FOR EACH ROW EXECUTE FUNCTION refuse_counter();
                """
            allow = "DROP TRIGGER refuse_counter ON serialdb_sync_state"
        } else {
            refuse = """
                CREATE TRIGGER refuse_counter BEFORE UPDATE ON serialdb_sync_state
                BEGIN SELECT RAISE(ABORT, 'the counter is refused'); END
                """
            allow = "DROP TRIGGER refuse_counter"
        }
        func execute(_ sql: String) throws {
            if let sqlite = store as? SQLiteSyncStore {
                try sqlite.database.write { db in try db.execute(sql: sql) }
            } else {
                try ScratchPostgres.execute(sql, at: location.address)
            }
        }
        try execute(refuse)
        #expect(throws: (any Error).self) { try load(["lost"], into: store) }
        #expect(try store.changes(table: "note", owner: "alice", since: 0, limit: 10).changes.isEmpty)
        #expect(try store.latestVersions(of: [("note", "alice")]) == [0])
        try execute(allow)
        _ = try load(["kept"], into: store)
        #expect(try store.changes(table: "note", owner: "alice", since: 0, limit: 10).changes.map(\.version) == [1])
    }
}

/// JSON text for the direct store calls, as the service would write it.
private enum JSONWriterForTests {
    static func string(_ text: String) -> String {
        var escaped = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case _ where scalar.value < 0x20: escaped += String(format: "\\u%04x", scalar.value)
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped + "\""
    }

    static func key(_ id: String) -> String { "[\(string(id))]" }
}
