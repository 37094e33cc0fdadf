/// What a direct reader (``FetchDataResponse/init(fetchDataBytes:)``,
/// ``PostDataResponse/init(postDataBytes:)``) leaves to the general one.
struct NotTheUsualAnswer: Error {}

/// The pieces the direct readers of the answers a client reads per page or batch are made of.
/// Each reads exactly what it names or throws ``NotTheUsualAnswer``, which sends the whole
/// text to the general reader.
extension JSONParser {
    /// Past `{` and the whitespace after it; whether a member follows.
    mutating func openObject() throws -> Bool {
        try expect(UInt8(ascii: "{"))
        skipWhitespace()
        return !(try consume(UInt8(ascii: "}")))
    }

    /// A member's name and the `:` after it, up to its value.
    mutating func memberName() throws -> String {
        let name = try readString()
        skipWhitespace()
        try expect(UInt8(ascii: ":"))
        skipWhitespace()
        return name
    }

    /// Reads the next member's name and the `:` after it when it is `name` written plainly
    /// (`"version"`), without building a String; leaves the text as it was otherwise (another
    /// name, or this one written with escapes, which the caller leaves to the general reader).
    mutating func readMemberName(_ name: WireName) throws -> Bool {
        try readMemberName(utf8: UnsafeBufferPointer(start: name.text.utf8Start, count: name.text.utf8CodeUnitCount))
    }

    /// Reads the next member's name and the `:` after it when it is `name` (a string without
    /// escapes, as ``plainName(_:)`` keeps), returning it without building another.
    mutating func readMemberName(sameAs name: String) throws -> Bool {
        var name = name
        return try name.withUTF8 { try readMemberName(utf8: $0) }
    }

    /// Reads `"` + `utf8` + `"` and the `:` after it when the text goes on with exactly that.
    private mutating func readMemberName(utf8: UnsafeBufferPointer<UInt8>) throws -> Bool {
        let end = position + utf8.count + 1
        guard end < bytes.count, bytes[position] == UInt8(ascii: "\""), bytes[end] == UInt8(ascii: "\"") else {
            return false
        }
        for offset in 0..<utf8.count where bytes[position + 1 + offset] != utf8[offset] { return false }
        position = end + 1
        skipWhitespace()
        try expect(UInt8(ascii: ":"))
        skipWhitespace()
        return true
    }

    /// `name` when its text needs no escape in JSON, so that the same bytes in the text mean
    /// the same name (``readMemberName(sameAs:)``); `nil` otherwise.
    static func plainName(_ name: String) -> String? {
        name.utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") } ? nil : name
    }

    /// After a member's value: whether another member follows (`,`), or the object ends (`}`).
    mutating func nextMember() throws -> Bool {
        skipWhitespace()
        if try consume(UInt8(ascii: "}")) { return false }
        try expect(UInt8(ascii: ","))
        skipWhitespace()
        return true
    }

    mutating func readString() throws -> String {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw NotTheUsualAnswer() }
        return try parseString()
    }

    /// An integer literal that fits in 64 bits (``WireFields/integer(_:)``).
    mutating func readInteger() throws -> Int64 {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "-") || isDigit(bytes[position]),
            case .integer(let integer) = try parseNumber()
        else { throw NotTheUsualAnswer() }
        return integer
    }

    mutating func readBool() throws -> Bool {
        if readLiteral("true") { return true }
        if readLiteral("false") { return false }
        throw NotTheUsualAnswer()
    }

    /// Reads `word` when the text goes on with it.
    mutating func readLiteral(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[position + offset] != word.utf8Start[offset] { return false }
        position += count
        return true
    }

    mutating func consume(_ byte: UInt8) throws -> Bool {
        guard position < bytes.count else { throw NotTheUsualAnswer() }
        guard bytes[position] == byte else { return false }
        position += 1
        return true
    }

    mutating func expect(_ byte: UInt8) throws {
        guard try consume(byte) else { throw NotTheUsualAnswer() }
    }
}
