import Foundation
import SerialDBSyncServer
import SerialDBSyncWire
import Testing

/// The request parser keeps integers and fractions apart and refuses what is not JSON.
@Suite struct JSONValueTests {
    private func parse(_ text: String) throws -> JSONValue {
        try JSONValue.parse(Array(text.utf8))
    }

    @Test func integersFractionsAndBooleansStayApart() throws {
        #expect(try parse("1") == .integer(1))
        #expect(try parse("-0") == .integer(0))
        #expect(try parse("1.0") == .number(1.0))
        #expect(try parse("1e2") == .number(100))
        #expect(try parse("9223372036854775807") == .integer(.max))
        #expect(try parse("-9223372036854775808") == .integer(.min))
        #expect(try parse("9223372036854775808") == .number(9_223_372_036_854_775_808))
        #expect(try parse("true") == .bool(true))
        #expect(try parse(" [1, \"a\", null, {}] ") == .array([.integer(1), .string("a"), .null, .object([:])]))
    }

    @Test func escapesAndUnicodeAreDecoded() throws {
        #expect(try parse(#""a\"b\\c\/d\b\f\n\r\t""#) == .string("a\"b\\c/d\u{8}\u{c}\n\r\t"))
        #expect(try parse(#""\u00e9\ud83c\udf89""#) == .string("é🎉"))
        #expect(try parse("\"é🎉\"") == .string("é🎉"))
    }

    @Test func textThatIsNotJSONIsRefused() {
        let bad = [
            "", " ", "{", "[1,]", "{\"a\" 1}", "{\"a\":1,}", "01", "1.", ".5", "-", "1e", "+1", "tru", "nul",
            "\"abc", "\"\\x\"", "\"\\ud800\"", "\"\\u12\"", "\"a\nb\"", "1 2", "{a: 1}", "'a'", "NaN", "1e999",
            String(repeating: "[", count: 65) + String(repeating: "]", count: 65),
        ]
        for text in bad {
            #expect(throws: JSONParseError.self, "\(text.prefix(20))") { try parse(text) }
        }
        #expect(throws: JSONParseError.self) {
            try JSONValue.parse([UInt8(ascii: "\""), 0xC3, 0x28, UInt8(ascii: "\"")])
        }
        #expect(
            (try? parse(String(repeating: "[", count: 64) + String(repeating: "]", count: 64))) != nil,
            "64 levels are allowed")
    }
}
