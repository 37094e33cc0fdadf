import Foundation

/// A strict JSON parser (RFC 8259) over UTF-8 bytes. Written by hand rather than taken from
/// Foundation so that integers and fractions stay apart (`1` and `1.0` are different values for
/// an INTEGER column), booleans are never numbers, and nesting is bounded: a request body of
/// ten thousand `[` must be a 400, not a stack overflow.
struct JSONParser {
    /// Deeper documents are refused; the protocol needs four levels.
    static let maximumDepth = 64

    // Internal, not private: the direct readers (JSONParser+DirectReading.swift) walk the
    // same bytes with the same primitives.
    let bytes: [UInt8]
    var position = 0
    private var depth = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func parseDocument() throws -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard position == bytes.count else { throw error("unexpected text after the JSON value") }
        return value
    }

    private func error(_ message: String) -> JSONParseError {
        JSONParseError(message: "malformed JSON at byte \(position): \(message)")
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    private mutating func parseValue() throws -> JSONValue {
        guard position < bytes.count else { throw error("unexpected end of text") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try parseLiteral("true", .bool(true))
        case UInt8(ascii: "f"): return try parseLiteral("false", .bool(false))
        case UInt8(ascii: "n"): return try parseLiteral("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character")
        }
    }

    private mutating func parseLiteral(_ word: StaticString, _ value: JSONValue) throws -> JSONValue {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else { throw error("unexpected end of text") }
        for offset in 0..<count where bytes[position + offset] != word.utf8Start[offset] {
            throw error("unexpected character")
        }
        position += count
        return value
    }

    private mutating func enter() throws {
        depth += 1
        guard depth <= Self.maximumDepth else { throw error("nested deeper than \(Self.maximumDepth) levels") }
        position += 1
        skipWhitespace()
    }

    private mutating func parseObject() throws -> JSONValue {
        try enter()
        defer { depth -= 1 }
        var members: [String: JSONValue] = [:]
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            return .object(members)
        }
        while true {
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                throw error("expected a member name in quotes")
            }
            let name = try parseString()
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw error("expected `:`") }
            position += 1
            skipWhitespace()
            members[name] = try parseValue()
            skipWhitespace()
            guard position < bytes.count else { throw error("unexpected end of text") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                skipWhitespace()
            } else if bytes[position] == UInt8(ascii: "}") {
                position += 1
                return .object(members)
            } else {
                throw error("expected `,` or `}`")
            }
        }
    }

    private mutating func parseArray() throws -> JSONValue {
        try enter()
        defer { depth -= 1 }
        var elements: [JSONValue] = []
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
            return .array(elements)
        }
        while true {
            elements.append(try parseValue())
            skipWhitespace()
            guard position < bytes.count else { throw error("unexpected end of text") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                skipWhitespace()
            } else if bytes[position] == UInt8(ascii: "]") {
                position += 1
                return .array(elements)
            } else {
                throw error("expected `,` or `]`")
            }
        }
    }

    mutating func parseString() throws -> String {
        position += 1  // the opening quote
        let start = position
        // Fast path: no escapes, so the bytes between the quotes are the string; when they
        // are all ASCII there is no UTF-8 to validate either.
        var isASCII = true
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let slice = bytes[start..<position]
                position += 1
                if isASCII { return String(decoding: slice, as: UTF8.self) }
                guard let string = String(validating: slice, as: UTF8.self) else {
                    throw error("a string is not valid UTF-8")
                }
                return string
            }
            isASCII = isASCII && byte < 0x80
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw error("a control character inside a string") }
            position += 1
        }
        var utf8 = Array(bytes[start..<position])
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let string = String(validating: utf8, as: UTF8.self) else {
                    throw error("a string is not valid UTF-8")
                }
                return string
            case UInt8(ascii: "\\"):
                try parseEscape(into: &utf8)
            case 0..<0x20:
                throw error("a control character inside a string")
            default:
                utf8.append(byte)
            }
        }
        throw error("unterminated string")
    }

    private mutating func parseEscape(into utf8: inout [UInt8]) throws {
        guard position < bytes.count else { throw error("unterminated string") }
        let byte = bytes[position]
        position += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(byte)
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = UInt32(try parseHex4())
            if (0xD800..<0xDC00).contains(scalar) {
                // A high surrogate must be followed by an escaped low one.
                guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                    bytes[position + 1] == UInt8(ascii: "u")
                else { throw error("a lone surrogate in a \\u escape") }
                position += 2
                let low = UInt32(try parseHex4())
                guard (0xDC00..<0xE000).contains(low) else { throw error("a lone surrogate in a \\u escape") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw error("a lone surrogate in a \\u escape") }
            utf8.append(contentsOf: Array(String(Character(unicode)).utf8))
        default:
            throw error("an unknown escape in a string")
        }
    }

    private mutating func parseHex4() throws -> UInt16 {
        guard position + 4 <= bytes.count else { throw error("a short \\u escape") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("a bad hexadecimal digit in a \\u escape")
            }
            value = value << 4 | UInt16(digit)
            position += 1
        }
        return value
    }

    mutating func parseNumber() throws -> JSONValue {
        let start = position
        var isInteger = true
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard position < bytes.count, isDigit(bytes[position]) else { throw error("a number without digits") }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
        } else {
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard position < bytes.count, isDigit(bytes[position]) else { throw error("a fraction without digits") }
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard position < bytes.count, isDigit(bytes[position]) else { throw error("an exponent without digits") }
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        if isInteger, let integer = integerValue(bytes[start..<position]) { return .integer(integer) }
        if !isInteger, let double = exactDouble(bytes[start..<position]) { return .number(double) }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        guard let double = Double(text), double.isFinite else { throw error("a number out of range") }
        return .number(double)
    }

    /// The value of an integer literal already checked for syntax, or `nil` when it does not
    /// fit in 64 bits. Negative numbers are accumulated downwards so that `Int64.min` fits.
    private func integerValue(_ literal: ArraySlice<UInt8>) -> Int64? {
        let negative = literal.first == UInt8(ascii: "-")
        var value: Int64 = 0
        for byte in literal.dropFirst(negative ? 1 : 0) {
            let digit = Int64(byte - UInt8(ascii: "0"))
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) =
                negative ? times10.subtractingReportingOverflow(digit) : times10.addingReportingOverflow(digit)
            if overflow1 || overflow2 { return nil }
            value = next
        }
        return value
    }

    /// The double of a number literal already checked for syntax, when one multiplication or
    /// division of exact doubles gives it: at most 2^53 in its digits and a power of ten up to
    /// 10^22 (both exact, so IEEE rounding of the one operation is the correctly rounded
    /// result, as parsing the text gives). Most REAL values synced (`0.5`, `19.99`) are such;
    /// the rest (`nil`) go through `Double(String)`, a String and a strtod each.
    private func exactDouble(_ literal: ArraySlice<UInt8>) -> Double? {
        var digits: UInt64 = 0
        var digitCount = 0
        var scale = 0  // the power of ten the digits are multiplied by
        var index = literal.startIndex
        let negative = literal[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        var inFraction = false
        while index < literal.endIndex {
            let byte = literal[index]
            if byte == UInt8(ascii: ".") {
                inFraction = true
            } else if isDigit(byte) {
                if digits == 0 && byte == UInt8(ascii: "0") {
                    // Leading zeros add no digit.
                } else {
                    digitCount += 1
                    guard digitCount <= 19 else { return nil }
                    digits = digits * 10 + UInt64(byte - UInt8(ascii: "0"))
                }
                if inFraction { scale -= 1 }
            } else {
                break  // the exponent
            }
            index += 1
        }
        if index < literal.endIndex {
            index += 1  // `e` or `E`
            var exponentNegative = false
            if literal[index] == UInt8(ascii: "+") || literal[index] == UInt8(ascii: "-") {
                exponentNegative = literal[index] == UInt8(ascii: "-")
                index += 1
            }
            var exponent = 0
            while index < literal.endIndex {
                exponent = exponent * 10 + Int(literal[index] - UInt8(ascii: "0"))
                guard exponent <= 400 else { return nil }
                index += 1
            }
            scale += exponentNegative ? -exponent : exponent
        }
        guard digits <= 1 << 53, abs(scale) <= 22 else { return digits == 0 ? (negative ? -0.0 : 0.0) : nil }
        let magnitude =
            scale >= 0 ? Double(digits) * Self.powersOfTen[scale] : Double(digits) / Self.powersOfTen[-scale]
        return negative ? -magnitude : magnitude
    }

    /// 10^0 ... 10^22, every one exact in a double.
    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
        1e19, 1e20, 1e21, 1e22,
    ]

    func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}
