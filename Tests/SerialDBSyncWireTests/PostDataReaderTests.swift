import Foundation
import Testing

@testable import SerialDBSyncWire

/// The direct reader of post-data answers (`PostDataResponse(postDataBytes:)`) against the
/// general one (a `JSONValue` tree, then `PostDataResponse(json:)`): the same answer for every
/// text, and the general reader's error for text the direct one leaves to it.
@Suite("The direct reader of post-data answers")
struct PostDataReaderTests {
    /// What a reader made of a text: the answer, or its error's description.
    private enum Outcome: Equatable {
        case answer(PostDataResponse)
        case error(String)
    }

    private func outcome(_ read: () throws -> PostDataResponse) -> Outcome {
        do { return .answer(try read()) } catch { return .error(String(describing: error)) }
    }

    /// Both readers give the same answer or the same error.
    private func expectReadTheSame(_ bytes: [UInt8]) {
        let direct = outcome { try PostDataResponse(postDataBytes: bytes) }
        let general = outcome { try PostDataResponse(jsonBytes: bytes) }
        #expect(direct == general, "\(String(decoding: bytes, as: UTF8.self))")
    }

    @Test("an answer as the server writes it reads as the general reader reads it")
    func serverAnswerReadsTheSame() throws {
        let seqs: [Int64] = [1, 2, 3, .max]
        let outcomes: [SyncUploadOutcome] = [
            .applied(version: 7), .rejected(message: "ключ 'a' \"b\" \\ \n\t\u{1}\u{0}z 🎈"), .duplicate,
            .applied(version: .max),
        ]
        var writer = JSONWriter()
        PostDataResponse.write(seqs: seqs, outcomes: outcomes, to: &writer)
        let bytes = Array(writer.string.utf8)
        let direct = try #require(PostDataResponse.readDirectly(bytes))
        #expect(
            direct.results == [
                SyncMutationResult(seq: 1, status: .applied, version: 7),
                SyncMutationResult(seq: 2, status: .rejected, error: "ключ 'a' \"b\" \\ \n\t\u{1}\u{0}z 🎈"),
                SyncMutationResult(seq: 3, status: .duplicate),
                SyncMutationResult(seq: .max, status: .applied, version: .max),
            ])
        #expect(direct == (try PostDataResponse(jsonBytes: bytes)))
    }

    @Test(
        "hand-written answers of the usual shape are read directly, as the general reader reads them",
        arguments: [
            // Whitespace everywhere, members in another order.
            #" { "results" : [ { "version" : 3 , "status" : "applied" , "seq" : 1 } , {"seq":2,"status":"duplicate"} ] } "#,
            // No results.
            #"{"results":[]}"#,
            // The smallest and largest integers, negative numbers, -0.
            #"{"results":[{"seq":-9223372036854775808,"status":"applied","version":-0},{"seq":0,"status":"applied","version":9223372036854775807}]}"#,
            // A rejection's message with every escape; an applied result without a version
            // (the client then says so) and a rejection without a message.
            #"{"results":[{"seq":1,"status":"rejected","error":"a\u0000b\ud83c\udf88\/\b\f\n\r\t\"\\ é"},{"seq":2,"status":"applied"},{"seq":3,"status":"rejected"}]}"#,
            // A status with members another status has.
            #"{"results":[{"seq":1,"status":"duplicate","version":4,"error":"x"}]}"#,
        ])
    func usualAnswersReadTheSame(text: String) throws {
        let bytes = Array(text.utf8)
        let direct = try #require(PostDataResponse.readDirectly(bytes))
        #expect(direct == (try PostDataResponse(jsonBytes: bytes)))
    }

    @Test(
        "text the direct reader does not expect is read by the general reader, answer or error",
        arguments: [
            // Read by the general reader: a conflict, nulls, a member it does not know, a
            // member given twice.
            #"{"results":[{"seq":1,"status":"conflict","current":{"version":9,"deleted":false,"row":{"id":1,"n":"é"}}}]}"#,
            #"{"results":[{"seq":1,"status":"conflict","current":{"version":9,"deleted":true}}]}"#,
            #"{"results":[{"seq":1,"status":"applied","version":null,"error":null,"current":null}]}"#,
            #"{"results":[{"seq":1,"status":"applied","version":2,"extra":[1,{"a":null}]}],"more":true}"#,
            #"{"results":[{"seq":1,"status":"applied","version":2,"version":3}]}"#,
            #"{"results":[{"seq":1,"status":"applied","version":2}],"results":[]}"#,
            // Escapes or non-ASCII in a result's names or status.
            #"{"results":[{"version":3,"st\u0061tus":"applied","seq":1}]}"#,
            #"{"results":[{"seq":1,"status":"appl\u0069ed","version":3}]}"#,
            #"{"results":[{"seq":1,"status":"applied","vérsion":3}]}"#,
            #"{"results":[{"seq":1,"status":"appliéd","version":3}]}"#,
            // Refused by the general reader, which says why.
            #"{"results":[{"seq":1,"status":"conflict"}],"x":1}"#,
            #"{"results":[{"seq":1,"status":"conflict","current":{"version":9}}]}"#,
            #"{"results":[{"seq":1,"status":"lost","version":2}]}"#,
            #"{"results":[{"status":"applied","version":2}]}"#,
            #"{"results":[{"seq":1,"version":2}]}"#,
            #"{"results":[{"seq":1.0,"status":"applied","version":2}]}"#,
            #"{"results":[{"seq":1,"status":"applied","version":18446744073709551616}]}"#,
            #"{"results":[{"seq":"1","status":"applied","version":2}]}"#,
            #"{"results":[{"seq":1,"status":"rejected","error":7}]}"#,
            #"{"results":[{"seq":1,"status":"applied","version":2}]} x"#,
            #"{"results":[{"seq":1,"status":"applied","version":2}"#,
            #"{"results":{"seq":1}}"#,
            #"{"results":[1]}"#,
            #"{"answers":[]}"#,
            #"{}"#,
            #"["results"]"#,
            #"{"results":[{"seq":1,"status":"rejected","error":"bad \x escape"}]}"#,
            "",
        ])
    func unusualAnswersReadAsTheGeneralReaderDecides(text: String) {
        #expect(PostDataResponse.readDirectly(Array(text.utf8)) == nil)
        expectReadTheSame(Array(text.utf8))
    }

    @Test("text that is not UTF-8 or holds a raw control character is the general reader's to refuse")
    func invalidBytesAreRefusedAlike() {
        let prefix = Array(#"{"results":[{"seq":1,"status":"rejected","error":""#.utf8)
        let suffix = Array(#""}]}"#.utf8)
        for middle: [UInt8] in [[0xFF], [0xC3], [0x0A], [0x00], [0xED, 0xA0, 0x80]] {
            expectReadTheSame(prefix + middle + suffix)
        }
    }
}
