import Foundation
import SerialDBSyncWire
import SerialDBTestSupport
import Testing

@testable import SerialDBSyncServer

/// The configuration file, and what the server does when its tables change.
@Suite(.timeLimit(.minutes(5))) struct SyncServerConfigurationTests {
    private func refusal(_ json: String) -> String? {
        SyncFixtures.refusal { _ = try SyncServerConfiguration(json: Data(json.utf8)) }
    }

    @Test func theFileOfDesignMdIsReadWithItsTablesAndTokens() throws {
        let configuration = try SyncFixtures.configuration()
        #expect(configuration.tables.map(\.name) == ["note", "country", "item", "pair"])
        #expect(configuration.table(named: "country")?.scope == .global)
        #expect(configuration.table(named: "item")?.structVersion == 3)
        #expect(configuration.table(named: "pair")?.keyColumnNames == ["a", "b"])
        #expect(configuration.account(forToken: "t-alice") == "alice")
        #expect(configuration.account(forToken: "t-bob") == "bob")
        #expect(configuration.account(forToken: "t-bo") == nil)
        #expect(configuration.account(forToken: "t-bobb") == nil)
        #expect(configuration.account(forToken: "") == nil)
    }

    @Test func configurationsThatCannotBeServedAreRefusedWithAReason() {
        let table =
            #"{"name": "t", "scope": "account", "struct_version": 1, "schema": "CREATE TABLE t(id PRIMARY KEY)"}"#
        let tokens = #""tokens": [{"token": "a", "account": "alice"}]"#
        let cases: [(String, String)] = [
            ("not json", "malformed JSON"),
            (#"{"tokens": []}"#, "\"tables\" must be an array"),
            (#"{"tables": [], "tokens": {}}"#, "\"tokens\" must be an array"),
            (#"{"tables": [{"scope": "account"}], \#(tokens)}"#, "needs a \"name\""),
            (#"{"tables": [{"name": "t", "scope": "team", "struct_version": 1, "schema": "x"}], \#(tokens)}"#, "scope"),
            (
                #"{"tables": [{"name": "t", "scope": "account", "struct_version": 0, "schema": "x"}], \#(tokens)}"#,
                "struct_version"
            ),
            (
                #"{"tables": [{"name": "t", "scope": "account", "struct_version": 1, "schema": "CREATE TABEL t(x)"}], \#(tokens)}"#,
                "does not run"
            ),
            (
                #"{"tables": [{"name": "t", "scope": "account", "struct_version": 1, "schema": "CREATE TABLE u(x PRIMARY KEY)"}], \#(tokens)}"#,
                "does not create a table of that name"
            ),
            (
                #"{"tables": [{"name": "t", "scope": "account", "struct_version": 1, "schema": "CREATE TABLE t(x PRIMARY KEY); CREATE TABLE u(y)"}], \#(tokens)}"#,
                "creates other tables"
            ),
            (
                #"{"tables": [{"name": "t", "scope": "account", "struct_version": 1, "schema": "CREATE TABLE t(x)"}], \#(tokens)}"#,
                "has no PRIMARY KEY"
            ),
            (#"{"tables": [\#(table), \#(table)], \#(tokens)}"#, "listed twice"),
            (#"{"tables": [\#(table)], "tokens": [{"token": "", "account": "a"}]}"#, "non-empty"),
            (
                #"{"tables": [\#(table)], "tokens": [{"token": "a", "account": "x"}, {"token": "a", "account": "y"}]}"#,
                "listed twice"
            ),
        ]
        for (json, reason) in cases {
            let message = refusal(json)
            #expect(message?.contains(reason) == true, "\(json): \(message ?? "accepted")")
        }
    }

    @Test func definitionsNoDeviceCouldFollowAreRefusedWithWhatToDo() {
        let tokens = #""tokens": [{"token": "a", "account": "alice"}]"#
        func config(_ schema: String, extra: String = "") -> String {
            #"{"tables": [{"name": "t", "scope": "account", "struct_version": 1, "schema": "\#(schema)"\#(extra)}], \#(tokens)}"#
        }
        let cases: [(String, String)] = [
            (config("CREATE TABLE t(id TEXT PRIMARY KEY COLLATE NOCASE)"), "primary-key column \"id\" COLLATE NOCASE"),
            (
                config("CREATE TABLE t(a TEXT COLLATE RTRIM, b INTEGER, PRIMARY KEY (b, a)) WITHOUT ROWID"),
                "primary-key column \"a\" COLLATE RTRIM"
            ),
            (
                config("CREATE TABLE t(id PRIMARY KEY, e TEXT); CREATE UNIQUE INDEX t_e ON t(e) WHERE e <> ''"),
                "partial"
            ),
            (config("CREATE TABLE t(id PRIMARY KEY, e TEXT); CREATE UNIQUE INDEX t_e ON t(lower(e))"), "expression"),
            (config("CREATE TABLE t(id PRIMARY KEY, r REAL DEFAULT 1e999)"), "JSON cannot carry"),
            (config("CREATE TABLE t(id PRIMARY KEY, r REAL DEFAULT '-1e999')"), "JSON cannot carry"),
            (config("CREATE TABLE t(id INTEGER PRIMARY KEY, r ANY DEFAULT (9e999)) STRICT"), "JSON cannot carry"),
            (
                config("CREATE TABLE t(id PRIMARY KEY, b)", extra: #", "renamed_columns": {"c": "a"}"#),
                "renamed_columns"
            ),
            (
                config("CREATE TABLE t(id PRIMARY KEY, b)", extra: #", "renamed_columns": {"b": "id"}"#),
                "renamed_columns"
            ),
            (config("CREATE TABLE t(id PRIMARY KEY)", extra: #", "renamed_from": "T""#), "renamed_from"),
            (config("CREATE TABLE t(id PRIMARY KEY)", extra: #", "renamed_from": 3"#), "renamed_from"),
        ]
        for (json, reason) in cases {
            let message = refusal(json)
            #expect(message?.contains(reason) == true, "\(json): \(message ?? "accepted")")
        }
        // What the server can enforce is accepted: NOCASE and RTRIM in UNIQUE, finite defaults.
        #expect(
            refusal(
                config(
                    "CREATE TABLE t(id INTEGER PRIMARY KEY, e TEXT COLLATE NOCASE UNIQUE, r REAL DEFAULT 1e308); "
                        + "CREATE UNIQUE INDEX t_r ON t(r, e COLLATE RTRIM)")) == nil)
    }

    @Test func tokensAreComparedWholeWhateverTheirLength() {
        let same = SyncServerConfiguration.constantTimeEqualForTesting
        #expect(same("t-alice", "t-alice"))
        #expect(!same("t-alice", "t-alicf"))
        #expect(!same("t-alice", "t-alice "))
        #expect(!same("", "x"))
        #expect(same("", ""))
        // Lengths 256 apart must not compare equal through a truncated length difference.
        #expect(!same("a", "a" + String(repeating: "\u{0}", count: 256)))
    }

    @Test func aTokenNoHTTPHeaderCouldCarryIsRefusedWithoutShowingIt() {
        func config(_ token: String) -> String {
            var writer = JSONWriter()
            writer.string(token)
            return #"{"tables": [], "tokens": [{"token": "t-bob", "account": "bob"}, "#
                + #"{"token": \#(writer.string), "account": "alice"}]}"#
        }
        let long = String(repeating: "k", count: SyncServerConfiguration.maximumTokenLength + 1)
        for token in [long, "t-alice\u{0}", "t-\u{1b}alice", "t-alice\n", " t-alice", "t-alice\t", "t\u{7f}"] {
            let message = refusal(config(token))
            #expect(message?.contains(#"the token of account "alice""#) == true, "\(token.prefix(20).debugDescription)")
            #expect(message?.contains(token) == false, "the message must not show the token")
        }
        #expect(refusal(config(long))?.contains("\(long.utf8.count) bytes long") == true)
        #expect(refusal(config("t-al ice é")) == nil, "inner spaces and non-ASCII are fine")
    }

    @Test func theLongestTokenAllowedIsUsableOverHTTP() async throws {
        let token = String(repeating: "k", count: SyncServerConfiguration.maximumTokenLength)
        let configuration = try SyncServerConfiguration(
            tables: try SyncFixtures.configuration().tables, tokens: [token: "alice"])
        var options = SyncServerOptions()
        options.port = 0
        let store = try SQLiteSyncStore()
        let server = try SyncServer(configuration: configuration, store: store, options: options)
        defer {
            server.stop()
            try? store.close()
        }
        let answer = try await SyncHTTPClient(baseURL: server.url, token: token).post(
            "/v1/check-update", #"{"tables": []}"#)
        #expect(answer.status == 200)
        #expect(answer["account"] == .string("alice"))
    }

    @Test func aRestartWithANewStructVersionKeepsTheRowsAndValidatesAgainstTheNewSchema() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("server.sqlite")
        var options = SyncServerOptions()
        options.port = 0

        let oldStore = try SQLiteSyncStore(path: path)
        let old = try SyncServer(configuration: try SyncFixtures.configuration(), store: oldStore, options: options)
        let before = try await SyncHTTPClient(baseURL: old.url, token: "t-alice").postData(
            client: "d", [upsert(1, "note", #"{"id": "a", "title": "kept"}"#)])
        #expect(before.status == 200)
        old.stop()
        try oldStore.close()

        // The note table gains a column and its struct_version goes from 1 to 2 (note is listed first).
        var changed = SyncFixtures.configurationJSON.replacingOccurrences(
            of: "body TEXT)", with: "body TEXT, stars INTEGER NOT NULL DEFAULT 0)")
        changed.replaceSubrange(
            changed.range(of: #""struct_version": 1"#)!, with: #""struct_version": 2"#)
        #expect(changed != SyncFixtures.configurationJSON)
        let newStore = try SQLiteSyncStore(path: path)
        let new = try SyncServer(
            configuration: try SyncServerConfiguration(json: Data(changed.utf8)), store: newStore, options: options)
        defer {
            new.stop()
            try? newStore.close()
        }
        let client = SyncHTTPClient(baseURL: new.url, token: "t-alice")
        let check = try await client.post(
            "/v1/check-update", #"{"tables": [{"table": "note", "struct_version": 1, "version": 1}]}"#)
        #expect(check["tables"]?[0]?["struct_version"] == .integer(2))
        #expect(check["tables"]?[0]?["schema_changed"] == .bool(true))
        #expect(check["tables"]?[0]?["data_changed"] == .bool(false))
        let schema = try await client.post("/v1/fetch-schema", #"{"table": "note"}"#)
        #expect(schema["schema"]?.stringValue?.contains("stars INTEGER") == true)
        #expect(try await client.fetchAll("note").changes.map { $0["row"]?["title"] } == [.string("kept")])
        let posted = try await client.postData(
            client: "d",
            [
                upsert(2, "note", #"{"id": "b", "title": "new", "stars": 5}"#),
                upsert(3, "note", #"{"id": "c", "title": "x", "stars": "many"}"#),
            ])
        #expect(posted["results"]?.arrayValue?.map { $0["status"] } == [.string("applied"), .string("rejected")])
    }
}
