import Foundation
import SerialDBSyncWire
import Testing

/// Every message of the protocol, both ways: written by the module and read back by it
/// (the values odd on purpose), through `Codable` too, and against the protocol's own
/// example texts, so that a field the writer and the reader misspelled alike is still caught.
@Suite("Wire round trips of every message")
struct WireRoundTripTests {
    /// Values that break naive codecs: NUL bytes, non-ASCII, the extreme integers, negative
    /// zero, the smallest double, empty and full-range BLOBs, escapes.
    static let oddRow: [String: SyncValue] = [
        "id": .text("a\u{0}b"), "näme": .text("ключ 🙂 e\u{301} \"q\" \\ \n\t\u{1F}\u{7F}"),
        "min": .integer(.min), "max": .integer(.max), "zero": .integer(0), "negzero": .real(-0.0),
        "tiny": .real(.leastNonzeroMagnitude), "big": .real(.greatestFiniteMagnitude), "whole": .real(2),
        "empty": .blob(Data()), "bytes": .blob(Data((0...255).map { UInt8($0) })), "text": .text(""),
        "nothing": .null, "": .text("empty column name"),
    ]

    private func roundTrip<Message: WireCodable & Equatable>(_ message: Message) throws -> Message {
        try Message(jsonBytes: try message.jsonBytes())
    }

