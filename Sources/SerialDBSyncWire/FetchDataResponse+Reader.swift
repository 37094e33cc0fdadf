import Foundation

extension FetchDataResponse {
    /// Reads an answer from its UTF-8 JSON: the same answer as ``WireCodable/init(jsonBytes:)`` (it is
    /// the reader a client uses for every page), read straight into its changes instead of
    /// through a ``JSONValue`` tree, which cost a dictionary per change and per row and more
    /// than applying the page.
    ///
    /// Text this reader does not expect (an error, a member it does not know, a member given
    /// twice, a nested value where a column value goes) is read again by
    /// ``WireCodable/init(jsonBytes:)``, which then decides: the answer, or the error that says what is
    /// wrong.
    ///
    /// - Throws: ``JSONParseError``, ``WireFormatError``, as ``WireCodable/init(jsonBytes:)``.
    public init(fetchDataBytes bytes: some Collection<UInt8>) throws {
        if let page = Self.readDirectly(Array(bytes)) {
            self = page
        } else {
            try self.init(jsonBytes: bytes)
        }
    }

    /// The answer as the direct reader reads it, or `nil` for text it leaves to the general one.
    static func readDirectly(_ bytes: [UInt8]) -> FetchDataResponse? {
        var reader = JSONParser(bytes)
        return try? reader.readFetchDataResponse(skippingChanges: false).page
    }

    /// The answer without its changes (`changes` empty), and where they lie in `bytes`, or
    /// `nil` for text the direct reader leaves to the general one: a client reads the cursor
    /// and sends the next request before it reads the rows (``readChanges(_:in:)``).
    ///
    /// The changes are only skipped over here, bracket by bracket and string by string, not
    /// checked: ``readChanges(_:in:)`` checks them.
    package static func readSkippingChanges(_ bytes: [UInt8]) -> (header: FetchDataResponse, changes: Range<Int>)? {
        var reader = JSONParser(bytes)
        guard let (header, changes) = try? reader.readFetchDataResponse(skippingChanges: true), let changes else {
            return nil
        }
        return (header, changes)
    }

    /// The changes of an answer that ``readSkippingChanges(_:)`` read, as
    /// ``init(fetchDataBytes:)`` reads them.
    ///
    /// - Throws: ``JSONParseError``, ``WireFormatError``: the general reader's error for the
    ///   whole answer.
    package static func readChanges(_ bytes: [UInt8], in range: Range<Int>) throws -> [SyncChange] {
        var reader = JSONParser(bytes)
        reader.position = range.lowerBound
        if let changes = try? reader.readChanges(), reader.position == range.upperBound { return changes }
        return try FetchDataResponse(jsonBytes: bytes).changes
    }
}

extension JSONParser {
    /// The whole text as a fetch-data answer, or a throw for anything else; with
    /// `skippingChanges`, its changes are skipped and their place returned instead.
    fileprivate mutating func readFetchDataResponse(skippingChanges: Bool) throws -> (
        page: FetchDataResponse, changes: Range<Int>?
    ) {
        var skipped: Range<Int>?
        var table: String?
        var changes: [SyncChange]?
        var version: Int64?
        var hasMore: Bool?
        var resync: Bool?
        var floor: Int64?
        var floorSeen = false
        skipWhitespace()
        var more = try openObject()
        while more {
            let name = try memberName()
            switch name {
            case WireName.table.string where table == nil: table = try readString()
            case WireName.changes.string where changes == nil:
                if skippingChanges {
                    let start = position
                    try skipArray()
                    skipped = start..<position
                    changes = []
                } else {
                    changes = try readChanges()
                }
            case WireName.version.string where version == nil: version = try readInteger()
            case WireName.hasMore.string where hasMore == nil: hasMore = try readBool()
            case WireName.resync.string where resync == nil: resync = try readBool()
            case WireName.floor.string where !floorSeen:
                floorSeen = true
                floor = readLiteral("null") ? nil : try readInteger()
            default: throw NotTheUsualAnswer()
            }
            more = try nextMember()
        }
        skipWhitespace()
        guard position == bytes.count, let table, let changes, let version, let hasMore, let resync else {
            throw NotTheUsualAnswer()
        }
        return (
            FetchDataResponse(
                table: table, changes: changes, version: version, hasMore: hasMore, resync: resync, floor: floor),
            skipped
        )
    }

