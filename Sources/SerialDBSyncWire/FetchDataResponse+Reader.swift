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
    /// ``init(fetchDataBytes:)`` reads them. `afterEach` is called with the index of each change
    /// the direct reader has read (a client that shares the processor yields every few).
    ///
    /// - Throws: ``JSONParseError``, ``WireFormatError``: the general reader's error for the
    ///   whole answer.
    package static func readChanges(
        _ bytes: [UInt8], in range: Range<Int>, afterEach: (Int) -> Void = { _ in }
    ) throws -> PageChanges {
        var reader = JSONParser(bytes)
        reader.position = range.lowerBound
        if let changes = try? reader.readChanges(afterEach: afterEach), reader.position == range.upperBound {
            return changes
        }
        return PageChanges(try FetchDataResponse(jsonBytes: bytes).changes)
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
                    changes = try readChanges(afterEach: { _ in }).changes
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

    fileprivate mutating func readChanges(afterEach: (Int) -> Void) throws -> PageChanges {
        try expect(UInt8(ascii: "["))
        skipWhitespace()
        var page = PageChanges()
        if try consume(UInt8(ascii: "]")) { return page }
        // The rows of a page share one shape: a row's column names are the row before's when
        // they come in the same order (the Strings are reused, and the row shares its shape).
        var names: [String?] = []
        var rowNames: [String] = []
        while true {
            try readChange(into: &page, names: &names, rowNames: &rowNames)
            afterEach(page.count - 1)
            skipWhitespace()
            if try consume(UInt8(ascii: "]")) { return page }
            try expect(UInt8(ascii: ","))
            skipWhitespace()
        }
    }

    /// A change, added to `page`; `names` are the column names of the row before, in its
    /// order (see ``readRow(into:names:rowNames:)``). Its members' names are matched as bytes: a
    /// name written any other way leaves the page to the general reader.
    private mutating func readChange(into page: inout PageChanges, names: inout [String?], rowNames: inout [String])
        throws
    {
        var version: Int64?
        var deleted: Bool?
        var rowRead = false
        var more = try openObject()
        while more {
            if version == nil, try readMemberName(.version) {
                version = try readInteger()
            } else if deleted == nil, try readMemberName(.deleted) {
                deleted = try readBool()
            } else if !rowRead, try readMemberName(.row) {
                try readRow(into: &page, names: &names, rowNames: &rowNames)
                rowRead = true
            } else {
                throw NotTheUsualAnswer()
            }
            more = try nextMember()
        }
        guard let version, let deleted, rowRead else { throw NotTheUsualAnswer() }
        page.endRow(version: version, deleted: deleted, names: rowNames)
    }

    /// A row object: its values go to `page`, its column names to `rowNames`. `names` are the
    /// row before's column names in order (`nil` for one written with escapes): a column that
    /// comes under the same name at the same place reuses its String, and `names` become
    /// this row's.
    private mutating func readRow(into page: inout PageChanges, names: inout [String?], rowNames: inout [String])
        throws
    {
        rowNames.removeAll(keepingCapacity: true)
        var index = 0
        var more = try openObject()
        while more {
            let name: String
            if index < names.count, let known = names[index], try readMemberName(sameAs: known) {
                name = known
            } else {
                name = try memberName()
                let plain = Self.plainName(name)
                if index < names.count { names[index] = plain } else { names.append(plain) }
            }
            rowNames.append(name)
            page.appendValue(try readColumnValue())
            index += 1
            more = try nextMember()
        }
        if index < names.count { names.removeSubrange(index...) }
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
