import Foundation
import SerialDBSyncWire
import Testing

/// The protocol's example texts (the article's), read and written member by member: the field
/// names are checked against literal text here, not against the module's own spelling, so a
/// name misspelled in both the writer and the reader fails.
@Suite("The protocol's examples, literally")
struct WireExampleTests {
    private func json(_ text: String) throws -> JSONValue { try JSONValue.parse(Array(text.utf8)) }

    private func written(_ message: some WireCodable) throws -> JSONValue {
        try JSONValue.parse(try message.jsonBytes())
    }

    @Test("check-update")
    func checkUpdate() throws {
        let request = #"{"tables": [{"table": "note", "struct_version": 1, "version": 40}]}"#
        let decoded = try CheckUpdateRequest(json: try json(request))
        #expect(decoded == CheckUpdateRequest(tables: [.init(table: "note", structVersion: 1, version: 40)]))
        #expect(try written(decoded) == (try json(request)))
        let answer = #"""
            {"account": "alice", "tables": [{"table": "note", "scope": "account", "owner": "alice",
             "struct_version": 2, "version": 57, "schema_changed": true, "data_changed": true, "floor": 0}]}
            """#
        let response = try CheckUpdateResponse(json: try json(answer))
        #expect(
            response
                == CheckUpdateResponse(
                    account: "alice",
                    tables: [
                        .init(
                            table: "note", scope: "account", owner: "alice", structVersion: 2, version: 57,
                            schemaChanged: true, dataChanged: true, floor: 0)
                    ]))
        #expect(try written(response) == (try json(answer)))
    }

    @Test("fetch-schema")
    func fetchSchema() throws {
        let request = #"{"table": "note"}"#
        #expect(try FetchSchemaRequest(json: try json(request)) == FetchSchemaRequest(table: "note"))
        #expect(try written(FetchSchemaRequest(table: "note")) == (try json(request)))
        let answer = #"""
            {"table": "memo", "struct_version": 2, "schema": "CREATE TABLE memo(id TEXT PRIMARY KEY, heading TEXT)",
             "renamed_from": "note", "renamed_columns": {"heading": "title"}}
            """#
        let response = FetchSchemaResponse(
            table: "memo", structVersion: 2, schema: "CREATE TABLE memo(id TEXT PRIMARY KEY, heading TEXT)",
            renamedFrom: "note", renamedColumns: ["heading": "title"])
        #expect(try FetchSchemaResponse(json: try json(answer)) == response)
        #expect(try written(response) == (try json(answer)))
    }

    @Test("fetch-data, a resync's page included")
    func fetchData() throws {
        let request = #"{"table": "note", "since": 5000, "limit": 5000, "resyncing": true}"#
        let decoded = FetchDataRequest(table: "note", since: 5000, limit: 5000, resyncing: true)
        #expect(try FetchDataRequest(json: try json(request)) == decoded)
        #expect(try written(decoded) == (try json(request)))
        #expect(
            try FetchDataRequest(json: try json(#"{"table": "note", "since": 40}"#))
                == FetchDataRequest(table: "note", since: 40, limit: SyncLimits.defaultPageSize))
        let answer = #"""
            {"table": "note", "changes": [
               {"version": 41, "deleted": false, "row": {"id": "a1", "title": "x", "body": null, "data": {"base64": "AP8="}}},
               {"version": 44, "deleted": true, "row": {"id": "b7"}}],
             "version": 44, "has_more": false, "resync": false, "floor": 0}
            """#
        let response = FetchDataResponse(
            table: "note",
            changes: [
                SyncChange(
                    version: 41, deleted: false,
                    row: ["id": .text("a1"), "title": .text("x"), "body": .null, "data": .blob(Data([0, 255]))]),
                SyncChange(version: 44, deleted: true, row: ["id": .text("b7")]),
            ], version: 44, hasMore: false, resync: false, floor: 0)
        #expect(try FetchDataResponse(json: try json(answer)) == response)
        #expect(try written(response) == (try json(answer)))
    }

    @Test("post-data, every status")
    func postData() throws {
        let request = #"""
            {"client_id": "device-uuid", "mutations": [
               {"seq": 1, "table": "note", "op": "upsert", "row": {"id": "a1", "title": "x"}, "base_version": 0},
               {"seq": 2, "table": "note", "op": "delete", "key": {"id": "b7"}, "base_version": 44}]}
            """#
        let decoded = PostDataRequest(
            clientID: "device-uuid",
            mutations: [
                SyncMutation(
                    seq: 1, table: "note", op: .upsert, row: ["id": .text("a1"), "title": .text("x")], key: nil,
                    baseVersion: 0),
                SyncMutation(seq: 2, table: "note", op: .delete, row: nil, key: ["id": .text("b7")], baseVersion: 44),
            ])
        #expect(try PostDataRequest(json: try json(request)) == decoded)
        #expect(try written(decoded) == (try json(request)))
        let answer = #"""
            {"results": [{"seq": 1, "status": "applied", "version": 58},
               {"seq": 2, "status": "conflict", "current": {"version": 50, "deleted": false, "row": {"id": "b7"}}},
               {"seq": 3, "status": "rejected", "error": "column \"title\" is NOT NULL"},
               {"seq": 4, "status": "duplicate"}]}
            """#
        let response = PostDataResponse(results: [
            SyncMutationResult(seq: 1, status: .applied, version: 58),
            SyncMutationResult(
                seq: 2, status: .conflict,
                current: SyncCurrentRow(version: 50, deleted: false, row: ["id": .text("b7")])),
            SyncMutationResult(seq: 3, status: .rejected, error: "column \"title\" is NOT NULL"),
            SyncMutationResult(seq: 4, status: .duplicate),
        ])
        #expect(try PostDataResponse(json: try json(answer)) == response)
        #expect(try written(response) == (try json(answer)))
    }

    @Test("the error body")
    func errorBody() throws {
        let text = #"{"error": {"code": "payload_too_large", "message": "the body is larger than 4194304 bytes"}}"#
        let body = SyncErrorBody(code: "payload_too_large", message: "the body is larger than 4194304 bytes")
        #expect(try SyncErrorBody(json: try json(text)) == body)
        #expect(try written(body) == (try json(text)))
    }

    @Test("the calls' paths and the limits")
    func pathsAndLimits() {
        #expect(
            SyncCall.allCases.map(\.path) == [
                "/v1/check-update", "/v1/fetch-schema", "/v1/fetch-data", "/v1/post-data",
            ])
        #expect(SyncLimits.defaultPageSize == 500)
        #expect(SyncLimits.maximumPageSize == 5000)
        #expect(SyncLimits.maximumPageBytes == 4 * 1024 * 1024)
        #expect(SyncLimits.defaultBodyLimit == 4 * 1024 * 1024)
    }
}
