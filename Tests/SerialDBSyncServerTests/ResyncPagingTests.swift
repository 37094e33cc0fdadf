import Foundation
import SerialDBSyncServer
import SerialDBSyncWire
import Testing

/// A resync that takes several pages: every page says "floor", and a page that says
/// "resyncing" is served even when its cursor is below the floor, so a resync of a table larger
/// than one page completes.
@Suite(.timeLimit(.minutes(5))) struct ResyncPagingTests {
    private static let rows = 12_000

    /// 12,000 rows, then the first deleted and its tombstone purged: the floor is above every
    /// row's version, so every cursor a resync passes through is below it.
    private func loaded(_ kind: SyncStoreKind) async throws -> RunningSyncServer {
        let running = try RunningSyncServer(kind)
        let mutations = (1...Self.rows).map { upsert($0, "note", #"{"id": "r\#($0)", "title": "t\#($0)"}"#) }
        let loaded = try await running.alice.postData(client: "d", mutations)
        #expect(loaded.status == 200)
        let deleted = try await running.alice.postData(
            client: "d", [delete(Self.rows + 1, "note", #"{"id": "r1"}"#, base: 1)])
        #expect(deleted.status == 200)
        #expect(try running.store.purgeTombstones(through: Int64(Self.rows + 1)).floor == Int64(Self.rows + 1))
        return running
    }

    private func page(_ client: SyncHTTPClient, since: Int64, resyncing: Bool?) async throws -> JSONValue {
        let flag = resyncing.map { #", "resyncing": \#($0)"# } ?? ""
        let answer = try await client.post(
            "/v1/fetch-data", #"{"table": "note", "since": \#(since), "limit": 5000\#(flag)}"#)
        #expect(answer.status == 200)
        return answer.json
    }

    @Test(arguments: SyncStoreKind.allCases)
    func aResyncPagesThroughTwelveThousandChangesBelowTheFloor(_ kind: SyncStoreKind) async throws {
        let running = try await loaded(kind)
        defer { try? running.stop() }
        var cursor: Int64 = 0
        var seen: [String] = []
        var pages = 0
        while pages < 10 {
            let answer = try await page(running.alice, since: cursor, resyncing: true)
            pages += 1
            #expect(answer["resync"] == .bool(false))
            #expect(answer["floor"] == .integer(Int64(Self.rows + 1)))
            let changes = answer["changes"]?.arrayValue ?? []
            #expect(!changes.isEmpty)
            seen += changes.compactMap { $0["row"]?["id"]?.stringValue }
            guard let next = answer["version"]?.integerValue, next > cursor else {
                Issue.record("the cursor did not move: \(answer)")
                break
            }
            cursor = next
            if answer["has_more"] == .bool(false) { break }
        }
        #expect(pages == 3)
        #expect(seen == (2...Self.rows).map { "r\($0)" }, "every stored row once, in version order")
    }

    @Test(arguments: SyncStoreKind.allCases)
    func aPageBelowTheFloorThatDoesNotSayResyncingIsToldToResync(_ kind: SyncStoreKind) async throws {
        let running = try await loaded(kind)
        defer { try? running.stop() }
        let first = try await page(running.alice, since: 0, resyncing: nil)
        #expect(first["resync"] == .bool(false), "a fetch from 0 is never sent back to 0")
        #expect(first["has_more"] == .bool(true))
        let cursor = try #require(first["version"]?.integerValue)
        for resyncing in [nil, false] {
            let behind = try await page(running.alice, since: cursor, resyncing: resyncing)
            #expect(behind["resync"] == .bool(true))
            #expect(behind["changes"] == .array([]))
            #expect(behind["has_more"] == .bool(false))
            #expect(behind["version"] == .integer(0))
            #expect(behind["floor"] == .integer(Int64(Self.rows + 1)))
        }
        let bad = try await running.alice.post("/v1/fetch-data", #"{"table": "note", "since": 0, "resyncing": 1}"#)
        #expect(bad.status == 400)
    }

    @Test(arguments: SyncStoreKind.allCases)
    func everyFetchDataAnswerCarriesTheFloorZeroUntilAPurge(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind)
        defer { try? running.stop() }
        #expect(try await page(running.alice, since: 0, resyncing: nil)["floor"] == .integer(0))
        _ = try await running.alice.postData(client: "d", [upsert(1, "note", #"{"id": "a", "title": "x"}"#)])
        _ = try await running.alice.postData(client: "d", [delete(2, "note", #"{"id": "a"}"#, base: 1)])
        #expect(try await page(running.alice, since: 0, resyncing: nil)["floor"] == .integer(0))
        _ = try running.store.purgeTombstones(through: 2)
        #expect(try await page(running.alice, since: 2, resyncing: nil)["floor"] == .integer(2))
    }
}
