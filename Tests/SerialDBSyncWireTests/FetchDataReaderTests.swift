import Foundation
import Testing

@testable import SerialDBSyncWire

/// The direct reader of fetch-data answers (`FetchDataResponse(fetchDataBytes:)`) against the
/// general one (a `JSONValue` tree, then `FetchDataResponse(json:)`): the same answer for every
/// text, every value and affinity rule included, and the general reader's error for text the
/// direct one leaves to it.
@Suite("The direct reader of fetch-data answers")
struct FetchDataReaderTests {
    private func general(_ text: String) throws -> FetchDataResponse {
        try FetchDataResponse(jsonBytes: Array(text.utf8))
    }

    @Test("a page as the server writes it, every kind of value, reads as the general reader reads it")
    func serverPageReadsTheSame() throws {
        let row: [String: SyncValue] = [
            "id": .text("ключ 'a' \"b\" \\ \n\t\u{1}\u{0}z 🎈"), "n": .integer(.min), "m": .integer(.max),
            "r": .real(0.1), "whole": .real(2.0), "negative": .real(-1.5e-300), "tiny": .real(.leastNonzeroMagnitude),
            "blob": .blob(Data([0, 255, 1])), "empty": .blob(Data()), "nothing": .null, "zero": .integer(0),
        ]
        let page = FetchDataResponse(
            table: "nöte \u{0}x",
            changes: [
                SyncChange(version: 7, deleted: false, row: row),
                SyncChange(version: 8, deleted: true, row: ["id": .integer(3)]),
                SyncChange(version: 9, deleted: false, row: [:]),
            ], version: 9, hasMore: true, resync: false, floor: 4)
        let bytes = try page.jsonBytes()
        let direct = try #require(FetchDataResponse.readDirectly(bytes))
        #expect(direct == page)
        #expect(direct == (try FetchDataResponse(jsonBytes: bytes)))
        try expectSkimmedTheSame(bytes)
        // The reals stay reals and the integers integers, whatever their digits.
        #expect(direct.changes[0].row["whole"] == .real(2.0))
        #expect(direct.changes[0].row["m"] == .integer(.max))
    }

    @Test("rows that widen and narrow within a page are each read whole")
    func rowsOfChangingWidthsReadWhole() throws {
        // Each row's dictionary is sized by the row before it: a wider row must still grow.
        let widths = [1, 6, 0, 3, 40, 2]
        let changes = widths.enumerated().map { index, width in
            SyncChange(
                version: Int64(index + 1), deleted: false,
                row: Dictionary(
                    uniqueKeysWithValues: (0..<width).map { ("c\($0) é", SyncValue.text("v\(index)-\($0)")) }))
        }
        let page = FetchDataResponse(
            table: "t", changes: changes, version: Int64(widths.count), hasMore: false, resync: false, floor: 0)
        let bytes = try page.jsonBytes()
        let direct = try #require(FetchDataResponse.readDirectly(bytes))
        #expect(direct.changes.map(\.row.count) == widths)
        #expect(direct == page)
        try expectSkimmedTheSame(bytes)
    }

    @Test(
        "hand-written answers read as the general reader reads them",
        arguments: [
            // Whitespace everywhere, members in another order, an escaped member name, no floor.
            #" { "version" : 3 , "t\u0061ble" : "note" , "resync" : false , "has_more" : false , "changes" : [ { "row" : { "id" : 1 } , "deleted" : false , "version" : 3 } ] } "#,
            // A null floor, booleans as 0 and 1, an integer past 64 bits and exponents as reals, -0.
            #"{"table":"t","changes":[{"version":1,"deleted":false,"row":{"yes":true,"no":false,"big":18446744073709551616,"e":1e2,"E":-2E-3,"minus":-0,"f":1.0}}],"version":1,"has_more":false,"resync":false,"floor":null}"#,
            // Escapes in text: NUL, a surrogate pair, a solidus, control characters.
            #"{"table":"t","changes":[{"version":1,"deleted":false,"row":{"id":"a\u0000b\ud83c\udf88\/\b\f\n\r\t\"\\"}}],"version":1,"has_more":false,"resync":false,"floor":0}"#,
            // A column named twice keeps its last value, as a JSON object does.
            #"{"table":"t","changes":[{"version":1,"deleted":false,"row":{"id":1,"id":"two"}}],"version":1,"has_more":false,"resync":false,"floor":0}"#,
            // No changes, a resync.
            #"{"table":"t","changes":[],"version":0,"has_more":false,"resync":true,"floor":12}"#,
        ])
    func handWrittenAnswersReadTheSame(text: String) throws {
        let direct = try #require(FetchDataResponse.readDirectly(Array(text.utf8)))
        #expect(direct == (try general(text)))
        try expectSkimmedTheSame(Array(text.utf8))
    }

    @Test(
        "rows whose column names move, repeat, differ by a byte or are escaped read as the general reader reads them",
        arguments: [
            // Swapped, a prefix of the name before, one more and one fewer column.
            #"{"table":"t","changes":[{"version":1,"deleted":false,"row":{"a":1,"b":2}},{"version":2,"deleted":false,"row":{"b":3,"a":4}},{"version":3,"deleted":false,"row":{"a":5,"bb":6,"c":7}},{"version":4,"deleted":false,"row":{"a":8}}],"version":4,"has_more":false,"resync":false,"floor":0}"#,
            // An escaped name, then the same name plainly, then a name with a quote and a
            // backslash twice (never reused from its bytes), then the name it unescapes to.
            #"{"table":"t","changes":[{"version":1,"deleted":false,"row":{"\u0061":1}},{"version":2,"deleted":false,"row":{"a":2}},{"version":3,"deleted":false,"row":{"a\"\\b":3}},{"version":4,"deleted":false,"row":{"a\"\\b":4}},{"version":5,"deleted":false,"row":{"a\b":5}}],"version":5,"has_more":false,"resync":false,"floor":0}"#,
            // A column named twice, then once.
            #"{"table":"t","changes":[{"version":1,"deleted":false,"row":{"a":1,"a":2}},{"version":2,"deleted":false,"row":{"a":3}}],"version":2,"has_more":false,"resync":false,"floor":0}"#,
        ])
    func columnNamesReadTheSame(text: String) throws {
        let direct = try #require(FetchDataResponse.readDirectly(Array(text.utf8)))
        #expect(direct == (try general(text)))
        try expectSkimmedTheSame(Array(text.utf8))
    }

