extension FetchDataRequest {
    /// As a server reads it.
    public static let wireContext = "the request"

    /// Reads a request: `limit` is ``SyncLimits/defaultPageSize`` when absent and must be 1 or
    /// more (a server caps it at ``SyncLimits/maximumPageSize``); `resyncing` is false when absent.
    public init(json: JSONValue, context: String) throws {
        let fields = try WireFields(json, context: context)
        let table = try fields.string(.table)
        let since = try fields.count(.since)!
        let limit = try fields.count(.limit, required: false) ?? Int64(SyncLimits.defaultPageSize)
        guard limit >= 1 else {
            throw WireFormatError(message: "\(JSONWriter.quoted(WireName.limit.string)) must be 1 or more")
        }
        self.init(table: table, since: since, limit: Int(clamping: limit), resyncing: try fields.flag(.resyncing))
    }

    /// Writes the request; `resyncing` only when true.
    public func write(to writer: inout JSONWriter) throws {
        writer.raw("{")
        writer.field(.table)
        writer.string(table)
        writer.field(.since)
        writer.integer(since)
        writer.field(.limit)
        writer.integer(Int64(limit))
        if resyncing {
            writer.field(.resyncing)
            writer.bool(true)
        }
        writer.raw("}")
    }

    /// Reads the request through its wire form.
    public init(from decoder: any Decoder) throws { try self.init(wireDecoder: decoder) }

    /// Writes the request in its wire form.
    public func encode(to encoder: any Encoder) throws { try encode(wireEncoder: encoder) }
}

extension SyncChange {
    /// As a client reads it.
    public static let wireContext = "a change"

    /// Reads a change.
    public init(json: JSONValue, context: String) throws {
        try self.init(json: json, describingContext: { context })
    }

    /// Reads a change, its context worked out only for an error message.
    init(json: JSONValue, describingContext: @escaping @Sendable () -> String) throws {
        let fields = try WireFields(json, describingContext: describingContext)
        self.init(version: try fields.integer(.version), deleted: try fields.bool(.deleted), row: try fields.row(.row))
    }

    /// Writes a change, its columns in name order.
    public func write(to writer: inout JSONWriter) throws {
        Self.writeHead(version: version, deleted: deleted, to: &writer)
        try SyncValue.write(row: row, to: &writer)
        writer.raw("}")
    }

    /// A change's members up to its row's object: `{"version":41,"deleted":false,"row":`.
    static func writeHead(version: Int64, deleted: Bool, to writer: inout JSONWriter) {
        writer.raw("{")
        writer.field(.version)
        writer.integer(version)
        writer.field(.deleted)
        writer.bool(deleted)
        writer.field(.row)
    }

    /// Reads the change through its wire form.
    public init(from decoder: any Decoder) throws { try self.init(wireDecoder: decoder) }

    /// Writes the change in its wire form.
    public func encode(to encoder: any Encoder) throws { try encode(wireEncoder: encoder) }
}

extension SyncEncodedChange {
    /// Writes the change: its row's JSON is copied as it is.
    public func write(to writer: inout JSONWriter) {
        SyncChange.writeHead(version: version, deleted: deleted, to: &writer)
        writer.rawJSON(rowJSON)
        writer.raw("}")
    }
}

extension FetchDataResponse {
    /// As a client reads it.
    public static let wireContext = "the fetch-data answer"

    /// Reads an answer; `floor` is `nil` when absent (a server older than protocol 1.1).
    public init(json: JSONValue, context: String) throws {
        let fields = try WireFields(json, context: context)
        self.init(
            table: try fields.string(.table),
            changes: try elements(.changes, of: fields, each: "change", read: SyncChange.init(json:describingContext:)),
            version: try fields.integer(.version), hasMore: try fields.bool(.hasMore), resync: try fields.bool(.resync),
            floor: fields.optional(.floor) == nil ? nil : try fields.integer(.floor))
    }

    /// Writes an answer (`floor` 0 when it is `nil`: every 1.1 answer carries one).
    public func write(to writer: inout JSONWriter) throws {
        Self.writeHead(table: table, to: &writer)
        for (index, change) in changes.enumerated() {
            if index > 0 { writer.raw(",") }
            try change.write(to: &writer)
        }
        Self.writeTail(version: version, hasMore: hasMore, resync: resync, floor: floor ?? 0, to: &writer)
    }

    /// The most bytes ``writeTail(version:hasMore:resync:floor:to:)`` writes.
    public static let tailSize = 128

    /// An answer's members up to the first change: `{"table":"note","changes":[`. A server
    /// that copies stored rows writes the head, the changes (``SyncEncodedChange/write(to:)``,
    /// comma-separated) and the tail itself.
    public static func writeHead(table: String, to writer: inout JSONWriter) {
        writer.raw("{")
        writer.field(.table)
        writer.string(table)
        writer.field(.changes)
        writer.raw("[")
    }

    /// An answer's members after the last change: `],"version":44,...}`.
    public static func writeTail(version: Int64, hasMore: Bool, resync: Bool, floor: Int64, to writer: inout JSONWriter)
    {
        writer.raw("]")
        writer.field(.version)
        writer.integer(version)
        writer.field(.hasMore)
        writer.bool(hasMore)
        writer.field(.resync)
        writer.bool(resync)
        writer.field(.floor)
        writer.integer(floor)
        writer.raw("}")
    }

    /// Reads the answer through its wire form.
    public init(from decoder: any Decoder) throws { try self.init(wireDecoder: decoder) }

    /// Writes the answer in its wire form.
    public func encode(to encoder: any Encoder) throws { try encode(wireEncoder: encoder) }
}
