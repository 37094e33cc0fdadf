import Foundation
import SerialDBSyncServer
import SerialDBSyncWire
import Testing

/// The four calls of the sync wire protocol, over real HTTP, against every store.
@Suite(.timeLimit(.minutes(5))) struct WireProtocolTests {
    @Test(arguments: SyncStoreKind.allCases)
    func checkUpdateListsEveryTableWithItsScopeOwnerAndWhatChanged(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind)
        defer { try? running.stop() }
        let alice = running.alice
        #expect(
            try await alice.postData(client: "d1", [upsert(1, "note", #"{"id": "a1", "title": "x"}"#)]).status == 200)

        let answer = try await alice.post(
            "/v1/check-update",
            #"{"tables": [{"table": "note", "struct_version": 1, "version": 0}, {"table": "item", "struct_version": 2, "version": 0}]}"#
        )
        #expect(answer.status == 200)
        #expect(answer["account"] == .string("alice"))
        let tables = try #require(answer["tables"]?.arrayValue)
        #expect(tables.map { $0["table"] } == ["note", "country", "item", "pair"].map { .string($0) })
        let note = tables[0]
        #expect(note["scope"] == .string("account"))
        #expect(note["owner"] == .string("alice"))
        #expect(note["struct_version"] == .integer(1))
        #expect(note["version"] == .integer(1))
        #expect(note["schema_changed"] == .bool(false))
        #expect(note["data_changed"] == .bool(true))
        let country = tables[1]
        #expect(country["scope"] == .string("global"))
        #expect(country["owner"] == .string(""))
        #expect(country["schema_changed"] == .bool(true), "a table the client did not list")
        #expect(country["data_changed"] == .bool(false))
        #expect(tables[2]["schema_changed"] == .bool(true), "listed with another struct_version")

        let upToDate = try await alice.post(
            "/v1/check-update", #"{"tables": [{"table": "note", "struct_version": 1, "version": 1}]}"#)
        #expect(upToDate["tables"]?[0]?["data_changed"] == .bool(false))
    }

    @Test(arguments: SyncStoreKind.allCases)
    func aFetchDataPageStopsBeforeItWouldPassFourMebibytesOfJSON(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind)
        defer { try? running.stop() }
        let pageBytes = SyncService.maximumPageBytes
        // Twelve rows of a little under 1 MiB, then one whose JSON alone nearly fills a page.
        let titles =
            (1...12).map { String(repeating: "\($0 % 10)", count: 1_000_000) } + [
                String(repeating: "z", count: pageBytes - 200)
            ]
        let rows = titles.enumerated().map { index, title in
            JSONValue.object(["id": .string("r\(index + 1)"), "title": .string(title), "body": .null])
        }
        let loaded = try running.server.service.load(rows: rows, into: "note", account: "alice")
        #expect(loaded == (1...13).map { .applied(version: Int64($0)) })

        var cursor: Int64 = 0
        var pages: [SyncHTTPClient.Answer] = []
        while pages.count < 20 {
            let page = try await running.alice.fetchData("note", since: cursor, limit: 5000)
            #expect(page.status == 200)
            pages.append(page)
            cursor = page["version"]?.integerValue ?? cursor
            guard page["has_more"] == .bool(true) else { break }
        }
        let changes = pages.flatMap { $0["changes"]?.arrayValue ?? [] }
        #expect(changes.map { $0["version"] } == (1...13).map { .integer(Int64($0)) }, "every row once, in order")
        #expect(changes.map { $0["row"]?["title"] } == titles.map { .string($0) })
        #expect(pages.count >= 4)
        for page in pages {
            let count = page["changes"]?.arrayValue?.count ?? 0
            #expect(count >= 1, "a page with more to come holds at least one change")
            #expect(page.byteCount <= pageBytes, "a page of \(count) change(s) is \(page.byteCount) bytes")
        }
        #expect(pages.dropLast().allSatisfy { $0["has_more"] == .bool(true) })
        #expect(pages.last?["has_more"] == .bool(false))
        #expect(pages.last?["changes"]?.arrayValue?.count == 1, "the near-4 MiB row comes alone")
    }

    @Test(arguments: SyncStoreKind.allCases)
    func fetchSchemaReturnsTheDeclaredSQLAndStructVersion(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind)
        defer { try? running.stop() }
        let answer = try await running.alice.post("/v1/fetch-schema", #"{"table": "item"}"#)
        #expect(answer.status == 200)
        #expect(answer["table"] == .string("item"))
        #expect(answer["struct_version"] == .integer(3))
        #expect(answer["schema"]?.stringValue?.contains("CREATE INDEX item_label ON item(label)") == true)
    }

    @Test(arguments: SyncStoreKind.allCases)
    func uploadedRowsComeBackInVersionOrderWithTheirCursor(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind)
        defer { try? running.stop() }
        let alice = running.alice
        let posted = try await alice.postData(
            client: "d1",
            [
                upsert(1, "note", #"{"id": "a1", "title": "first", "body": null}"#),
                upsert(2, "note", #"{"id": "a2", "title": "second", "body": "text"}"#),
            ])
        #expect(posted.status == 200)
        #expect(
            posted["results"]
                == .array([
                    .object(["seq": .integer(1), "status": .string("applied"), "version": .integer(1)]),
                    .object(["seq": .integer(2), "status": .string("applied"), "version": .integer(2)]),
                ]))
        // Updating a1 moves it after a2: each key appears once, in its latest state.
        let updated = try await alice.postData(
            client: "d1", [upsert(3, "note", #"{"id": "a1", "title": "again"}"#, base: 1)])
        #expect(updated["results"]?[0]?["version"] == .integer(3))

        let page = try await alice.fetchData("note", since: 0)
        #expect(page.status == 200)
        #expect(page["table"] == .string("note"))
        #expect(
            page["changes"]
                == .array([
                    .object([
                        "version": .integer(2), "deleted": .bool(false),
                        "row": .object(["id": .string("a2"), "title": .string("second"), "body": .string("text")]),
                    ]),
                    .object([
                        "version": .integer(3), "deleted": .bool(false),
                        "row": .object(["id": .string("a1"), "title": .string("again"), "body": .null]),
                    ]),
                ]))
        #expect(page["version"] == .integer(3))
        #expect(page["has_more"] == .bool(false))
        #expect(page["resync"] == .bool(false))

        let nothingNew = try await alice.fetchData("note", since: 3)
        #expect(nothingNew["changes"] == .array([]))
        #expect(nothingNew["version"] == .integer(3), "the cursor stays where it was")
    }

    @Test(arguments: SyncStoreKind.allCases)
    func twoAccountsWithTheSameKeysNeverTouchEachOther(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind)
        defer { try? running.stop() }
        _ = try await running.alice.postData(
            client: "same-device", [upsert(1, "note", #"{"id": "k", "title": "alice's"}"#)])
        let bobs = try await running.bob.postData(
            client: "same-device", [upsert(1, "note", #"{"id": "k", "title": "bob's"}"#)])
        #expect(
            bobs["results"]?[0]?["status"] == .string("applied"), "same key, same client id and seq: another account")

        let alicesRows = try await running.alice.fetchAll("note").changes
        let bobsRows = try await running.bob.fetchAll("note").changes
        #expect(alicesRows.map { $0["row"]?["title"] } == [.string("alice's")])
        #expect(bobsRows.map { $0["row"]?["title"] } == [.string("bob's")])
        // Bob deleting his k leaves Alice's alone.
        let bobVersion = try #require(bobsRows.first?["version"]?.integerValue)
        _ = try await running.bob.postData(
            client: "same-device", [delete(2, "note", #"{"id": "k"}"#, base: bobVersion)])
        #expect(try await running.alice.fetchAll("note").changes.map { $0["deleted"] } == [.bool(false)])
        // A body naming another owner changes nothing: the owner comes from the token.
        let sneaky = try await running.bob.postData(
            client: "d",
            [
                #"{"seq": 9, "table": "note", "op": "upsert", "owner": "alice", "row": {"id": "x", "title": "t"}, "base_version": 0}"#
            ])
        #expect(sneaky["results"]?[0]?["status"] == .string("applied"))
        #expect(try await running.alice.fetchAll("note").changes.count == 1)
    }

    @Test(arguments: SyncStoreKind.allCases)
    func aStaleUpdateIsAReportedConflictThatChangesNothing(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind)
        defer { try? running.stop() }
        let alice = running.alice
        _ = try await alice.postData(client: "phone", [upsert(1, "note", #"{"id": "a", "title": "v1"}"#)])
        _ = try await alice.postData(client: "laptop", [upsert(1, "note", #"{"id": "a", "title": "v2"}"#, base: 1)])
        // The phone still believes version 1 is current.
        let stale = try await alice.postData(
            client: "phone", [upsert(2, "note", #"{"id": "a", "title": "v3"}"#, base: 1)])
        #expect(
            stale["results"]?[0]
                == .object([
                    "seq": .integer(2), "status": .string("conflict"),
                    "current": .object([
                        "version": .integer(2), "deleted": .bool(false),
                        "row": .object(["id": .string("a"), "title": .string("v2"), "body": .null]),
                    ]),
                ]))
        // Believing a key is new when it exists is a conflict too.
        let notNew = try await alice.postData(client: "tablet", [upsert(1, "note", #"{"id": "a", "title": "v4"}"#)])
        #expect(notNew["results"]?[0]?["status"] == .string("conflict"))
        let rows = try await alice.fetchAll("note").changes
        #expect(rows.map { $0["row"]?["title"] } == [.string("v2")])
        #expect(rows.map { $0["version"] } == [.integer(2)])
    }

    @Test(arguments: SyncStoreKind.allCases)
    func aRepeatedSeqReturnsItsFirstResultAndChangesNothing(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind)
        defer { try? running.stop() }
        let alice = running.alice
        let mutations = [
            upsert(1, "note", #"{"id": "a", "title": "one"}"#),
            upsert(2, "note", #"{"id": "b"}"#),
            upsert(3, "note", #"{"id": "a", "title": "stale"}"#, base: 7),
        ]
        let first = try await alice.postData(client: "d1", mutations)
        #expect(
            first["results"]?.arrayValue?.map { $0["status"] }
                == ["applied", "rejected", "conflict"].map { .string($0) })
        // Someone else changes a: the retry still answers what it answered the first time.
        _ = try await alice.postData(client: "d2", [upsert(1, "note", #"{"id": "a", "title": "two"}"#, base: 1)])
        let retry = try await alice.postData(client: "d1", mutations)
        #expect(retry.json == first.json)
        let rows = try await alice.fetchAll("note").changes
        #expect(rows.map { $0["row"]?["title"] } == [.string("two")])
        // A seq repeated inside one request could not be answered twice on a retry: the
        // request is refused and nothing of it applied.
        let twice = try await alice.postData(
            client: "d3",
            [
                upsert(1, "note", #"{"id": "c", "title": "x"}"#), upsert(2, "note", #"{"id": "e", "title": "z"}"#),
                upsert(1, "note", #"{"id": "d", "title": "y"}"#),
            ])
        #expect(twice.status == 400)
        #expect(twice.errorCode == "bad_request")
        #expect(twice.errorMessage?.contains("mutation 3 repeats seq 1") == true, "\(twice.json)")
        #expect(try await alice.fetchAll("note").changes.map { $0["row"]?["id"] } == [.string("a")])
        let afterwards = try await alice.postData(client: "d3", [upsert(1, "note", #"{"id": "c", "title": "x"}"#)])
        #expect(afterwards["results"]?[0]?["status"] == .string("applied"), "the refused request recorded nothing")
    }

    @Test(arguments: SyncStoreKind.allCases)
    func aClientIDWithANulIsABadRequestOnEveryStore(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind)
        defer { try? running.stop() }
        let answer = try await running.alice.post(
            "/v1/post-data",
            #"{"client_id": "dev\u0000ice", "mutations": [\#(upsert(1, "note", #"{"id": "a", "title": "x"}"#))]}"#)
        #expect(answer.status == 400)
        #expect(answer.errorCode == "bad_request")
        #expect(answer.errorMessage?.contains("NUL") == true, "\(answer.json)")
        #expect(try await running.alice.fetchAll("note").changes.isEmpty)
        let log = running.log.withLock { $0 }
        #expect(log.allSatisfy { $0.internalError == nil }, "no store error behind the answer")
    }

    @Test(arguments: SyncStoreKind.allCases)
    func aMutationOfATableTheServerNoLongerSyncsIsRejectedAloneAndTheRestApplied(_ kind: SyncStoreKind)
        async throws
    {
        let running = try RunningSyncServer(kind)
        defer { try? running.stop() }
        let answer = try await running.alice.postData(
            client: "d",
            [
                upsert(1, "note", #"{"id": "a", "title": "x"}"#),
                upsert(2, "gone", #"{"id": "a"}"#),
                #"{"seq": 3, "table": "gone", "op": "delete", "key": {"id": "a"}, "base_version": 4}"#,
                upsert(4, "note", #"{"id": "b", "title": "y"}"#),
            ])
        #expect(answer.status == 200, "\(answer.json)")
        let results = try #require(answer["results"]?.arrayValue)
        #expect(results.map { $0["status"] } == ["applied", "rejected", "rejected", "applied"].map { .string($0) })
        #expect(results[1]["error"]?.stringValue?.contains(#"no synced table "gone""#) == true)
        #expect(try await running.alice.fetchAll("note").changes.count == 2)
        let retry = try await running.alice.postData(client: "d", [upsert(2, "gone", #"{"id": "a"}"#)])
        #expect(retry["results"]?[0] == results[1], "the rejection is remembered like any result")
    }

    @Test(arguments: SyncStoreKind.allCases)
    func deletesTravelAsTombstonesAndMakeTheKeyNewAgain(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind)
        defer { try? running.stop() }
        let alice = running.alice
        _ = try await alice.postData(
            client: "d", [upsert(1, "pair", #"{"a": "x", "b": {"base64": "AAE="}, "value": 5}"#)])
        let deleted = try await alice.postData(
            client: "d", [delete(2, "pair", #"{"b": {"base64": "AAE="}, "a": "x"}"#, base: 1)])
        #expect(deleted["results"]?[0]?["version"] == .integer(2))
        let page = try await alice.fetchData("pair", since: 0)
        #expect(
            page["changes"]
                == .array([
                    .object([
                        "version": .integer(2), "deleted": .bool(true),
                        "row": .object(["a": .string("x"), "b": .object(["base64": .string("AAE=")])]),
                    ])
                ]))
        // A stale delete is a conflict; re-inserting the deleted key is based on 0.
        let staleDelete = try await alice.postData(
            client: "d", [delete(3, "pair", #"{"a": "x", "b": {"base64": "AAE="}}"#, base: 1)])
        #expect(staleDelete["results"]?[0]?["status"] == .string("conflict"))
        #expect(staleDelete["results"]?[0]?["current"]?["deleted"] == .bool(true))
        let again = try await alice.postData(
            client: "d", [upsert(4, "pair", #"{"a": "x", "b": {"base64": "AAE="}}"#, base: 0)])
        #expect(again["results"]?[0]?["status"] == .string("applied"))
        let rows = try await alice.fetchAll("pair").changes
        #expect(rows.count == 1)
        #expect(rows.first?["deleted"] == .bool(false))
        #expect(rows.first?["row"]?["value"] == .null)
    }

    @Test(arguments: SyncStoreKind.allCases)
    func aCursorBelowThePurgeFloorIsToldToFetchAgainFromZero(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind)
        defer { try? running.stop() }
        let alice = running.alice
        _ = try await alice.postData(
            client: "d",
            [
                upsert(1, "note", #"{"id": "a", "title": "x"}"#), upsert(2, "note", #"{"id": "b", "title": "y"}"#),
                upsert(3, "note", #"{"id": "c", "title": "z"}"#),
            ])
        _ = try await alice.postData(client: "d", [delete(4, "note", #"{"id": "a"}"#, base: 1)])  // version 4
        let purge = try running.store.purgeTombstones(through: 4)
        #expect(purge.purged == 1)
        #expect(purge.floor == 4)

        let behind = try await alice.fetchData("note", since: 2)
        #expect(behind["resync"] == .bool(true))
        #expect(behind["changes"] == .array([]))
        #expect(behind["version"] == .integer(0))
        let fromZero = try await alice.fetchData("note", since: 0)
        #expect(fromZero["resync"] == .bool(false))
        #expect(fromZero["changes"]?.arrayValue?.map { $0["row"]?["id"] } == [.string("b"), .string("c")])
        let atFloor = try await alice.fetchData("note", since: 4)
        #expect(atFloor["resync"] == .bool(false), "a cursor at the floor saw every purged tombstone")
        // The floor never goes down, and never above the versions handed out.
        #expect(try running.store.purgeTombstones(through: 1).floor == 4)
        #expect(try running.store.purgeTombstones(through: 1_000).floor == 4)
    }

    @Test(arguments: SyncStoreKind.allCases)
    func checkUpdateSendsAClientWhoseCursorAPurgeOvertookToFetchEvenWithNoNewerRow(_ kind: SyncStoreKind)
        async throws
    {
        let running = try RunningSyncServer(kind)
        defer { try? running.stop() }
        let alice = running.alice
        _ = try await alice.postData(
            client: "d",
            [upsert(1, "note", #"{"id": "a", "title": "x"}"#), upsert(2, "note", #"{"id": "b", "title": "y"}"#)])
        _ = try await alice.postData(client: "d", [delete(3, "note", #"{"id": "a"}"#, base: 1)])  // version 3
        #expect(try running.store.purgeTombstones(through: 3).floor == 3)

        func check(_ version: Int64) async throws -> JSONValue? {
            let answer = try await alice.post(
                "/v1/check-update", #"{"tables": [{"table": "note", "struct_version": 1, "version": \#(version)}]}"#)
            #expect(answer.status == 200)
            return answer["tables"]?[0]
        }
        // The tombstone of a (version 3) is gone: the newest stored row is b, version 2.
        let behind = try await check(2)
        #expect(behind?["version"] == .integer(2))
        #expect(behind?["data_changed"] == .bool(true), "version 2 is below the floor: the client must fetch")
        #expect(behind?["floor"] == .integer(3))
        #expect(try await alice.fetchData("note", since: 2)["resync"] == .bool(true), "and the fetch says resync")
        #expect(try await check(3)?["data_changed"] == .bool(false), "a cursor at the floor saw everything")
        #expect(try await check(0)?["data_changed"] == .bool(true))
    }

    @Test(arguments: SyncStoreKind.allCases)
    func pagesFollowEachOtherAndTheLimitIsCappedAt5000(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind)
        defer { try? running.stop() }
        let alice = running.alice
        let total = 5_200
        var seq = 0
        for batch in stride(from: 0, to: total, by: 1_300) {
            let mutations = (batch..<batch + 1_300).map { index -> String in
                seq += 1
                return upsert(seq, "item", #"{"id": \#(index), "label": "row \#(index)"}"#)
            }
            #expect(try await alice.postData(client: "bulk", mutations).status == 200)
        }
        let capped = try await alice.fetchData("item", since: 0, limit: 1_000_000)
        #expect(capped["changes"]?.arrayValue?.count == 5_000)
        #expect(capped["has_more"] == .bool(true))
        #expect(capped["version"] == .integer(5_000))
        let defaultPage = try await alice.fetchData("item", since: 0)
        #expect(defaultPage["changes"]?.arrayValue?.count == 500)

        let (changes, cursor) = try await alice.fetchAll("item", limit: 777)
        #expect(changes.count == total)
        #expect(changes.compactMap { $0["version"]?.integerValue } == Array(1...Int64(total)))
        #expect(cursor == Int64(total))
    }

    @Test(arguments: SyncStoreKind.allCases)
    func globalTablesAreReadByEveryAccountAndWrittenByNone(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind)
        defer { try? running.stop() }
        let loaded = try running.server.service.load(
            rows: [.object(["code": .string("FR"), "name": .string("France")]), .object(["code": .string("XX")])],
            into: "country")
        #expect(loaded.first == .applied(version: 1))
        #expect(loaded.last.map { if case .rejected = $0 { true } else { false } } == true)
        for client in [running.alice, running.bob] {
            let rows = try await client.fetchAll("country").changes
            #expect(rows.map { $0["row"]?["name"] } == [.string("France")])
            let check = try await client.post("/v1/check-update", #"{"tables": []}"#)
            #expect(check["tables"]?[1]?["version"] == .integer(1))
        }
        let write = try await running.alice.postData(
            client: "d",
            [upsert(1, "note", #"{"id": "n", "title": "t"}"#), upsert(2, "country", #"{"code": "DE", "name": "x"}"#)])
        #expect(write.status == 403)
        #expect(write.errorCode == "forbidden")
        #expect(try await running.alice.fetchAll("note").changes.isEmpty, "nothing of a refused request is applied")
    }
}
