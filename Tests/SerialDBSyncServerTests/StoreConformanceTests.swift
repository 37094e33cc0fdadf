import Foundation
import SerialDBSyncServer
import SerialDBTestSupport
import Testing

/// The ``SyncStore`` promises called directly, on every store: what an upload does to a key it
/// names more than once, and values that are awkward to carry (quotes, backslashes, braces,
/// commas, the word NULL, non-ASCII).
@Suite struct StoreConformanceTests {
    private func mutation(
        _ seq: Int64, _ id: String, deleted: Bool = false, base: Int64?, owner: String = "alice"
    ) -> SyncMutation {
        let key = JSONWriterForTests.key(id)
        let keyJSON = #"{"id":\#(JSONWriterForTests.string(id))}"#
        let rowJSON = #"{"id":\#(JSONWriterForTests.string(id)),"title":"t\#(seq)","body":null}"#
        return SyncMutation(
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
        #expect(Array(results.prefix(5)) == (1...5).map { SyncMutationResult.applied(version: Int64($0)) })
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
