extension PostDataResponse {
    /// Reads an answer from its UTF-8 JSON: the same answer as ``init(jsonBytes:)`` (it is
    /// the reader a client uses for every upload), read straight into its results instead of
    /// through a ``JSONValue`` tree, which cost a dictionary per result and more than the
    /// client's own work on the answer.
    ///
    /// It reads the usual shape alone: `{"results": [...]}` whose results hold `seq`,
    /// `status` and an integer `version` or a string `error`. Anything else (an error, a
    /// conflict's `current` row, `null`, a member it does not know or given twice) is read
    /// again by ``init(jsonBytes:)``, which then decides: the answer, or the error that says
    /// what is wrong.
    ///
    /// - Throws: ``JSONParseError``, ``WireFormatError``, as ``init(jsonBytes:)``.
    public init(postDataBytes bytes: some Collection<UInt8>) throws {
        if let answer = Self.readDirectly(Array(bytes)) {
            self = answer
        } else {
            try self.init(jsonBytes: bytes)
        }
    }

    /// The answer as the direct reader reads it, or `nil` for text it leaves to the general one.
    static func readDirectly(_ bytes: [UInt8]) -> PostDataResponse? {
        var reader = JSONParser(bytes)
        return try? reader.readPostDataResponse()
    }
}

/// The ASCII bytes of a name, matched against string literals without making a `String`.
private struct StaticName {
    let bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    static func ~= (pattern: StaticString, name: StaticName) -> Bool {
        pattern.withUTF8Buffer { $0.elementsEqual(name.bytes) }
    }
}

extension JSONParser {
    /// The whole text as a post-data answer, or a throw for anything else.
    fileprivate mutating func readPostDataResponse() throws -> PostDataResponse {
        skipWhitespace()
        guard try openObject(), try memberName() == WireName.results.string else { throw NotTheUsualAnswer() }
        try expect(UInt8(ascii: "["))
        skipWhitespace()
        var results: [SyncMutationResult] = []
        if !(try consume(UInt8(ascii: "]"))) {
            while true {
                results.append(try readResult())
                skipWhitespace()
                if try consume(UInt8(ascii: "]")) { break }
                try expect(UInt8(ascii: ","))
                skipWhitespace()
            }
        }
        guard !(try nextMember()) else { throw NotTheUsualAnswer() }
        skipWhitespace()
        guard position == bytes.count else { throw NotTheUsualAnswer() }
        return PostDataResponse(results: results)
    }

    /// One result of the usual shape, read as ``SyncMutationResult/init(json:context:)`` reads it.
    private mutating func readResult() throws -> SyncMutationResult {
        var seq: Int64?
        var status: SyncMutationResult.Status?
        var version: Int64?
        var error: String?
        var more = try openObject()
        while more {
            // Names and statuses are matched on their bytes: a String for each, and one for
            // each name matched against, cost more than the rest of the result.
            let name = try readName()
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            skipWhitespace()
            switch name {
            case "seq" where seq == nil: seq = try readInteger()
            case "status" where status == nil: status = try readStatus()
            case "version" where version == nil: version = try readInteger()
            case "error" where error == nil: error = try readString()
            default: throw NotTheUsualAnswer()
            }
            more = try nextMember()
        }
        guard let seq, let status else { throw NotTheUsualAnswer() }
        return SyncMutationResult(seq: seq, status: status, version: version, error: error)
    }

    /// A result's member name, as the bytes between its quotes, when they hold no escape
    /// (a name with one is left to the general reader).
    private mutating func readName() throws -> StaticName {
        try StaticName(readUnescaped())
    }

    /// A known status, or a throw for one the general reader must refuse.
    private mutating func readStatus() throws -> SyncMutationResult.Status {
        switch try readName() {
        case "applied": return .applied
        case "duplicate": return .duplicate
        case "rejected": return .rejected
        case "conflict": return .conflict
        default: throw NotTheUsualAnswer()
        }
    }

    /// The bytes of a string without escapes, past its closing quote.
    private mutating func readUnescaped() throws -> ArraySlice<UInt8> {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw NotTheUsualAnswer() }
        let start = position + 1
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"),
            bytes[end] >= 0x20, bytes[end] < 0x80
        {
            end += 1
        }
        guard end < bytes.count, bytes[end] == UInt8(ascii: "\"") else { throw NotTheUsualAnswer() }
        position = end + 1
        return bytes[start..<end]
    }
}
