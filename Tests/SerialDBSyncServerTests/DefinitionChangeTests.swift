import Foundation
import SerialDBSyncServer
import SerialDBSyncWire
import SerialDBTestSupport
import Testing

/// A server restarted with changed table definitions leaves every device able to sync: the
/// stored rows are served in the new definition, declared renames carry them over, and a
/// definition the stored rows break is refused at start with the rows named, changing nothing.
@Suite struct DefinitionChangeTests {
    private static func configuration(_ tables: [String]) throws -> SyncServerConfiguration {
        let json =
            #"{"tables": [\#(tables.joined(separator: ","))], "tokens": [{"token": "t-alice", "account": "alice"}]}"#
        return try SyncServerConfiguration(json: Data(json.utf8))
    }

    private static func table(_ name: String, _ version: Int, _ schema: String, _ extra: String = "") -> String {
        #"{"name": "\#(name)", "scope": "account", "struct_version": \#(version), "schema": "\#(schema)"\#(extra)}"#
    }

    private static func call(_ service: SyncService, _ path: String, _ body: String) throws -> JSONValue {
        let response = service.handle(
            SyncRequest(method: "POST", path: path, authorization: "Bearer t-alice", body: Data(body.utf8)))
        #expect(response.status == 200, "\(path): \(String(decoding: response.body, as: UTF8.self))")
        return try JSONValue.parse(response.body)
    }

    /// Every stored change of a table of alice's, in version order.
    private static func stored(_ store: any SyncStore, _ table: String) throws -> [SyncEncodedChange] {
        try store.changes(table: table, owner: "alice", since: 0, limit: 1000).changes
    }

    /// The message `SyncService` refuses to start with, or `nil` when it starts.
    private static func refusal(_ configuration: SyncServerConfiguration, _ store: any SyncStore) -> String? {
        SyncFixtures.refusal { _ = try SyncService(configuration: configuration, store: store) }
    }