    /// Negative zero equals zero for `==`; the sign must survive too.
    private func expectSameBits(_ row: [String: SyncValue]?, _ expected: [String: SyncValue]) {
        #expect(row == expected)
        if case .real(let value)? = row?["negzero"] { #expect(value.sign == .minus, "-0.0 lost its sign") }
    }

    @Test("check-update: request and answer, empty lists and odd names included")
    func checkUpdate() throws {
        for request in [
            CheckUpdateRequest(tables: []),
            CheckUpdateRequest(tables: [
                .init(table: "nöte\u{0}x", structVersion: .max, version: 0),
                .init(table: "", structVersion: 1, version: 7),
            ]),
        ] {
            #expect(try roundTrip(request) == request)
        }
        for response in [
            CheckUpdateResponse(account: "", tables: []),
            CheckUpdateResponse(
                account: "alice 🙂",
                tables: [
                    .init(
                        table: "note", scope: "account", owner: "alice 🙂", structVersion: 2, version: .max,
                        schemaChanged: true, dataChanged: false, floor: 40),
                    .init(
                        table: "country", scope: "global", owner: "", structVersion: 1, version: 0,
                        schemaChanged: false,
                        dataChanged: true),
                ]),
        ] {
            #expect(try roundTrip(response) == response)
        }
    }

    @Test("fetch-schema: request and answer, with and without renames")
    func fetchSchema() throws {
        for request in [FetchSchemaRequest(table: "note"), FetchSchemaRequest(table: "ü\u{0}")] {
            #expect(try roundTrip(request) == request)
        }
        for response in [
            FetchSchemaResponse(table: "note", structVersion: 1, schema: "CREATE TABLE note(id TEXT PRIMARY KEY)"),
            FetchSchemaResponse(
                table: "memo", structVersion: 3,
                schema: "CREATE TABLE memo(\"ключ\" PRIMARY KEY);\nCREATE INDEX i ON memo(1)",
                renamedFrom: "note", renamedColumns: ["heading": "title", "b": "a\u{0}"]),
        ] {
            #expect(try roundTrip(response) == response)
        }
    }

    @Test("fetch-data: request and answer, odd rows, tombstones and an empty page")
    func fetchData() throws {
        for request in [
            FetchDataRequest(table: "note", since: 0, limit: 1),
            FetchDataRequest(table: "note", since: .max, limit: 5000, resyncing: true),
        ] {
            #expect(try roundTrip(request) == request)
        }
        let empty = FetchDataResponse(table: "note", changes: [], version: 0, hasMore: false, resync: true, floor: 9)
        #expect(try roundTrip(empty) == empty)
        let page = FetchDataResponse(
            table: "note",
            changes: [
                SyncChange(version: 41, deleted: false, row: Self.oddRow),
                SyncChange(version: .max, deleted: true, row: ["id": .blob(Data([0]))]),
                SyncChange(version: 43, deleted: false, row: [:]),
            ], version: .max, hasMore: true, resync: false, floor: 0)
        let read = try roundTrip(page)
        #expect(read == page)
        expectSameBits(read.changes.first?.row, Self.oddRow)
    }

    @Test("post-data: request and answer, every status, an empty upload and an empty answer")
    func postData() throws {
        let request = PostDataRequest(
            clientID: "device-ü",
            mutations: [
                SyncMutation(seq: 1, table: "note", op: .upsert, row: Self.oddRow, key: nil, baseVersion: 0),
                SyncMutation(
                    seq: .max, table: "note", op: .delete, row: nil, key: ["id": .text("\u{0}")], baseVersion: 44),
            ])
        let read = try roundTrip(request)
        #expect(read == request)
        expectSameBits(read.mutations.first?.row, Self.oddRow)
        let none = PostDataRequest(clientID: "d", mutations: [])
        #expect(try roundTrip(none) == none)
        let response = PostDataResponse(results: [
            SyncMutationResult(seq: 1, status: .applied, version: 58),
            SyncMutationResult(
                seq: 2, status: .conflict, current: SyncCurrentRow(version: 50, deleted: false, row: Self.oddRow)),
            SyncMutationResult(seq: 3, status: .conflict, current: SyncCurrentRow(version: 0, deleted: true, row: nil)),
            SyncMutationResult(seq: 4, status: .rejected, error: "column \"title\" is NOT NULL\u{0} ü"),
            SyncMutationResult(seq: 5, status: .duplicate),
        ])
        #expect(try roundTrip(response) == response)
        #expect(try roundTrip(PostDataResponse(results: [])) == PostDataResponse(results: []))
    }

    @Test("a server's outcomes are written as the results a client reads")
    func outcomesAreResults() throws {
        var writer = JSONWriter()
        PostDataResponse.write(
            seqs: [1, 2, 3, 4],
            outcomes: [
                .applied(version: 9),
                .conflict(current: SyncEncodedChange(version: 5, deleted: false, rowJSON: #"{"id":"a"}"#)),
                .rejected(message: "no"), .duplicate,
            ], to: &writer)
        #expect(
            try PostDataResponse(jsonBytes: writer.bytes).results == [
                SyncMutationResult(seq: 1, status: .applied, version: 9),
                SyncMutationResult(
                    seq: 2, status: .conflict,
                    current: SyncCurrentRow(version: 5, deleted: false, row: ["id": .text("a")])),
                SyncMutationResult(seq: 3, status: .rejected, error: "no"),
                SyncMutationResult(seq: 4, status: .duplicate),
            ])
    }

    @Test("Codable goes through the wire form: JSONEncoder's text is the protocol's and reads back")
    func codableIsTheWireForm() throws {
        // JSONEncoder writes an integral double without its fraction, so only other values
        // come back exactly that way.
        let row: [String: SyncValue] = [
            "id": .text("a\u{0}ü"), "n": .integer(.min), "r": .real(0.1), "b": .blob(Data([0, 255])),
        ]
        let request = PostDataRequest(
            clientID: "d",
            mutations: [SyncMutation(seq: 1, table: "note", op: .upsert, row: row, key: nil, baseVersion: 3)])
        let encoded = try JSONEncoder().encode(request)
        #expect(try JSONDecoder().decode(PostDataRequest.self, from: encoded) == request)
        #expect(try JSONValue.parse(encoded) == (try JSONValue.parse(try request.jsonBytes())))
        let answer = CheckUpdateResponse(
            account: "a",
            tables: [
                .init(
                    table: "t", scope: "account", owner: "a", structVersion: 1, version: 2, schemaChanged: true,
                    dataChanged: false, floor: 1)
            ])
        #expect(try JSONDecoder().decode(CheckUpdateResponse.self, from: try JSONEncoder().encode(answer)) == answer)
    }

    @Test("the error body, both ways")
    func errorBody() throws {
        let body = SyncErrorBody(code: "bad_request", message: "the request needs \"table\" (a string) ü\u{0}")
        #expect(try roundTrip(body) == body)
        #expect(
            try SyncErrorBody(jsonBytes: Array(#"{"error": {"code": "unauthorized", "message": "m"}}"#.utf8))
                == SyncErrorBody(code: "unauthorized", message: "m"))
    }

    @Test("a huge integer literal is a number, -0 an integer zero, and a non-finite REAL is refused")
    func numbersAtTheEdges() throws {
        let text = #"{"table": "t", "since": 0, "limit": 1, "x": 99999999999999999999, "y": -0, "z": -0.0}"#
        let members = try JSONValue.parse(Array(text.utf8)).objectValue
        #expect(members?["x"] == .number(1e20))
        #expect(members?["y"] == .integer(0))
        if case .number(let z)? = members?["z"] {
            #expect(z.sign == .minus)
        } else {
            Issue.record("-0.0 is not a number")
        }
        for value in [Double.infinity, -.infinity, .nan] {
            var writer = JSONWriter()
            #expect(throws: NonFiniteValueError(value: value)) { try SyncValue.real(value).write(to: &writer) }
        }
    }
}
