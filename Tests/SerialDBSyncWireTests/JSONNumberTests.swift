import Foundation
import HarnessSupport
import Testing

@testable import SerialDBSyncWire

/// Fractions and exponents read by the parser's exact shortcut (one multiplication or division
/// of exact doubles) or by `Double(String)`: the same double, bit for bit, either way.
@Suite("JSON numbers")
struct JSONNumberTests {
    private func parsed(_ literal: String) throws -> Double? {
        guard case .number(let double) = try JSONValue.parse(Array(literal.utf8)) else { return nil }
        return double
    }

    @Test(
        "edge literals read as Double(String) reads them",
        arguments: [
            "0.5", "19.99", "-0.0", "0.0", "-0.000", "0e0", "0e500", "0.1", "1e22", "1e23", "-1e-22", "1e-23",
            "9007199254740992.0", "9007199254740993.0", "9007199254740993e-3", "1234567890123456789.0",
            "12345678901234567890.0", "0.0000000000000000000000000001", "1.7976931348623157e308", "4.9e-324",
            "2.2250738585072014e-308", "123.456e-2", "1E+2", "7E-0", "0.5e1",
            "3.14159265358979323846", "1.00000000000000011102230246251565404236316680908203125",
        ])
    func edgeLiteralsReadTheSame(literal: String) throws {
        let expected = try #require(Double(literal))
        #expect(try parsed(literal)?.bitPattern == expected.bitPattern, "\(literal)")
    }

    @Test("random decimal literals, short and long, read as Double(String) reads them")
    func randomLiteralsReadTheSame() throws {
        var random = SeededRandom(seed: 0x5EED_0F_D0B1E)
        for _ in 0..<20_000 {
            let digitCount = Int.random(in: 1...24, using: &random)
            var digits = (0..<digitCount).map { _ in String(Int.random(in: 0...9, using: &random)) }.joined()
            if digits.count > 1 { digits = String(digits.drop { $0 == "0" }.prefix(24)) }
            if digits.isEmpty { digits = "0" }
            let point = Int.random(in: 1...digits.count, using: &random)
            let fraction = point == digits.count ? "0" : String(digits.dropFirst(point))
            var literal = String(digits.prefix(point)) + "." + fraction
            if Bool.random(using: &random) { literal = "-" + literal }
            if Int.random(in: 0..<3, using: &random) == 0 {
                literal += (Bool.random(using: &random) ? "e" : "E") + String(Int.random(in: -40...40, using: &random))
            }
            let expected = try #require(Double(literal))
            #expect(try parsed(literal)?.bitPattern == expected.bitPattern, "\(literal)")
        }
    }
}