    @Test(arguments: SyncStoreKind.persistent)
    func storedRowsAreServedInTheNewDefinitionWithDeclaredRenamesCarriedOver(_ kind: SyncStoreKind) throws {
        let directory = try TemporaryDirectory()
        let location = try kind.makeLocation(in: directory)
        let old = try Self.configuration([
            Self.table(
                "note", 1,
                "CREATE TABLE note(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, body TEXT, flag INTEGER)"),
            Self.table("memo", 1, "CREATE TABLE memo(id INTEGER PRIMARY KEY, text TEXT)"),
        ])
        var store = try location.open()
        var service = try SyncService(configuration: old, store: store)
        _ = try service.load(
            rows: [
                .object(["id": .string("a"), "title": .string("A"), "body": .string("x"), "flag": .integer(1)]),
                .object(["id": .string("b"), "title": .string("B")]),
            ], into: "note", account: "alice")
        _ = try service.load(
            rows: [.object(["id": .integer(1), "text": .string("m")])], into: "memo", account: "alice")
        _ = try Self.call(
            service, "/v1/post-data",
            #"{"client_id": "d", "mutations": [\#(delete(1, "note", #"{"id": "b"}"#, base: 2))]}"#)
        let before = try Self.stored(store, "note")
        try store.close()

        // title becomes heading, flag is dropped, stars is new; memo becomes jotting.
        let new = try Self.configuration([
            Self.table(
                "note", 2,
                "CREATE TABLE note(id TEXT PRIMARY KEY NOT NULL, heading TEXT NOT NULL, body TEXT, stars INTEGER NOT NULL DEFAULT 0)",
                #", "renamed_columns": {"heading": "title"}"#),
            Self.table(
                "jotting", 2, "CREATE TABLE jotting(id INTEGER PRIMARY KEY, text TEXT)", #", "renamed_from": "memo""#),
        ])
        for start in 1...2 {
            store = try location.open()
            service = try SyncService(configuration: new, store: store)
            let note = try Self.stored(store, "note")
            #expect(note.map(\.version) == before.map(\.version), "start \(start): versions stay")
            #expect(note.map(\.deleted) == [false, true])
            #expect(note.first?.rowJSON == #"{"id":"a","heading":"A","body":"x","stars":0}"#, "start \(start)")
            #expect(note.last?.rowJSON == #"{"id":"b"}"#)
            #expect(try Self.stored(store, "jotting").map(\.rowJSON) == [#"{"id":1,"text":"m"}"#])
            #expect(try Self.stored(store, "memo").isEmpty)
            let schema = try Self.call(service, "/v1/fetch-schema", #"{"table": "note"}"#)
            #expect(schema["renamed_columns"] == .object(["heading": .string("title")]))
            #expect(schema["renamed_from"] == nil)
            let jotting = try Self.call(service, "/v1/fetch-schema", #"{"table": "jotting"}"#)
            #expect(jotting["renamed_from"] == .string("memo"))
            #expect(jotting["renamed_columns"] == nil)
            try store.close()
        }

        // A device still holding an edit of memo has it rejected alone; the rest applies.
        store = try location.open()
        defer { try? store.close() }
        service = try SyncService(configuration: new, store: store)
        let posted = try Self.call(
            service, "/v1/post-data",
            #"{"client_id": "d", "mutations": [\#(upsert(2, "memo", #"{"id": 1, "text": "late"}"#)), \#(upsert(3, "note", #"{"id": "c", "heading": "C"}"#))]}"#
        )
        #expect(posted["results"]?.arrayValue?.map { $0["status"] } == [.string("rejected"), .string("applied")])
    }

    @Test(arguments: SyncStoreKind.persistent)
    func aDefinitionTheStoredRowsBreakIsRefusedAtStartNamingThemAndChangesNothing(_ kind: SyncStoreKind) throws {
        let directory = try TemporaryDirectory()
        let location = try kind.makeLocation(in: directory)
        let old = try Self.configuration([
            Self.table("item", 1, "CREATE TABLE item(id INTEGER PRIMARY KEY, email TEXT, n INTEGER)")
        ])
        var store = try location.open()
        let service = try SyncService(configuration: old, store: store)
        _ = try service.load(
            rows: [
                .object(["id": .integer(1), "email": .string("a@x"), "n": .integer(1)]),
                .object(["id": .integer(2), "email": .string("A@X"), "n": .integer(-1)]),
                .object(["id": .integer(3), "email": .string("b@x")]),
            ], into: "item", account: "alice")
        let before = try Self.stored(store, "item")
        try store.close()

        let broken: [(schema: String, expected: [String])] = [
            (
                "CREATE TABLE item(id INTEGER PRIMARY KEY, email TEXT, n INTEGER, must TEXT NOT NULL)",
                ["3 of the rows", "key [1]", "key [2]", "key [3]", "column \"must\" is NOT NULL and has no default"]
            ),
            (
                "CREATE TABLE item(id INTEGER PRIMARY KEY, email TEXT, n INTEGER CHECK (n >= 0))",
                ["1 of the rows", "key [2]", "CHECK constraint failed: n >= 0"]
            ),
            (
                "CREATE TABLE item(id INTEGER PRIMARY KEY, email TEXT COLLATE NOCASE UNIQUE, n INTEGER)",
                ["key [2]", "key [1]", "UNIQUE constraint failed: item.email"]
            ),
        ]
        for (schema, expected) in broken {
            store = try location.open()
            let message = Self.refusal(try Self.configuration([Self.table("item", 2, schema)]), store)
            #expect(message?.contains(#"table "item" (struct_version 2)"#) == true, "\(message ?? "started")")
            for part in expected {
                #expect(message?.contains(part) == true, "\(part) in \(message ?? "started")")
            }
            #expect(try Self.stored(store, "item") == before, "a refused definition changes nothing")
            try store.close()
        }

        // A UNIQUE the rows keep is adopted, and holds against the stored rows from then on.
        store = try location.open()
        defer { try? store.close() }
        let unique = try SyncService(
            configuration: try Self.configuration([
                Self.table("item", 2, "CREATE TABLE item(id INTEGER PRIMARY KEY, email TEXT UNIQUE, n INTEGER)")
            ]), store: store)
        let posted = try Self.call(
            unique, "/v1/post-data",
            #"{"client_id": "d", "mutations": [\#(upsert(1, "item", #"{"id": 4, "email": "a@x"}"#)), \#(upsert(2, "item", #"{"id": 5, "email": "a@X"}"#))]}"#
        )
        #expect(posted["results"]?[0]?["error"] == .string("UNIQUE constraint failed: item.email"))
        #expect(posted["results"]?[1]?["status"] == .string("applied"))
    }
}
