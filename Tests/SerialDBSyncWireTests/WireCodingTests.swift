import Foundation
import SerialDBSyncWire
import Testing

/// The client's messages through the protocol's own JSON writer and parser: the wire encoding of
/// every value type, mutations kept by earlier releases (JSONEncoder) still readable, and answers
/// of the wrong shape refused with the field named.
@Suite("Wire coding of the client's messages")
struct WireCodingTests {
    private let everyValue: [String: SyncValue] = [
        "id": .text("ключ 'a' \"b\" \\ \n\t\u{1}"), "n": .integer(.min), "m": .integer(.max), "r": .real(0.1),
        "whole": .real(2.0), "tiny": .real(.leastNonzeroMagnitude), "blob": .blob(Data([0, 255, 1])),
        "empty": .blob(Data()),
        "nothing": .null,
    ]

    private func written(_ write: (inout JSONWriter) throws -> Void) throws -> JSONValue {
        var writer = JSONWriter()
        try write(&writer)
        return try JSONValue.parse(writer.bytes)
    }

    @Test("a mutation written and read back is the same mutation, every value type included")
    func mutationRoundTrips() throws {
        let upsert = SyncMutation(seq: 7, table: "nöte", op: .upsert, row: everyValue, key: nil, baseVersion: 44)
        let delete = SyncMutation(
            seq: 8, table: "note", op: .delete, row: nil, key: ["id": .text("a1")], baseVersion: 45)
        for mutation in [upsert, delete] {
            let json = try written { try mutation.write(to: &$0) }
            #expect(try SyncMutation(json: json, context: "test") == mutation)
        }
    }

    @Test("an integral REAL stays a number on the wire, an INTEGER stays an integer")
    func realsAndIntegersStayApart() throws {
        let json = try written { try SyncValue.write(row: ["r": .real(2), "i": .integer(2)], to: &$0) }
        #expect(json.objectValue?["r"] == .number(2))
        #expect(json.objectValue?["i"] == .integer(2))
    }

    @Test("a mutation an earlier release kept in the outbox with JSONEncoder is read the same")
    func mutationsOfJSONEncoderAreRead() throws {
        let mutation = SyncMutation(seq: 3, table: "note", op: .upsert, row: everyValue, key: nil, baseVersion: 0)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let stored = try encoder.encode(mutation)
        // JSONEncoder wrote an integral double without its fraction, so it always read back as an
        // integer (the server converts it by the column's affinity); everything else is the same.
        var expected = mutation
        expected.row?["whole"] = .integer(2)
        #expect(try SyncMutation(json: try JSONValue.parse(stored), context: "test") == expected)
    }

    @Test("an infinite REAL cannot go on the wire and says so")
    func infinityIsRefused() throws {
        let mutation = SyncMutation(
            seq: 1, table: "note", op: .upsert, row: ["x": .real(.infinity)], key: nil, baseVersion: 0)
        let error = #expect(throws: NonFiniteValueError.self) { _ = try written { try mutation.write(to: &$0) } }
        #expect(error?.description.contains("finite") == true)
    }

    @Test("a fetch-data answer reads booleans as 0 and 1 and blobs from base64")
    func fetchDataAnswerIsRead() throws {
        let text = #"""
            {"table": "note", "version": 9, "has_more": true, "resync": false, "changes": [
              {"version": 9, "deleted": false, "row": {"id": "a", "flag": true, "data": {"base64": "AP8="}, "n": 1.5}}]}
            """#
        let page = try FetchDataResponse(json: try JSONValue.parse(Array(text.utf8)))
        #expect(page.version == 9)
        #expect(page.hasMore)
        #expect(
            page.changes.first?.row == [
                "id": .text("a"), "flag": .integer(1), "data": .blob(Data([0, 255])), "n": .real(1.5),
            ])
    }

    @Test(
        "answers of the wrong shape are refused, naming the field",
        arguments: [
            (#"{"table": "note", "changes": [], "version": "9", "has_more": false, "resync": false}"#, "\"version\""),
            (
                #"{"table": "note", "changes": [{"version": 1, "deleted": false}], "version": 1, "has_more": false, "resync": false}"#,
                "\"row\""
            ),
            (
                #"{"table": "note", "changes": [{"version": 1, "deleted": false, "row": {"b": {"base64": "%%"}}}], "version": 1, "has_more": false, "resync": false}"#,
                "\"b\""
            ),
            (#"{"table": "note", "changes": [], "version": 1, "has_more": false}"#, "\"resync\""),
            (#"["not", "an", "object"]"#, "must be a JSON object"),
        ])
    func wrongShapesAreRefused(text: String, named field: String) throws {
        let error = #expect(throws: WireFormatError.self) {
            _ = try FetchDataResponse(json: try JSONValue.parse(Array(text.utf8)))
        }
        #expect(error?.message.contains(field) == true, "\(error?.message ?? "no error")")
    }

    @Test("a post-data answer reads \"duplicate\", a seq answered before whose result expired")
    func duplicateStatusIsRead() throws {
        let text = #"{"results": [{"seq": 3, "status": "duplicate"}, {"seq": 4, "status": "applied", "version": 9}]}"#
        let response = try PostDataResponse(json: try JSONValue.parse(Array(text.utf8)))
        #expect(
            response.results == [
                SyncMutationResult(seq: 3, status: .duplicate),
                SyncMutationResult(seq: 4, status: .applied, version: 9),
            ])
    }

    @Test("a post-data answer with an unknown status is refused")
    func unknownStatusIsRefused() throws {
        let text = #"{"results": [{"seq": 1, "status": "maybe"}]}"#
        let error = #expect(throws: WireFormatError.self) {
            _ = try PostDataResponse(json: try JSONValue.parse(Array(text.utf8)))
        }
        #expect(error?.message.contains("maybe") == true)
    }
}
