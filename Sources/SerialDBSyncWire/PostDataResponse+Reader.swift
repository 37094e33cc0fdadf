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

/// What the direct reader leaves to the general one.
private struct NotTheUsualAnswer: Error {}

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
            switch try memberName() {
            case WireName.seq.string where seq == nil: seq = try readInteger()
            case WireName.status.string where status == nil:
                guard let known = SyncMutationResult.Status(rawValue: try readString()) else {
                    throw NotTheUsualAnswer()
                }
                status = known
            case WireName.version.string where version == nil: version = try readInteger()
            case WireName.error.string where error == nil: error = try readString()
            default: throw NotTheUsualAnswer()
            }
            more = try nextMember()
        }
        guard let seq, let status else { throw NotTheUsualAnswer() }
        return SyncMutationResult(seq: seq, status: status, version: version, error: error)
    }

    // MARK: - Pieces

    /// Past `{` and the whitespace after it; whether a member follows.
    private mutating func openObject() throws -> Bool {
        try expect(UInt8(ascii: "{"))
        skipWhitespace()
        return !(try consume(UInt8(ascii: "}")))
    }

    /// A member's name and the `:` after it, up to its value.
    private mutating func memberName() throws -> String {
        let name = try readString()
        skipWhitespace()
        try expect(UInt8(ascii: ":"))
        skipWhitespace()
        return name
    }

    /// After a member's value: whether another member follows (`,`), or the object ends (`}`).
    private mutating func nextMember() throws -> Bool {
        skipWhitespace()
        if try consume(UInt8(ascii: "}")) { return false }
        try expect(UInt8(ascii: ","))
        skipWhitespace()
        return true
    }

    private mutating func readString() throws -> String {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw NotTheUsualAnswer() }
        return try parseString()
    }

    /// An integer literal that fits in 64 bits (``WireFields/integer(_:)``).
    private mutating func readInteger() throws -> Int64 {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "-") || isDigit(bytes[position]),
            case .integer(let integer) = try parseNumber()
        else { throw NotTheUsualAnswer() }
        return integer
    }

    private mutating func consume(_ byte: UInt8) throws -> Bool {
        guard position < bytes.count else { throw NotTheUsualAnswer() }
        guard bytes[position] == byte else { return false }
        position += 1
        return true
    }

    private mutating func expect(_ byte: UInt8) throws {
        guard try consume(byte) else { throw NotTheUsualAnswer() }
    }
}