    @Test("a change whose member names are escaped is read by the general reader, the same answer")
    func escapedChangeMembersGoToTheGeneralReader() throws {
        let text =
            #"{"table":"t","changes":[{"\u0076ersion":1,"deleted":false,"row":{"id":1}}],"version":1,"has_more":false,"resync":false,"floor":0}"#
        #expect(FetchDataResponse.readDirectly(Array(text.utf8)) == nil)
        #expect(try FetchDataResponse(fetchDataBytes: Array(text.utf8)) == (try general(text)))
    }

    /// The header read first and the changes after, as a client reads a page: the same answer,
    /// and the changes found exactly where their array lies.
    private func expectSkimmedTheSame(_ bytes: [UInt8]) throws {
        let expected = try FetchDataResponse(jsonBytes: bytes)
        let (header, range) = try #require(FetchDataResponse.readSkippingChanges(bytes))
        #expect(header.changes.isEmpty)
        var page = header
        page.changes = try FetchDataResponse.readChanges(bytes, in: range).changes
        #expect(page == expected)
        #expect(try JSONValue.parse(bytes[range]).arrayValue?.count == expected.changes.count)
    }

    @Test("the changes are skipped past brackets and quotes inside strings")
    func skimmingSkipsStrings() throws {
        let page = FetchDataResponse(
            table: "t",
            changes: [
                SyncChange(version: 1, deleted: false, row: ["id": .text(#"]}"\\"\"[{"#), "n": .integer(1)]),
                SyncChange(version: 2, deleted: false, row: ["id": .text("\\"), "b": .blob(Data([93, 34]))]),
            ], version: 2, hasMore: false, resync: false, floor: 0)
        try expectSkimmedTheSame(try page.jsonBytes())
    }

    @Test(
        "text the direct reader does not expect is read by the general reader, answer or error",
        arguments: [
            // Read by the general reader: a member it does not know, a member given twice.
            #"{"table":"t","changes":[],"version":1,"has_more":false,"resync":false,"extra":[1,{"a":null}]}"#,
            #"{"table":"t","changes":[{"version":1,"deleted":false,"row":{"id":1}}],"changes":[],"version":1,"has_more":false,"resync":false}"#,
            #"{"table":"t","changes":[{"version":1,"deleted":false,"row":{"b":{"base64":"AA==","base64":"AP8="}}}],"version":1,"has_more":false,"resync":false}"#,
            // Refused by the general reader, which says why.
            #"{"table":"t","changes":[{"version":1,"deleted":false,"row":{"id":[1]}}],"version":1,"has_more":false,"resync":false}"#,
            #"{"table":"t","changes":[{"version":1,"deleted":false,"row":{"b":{"base64":"%%"}}}],"version":1,"has_more":false,"resync":false}"#,
            #"{"table":"t","changes":[{"version":1.0,"deleted":false,"row":{}}],"version":1,"has_more":false,"resync":false}"#,
            #"{"table":"t","changes":[],"version":18446744073709551616,"has_more":false,"resync":false}"#,
            #"{"table":"t","changes":[],"version":1,"has_more":false}"#,
            #"{"table":"t","changes":[],"version":1,"has_more":false,"resync":false,"floor":"0"}"#,
            #"{"table":"t","changes":[],"version":1,"has_more":false,"resync":false} x"#,
            #"{"table":"t","changes":[{"version":1,"deleted":false,"row":{"id":tru}}],"version":1,"has_more":false,"resync":false}"#,
            #"{"table":"t","changes":[{"version":1,"deleted":false,"row":{"id":1}"#,
            #"["not", "an", "object"]"#,
            "",
        ])
    func unexpectedTextGoesToTheGeneralReader(text: String) throws {
        #expect(FetchDataResponse.readDirectly(Array(text.utf8)) == nil)
        let read = Result { try FetchDataResponse(fetchDataBytes: Array(text.utf8)) }
        let generally = Result { try general(text) }
        switch (read, generally) {
        case (.success(let page), .success(let expected)):
            #expect(page == expected)
        case (.failure(let error), .failure(let expected)):
            #expect(String(describing: error) == String(describing: expected))
        default:
            Issue.record("the direct reader gave \(read), the general one \(generally)")
        }
    }

    @Test("text that is not UTF-8 is refused as the general reader refuses it")
    func invalidUTF8IsRefused() throws {
        var bytes = Array(#"{"table":"t","changes":[{"version":1,"deleted":false,"row":{"id":"x"#.utf8)
        bytes += [0xC3, 0x28]
        bytes += Array(#""}}],"version":1,"has_more":false,"resync":false}"#.utf8)
        #expect(FetchDataResponse.readDirectly(bytes) == nil)
        let error = #expect(throws: JSONParseError.self) { _ = try FetchDataResponse(fetchDataBytes: bytes) }
        #expect(error?.message.contains("UTF-8") == true)
    }
}