    /// Past an array, found by its brackets: strings are skipped by their quotes and escapes
    /// (a `]` inside one does not count), nothing else is checked.
    private mutating func skipArray() throws {
        try expect(UInt8(ascii: "["))
        var depth = 1
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                while position < bytes.count, bytes[position] != UInt8(ascii: "\"") {
                    position += bytes[position] == UInt8(ascii: "\\") ? 2 : 1
                }
                position += 1
            case UInt8(ascii: "["), UInt8(ascii: "{"): depth += 1
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
                if depth == 0 {
                    guard byte == UInt8(ascii: "]") else { throw NotTheUsualAnswer() }
                    return
                }
            default: break
            }
        }
        throw NotTheUsualAnswer()
    }

    fileprivate mutating func readChanges() throws -> [SyncChange] {
        try expect(UInt8(ascii: "["))
        skipWhitespace()
        var changes: [SyncChange] = []
        if try consume(UInt8(ascii: "]")) { return changes }
        // The rows of a page share one shape: each row's dictionary is made at the size of
        // the one before, instead of growing (and rehashing) as its columns arrive.
        var columns = 0
        while true {
            let change = try readChange(columns: columns)
            columns = change.row.count
            changes.append(change)
            skipWhitespace()
            if try consume(UInt8(ascii: "]")) { return changes }
            try expect(UInt8(ascii: ","))
            skipWhitespace()
        }
    }

    /// The members of a change, as Strings built once (``WireName/string`` builds one from its
    /// static text at every use, and each change compares against them six times).
    private enum ChangeMember {
        static let version = WireName.version.string
        static let deleted = WireName.deleted.string
        static let row = WireName.row.string
    }

    /// A change whose row is expected to hold `columns` columns.
    private mutating func readChange(columns: Int) throws -> SyncChange {
        var version: Int64?
        var deleted: Bool?
        var row: [String: SyncValue]?
        var more = try openObject()
        while more {
            let name = try memberName()
            switch name {
            case ChangeMember.version where version == nil: version = try readInteger()
            case ChangeMember.deleted where deleted == nil: deleted = try readBool()
            case ChangeMember.row where row == nil: row = try readRow(columns: columns)
            default: throw NotTheUsualAnswer()
            }
            more = try nextMember()
        }
        guard let version, let deleted, let row else { throw NotTheUsualAnswer() }
        return SyncChange(version: version, deleted: deleted, row: row)
    }

    /// A row object, its dictionary made for `columns` columns; a column named twice keeps its
    /// last value, as in a ``JSONValue`` object.
    private mutating func readRow(columns: Int) throws -> [String: SyncValue] {
        var row = [String: SyncValue](minimumCapacity: columns)
        var more = try openObject()
        while more {
            let name = try memberName()
            row[name] = try readColumnValue()
            more = try nextMember()
        }
        return row
    }

    /// A column value, read as ``SyncValue/init(json:context:)`` reads it.
    private mutating func readColumnValue() throws -> SyncValue {
        guard position < bytes.count else { throw NotTheUsualAnswer() }
        switch bytes[position] {
        case UInt8(ascii: "\""): return .text(try parseString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            switch try parseNumber() {
            case .integer(let integer): return .integer(integer)
            case .number(let number): return .real(number)
            default: throw NotTheUsualAnswer()
            }
        case UInt8(ascii: "n") where readLiteral("null"): return .null
        case UInt8(ascii: "t") where readLiteral("true"): return .integer(1)
        case UInt8(ascii: "f") where readLiteral("false"): return .integer(0)
        case UInt8(ascii: "{"):
            guard try openObject(), try memberName() == WireName.base64.string else { throw NotTheUsualAnswer() }
            let encoded = try readString()
            guard !(try nextMember()), let data = Data(base64Encoded: encoded) else { throw NotTheUsualAnswer() }
            return .blob(data)
        default: throw NotTheUsualAnswer()
        }
    }
}
