extension CheckUpdateRequest {
    /// As a server reads it.
    public static let wireContext = "the request"

    /// Reads a request; versions are whole numbers of 0 or more.
    public init(json: JSONValue, context: String) throws {
        let fields = try WireFields(json, context: context)
        self.init(tables: try elements(.tables, of: fields, each: "table entry"))
    }

    /// Writes the request.
    public func write(to writer: inout JSONWriter) throws {
        writer.raw("{")
        writer.field(.tables)
        try writer.array(tables)
        writer.raw("}")
    }

    /// Reads the request through its wire form.
    public init(from decoder: any Decoder) throws { try self.init(wireDecoder: decoder) }

    /// Writes the request in its wire form.
    public func encode(to encoder: any Encoder) throws { try encode(wireEncoder: encoder) }
}

extension CheckUpdateRequest.Table {
    /// As a server reads it.
    public static let wireContext = "a table entry"

    /// Reads an entry.
    public init(json: JSONValue, context: String) throws {
        let fields = try WireFields(json, context: context)
        self.init(
            table: try fields.string(.table), structVersion: try fields.count(.structVersion)!,
            version: try fields.count(.version)!)
    }

    /// Writes an entry.
    public func write(to writer: inout JSONWriter) throws {
        writer.raw("{")
        writer.field(.table)
        writer.string(table)
        writer.field(.structVersion)
        writer.integer(structVersion)
        writer.field(.version)
        writer.integer(version)
        writer.raw("}")
    }

    /// Reads the entry through its wire form.
    public init(from decoder: any Decoder) throws { try self.init(wireDecoder: decoder) }

    /// Writes the entry in its wire form.
    public func encode(to encoder: any Encoder) throws { try encode(wireEncoder: encoder) }
}

extension CheckUpdateResponse {
    /// As a client reads it.
    public static let wireContext = "the check-update answer"

    /// Reads an answer.
    public init(json: JSONValue, context: String) throws {
        let fields = try WireFields(json, context: context)
        self.init(account: try fields.string(.account), tables: try elements(.tables, of: fields, each: "table"))
    }

    /// Writes an answer.
    public func write(to writer: inout JSONWriter) throws {
        writer.reserve(128 + 160 * tables.count)
        writer.raw("{")
        writer.field(.account)
        writer.string(account)
        writer.field(.tables)
        try writer.array(tables)
        writer.raw("}")
    }

    /// Reads the answer through its wire form.
    public init(from decoder: any Decoder) throws { try self.init(wireDecoder: decoder) }

    /// Writes the answer in its wire form.
    public func encode(to encoder: any Encoder) throws { try encode(wireEncoder: encoder) }
}

extension CheckUpdateResponse.Table {
    /// As a client reads it.
    public static let wireContext = "a table of the check-update answer"

    /// Reads an entry; `floor` is 0 when absent.
    public init(json: JSONValue, context: String) throws {
        let fields = try WireFields(json, context: context)
        self.init(
            table: try fields.string(.table), scope: try fields.string(.scope), owner: try fields.string(.owner),
            structVersion: try fields.integer(.structVersion), version: try fields.integer(.version),
            schemaChanged: try fields.bool(.schemaChanged), dataChanged: try fields.bool(.dataChanged),
            floor: fields.optional(.floor) == nil ? 0 : try fields.integer(.floor))
    }

    /// Writes an entry.
    public func write(to writer: inout JSONWriter) throws {
        writer.raw("{")
        writer.field(.table)
        writer.string(table)
        writer.field(.scope)
        writer.string(scope)
        writer.field(.owner)
        writer.string(owner)
        writer.field(.structVersion)
        writer.integer(structVersion)
        writer.field(.version)
        writer.integer(version)
        writer.field(.schemaChanged)
        writer.bool(schemaChanged)
        writer.field(.dataChanged)
        writer.bool(dataChanged)
        writer.field(.floor)
        writer.integer(floor)
        writer.raw("}")
    }

    /// Reads the entry through its wire form.
    public init(from decoder: any Decoder) throws { try self.init(wireDecoder: decoder) }

    /// Writes the entry in its wire form.
    public func encode(to encoder: any Encoder) throws { try encode(wireEncoder: encoder) }
}
