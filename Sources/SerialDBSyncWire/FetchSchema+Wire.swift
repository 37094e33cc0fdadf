extension FetchSchemaRequest {
    /// As a server reads it.
    public static let wireContext = "the request"

    /// Reads a request.
    public init(json: JSONValue, context: String) throws {
        self.init(table: try WireFields(json, context: context).string(.table))
    }

    /// Writes the request.
    public func write(to writer: inout JSONWriter) throws {
        writer.raw("{")
        writer.field(.table)
        writer.string(table)
        writer.raw("}")
    }

    /// Reads the request through its wire form.
    public init(from decoder: any Decoder) throws { try self.init(wireDecoder: decoder) }

    /// Writes the request in its wire form.
    public func encode(to encoder: any Encoder) throws { try encode(wireEncoder: encoder) }
}

extension FetchSchemaResponse {
    /// As a client reads it.
    public static let wireContext = "the fetch-schema answer"

    /// Reads an answer; the rename fields are optional.
    public init(json: JSONValue, context: String) throws {
        let fields = try WireFields(json, context: context)
        var renamedColumns: [String: String] = [:]
        if fields.optional(.renamedColumns) != nil {
            for (new, old) in try fields.object(.renamedColumns) {
                guard let old = old.stringValue else {
                    throw WireFormatError(
                        message:
                            "column \(JSONWriter.quoted(new)) of \(JSONWriter.quoted(WireName.renamedColumns.string)) "
                            + "of \(context) is \(old.kindName), not the old name as a string")
                }
                renamedColumns[new] = old
            }
        }
        self.init(
            table: try fields.string(.table), structVersion: try fields.integer(.structVersion),
            schema: try fields.string(.schema),
            renamedFrom: fields.optional(.renamedFrom) == nil ? nil : try fields.string(.renamedFrom),
            renamedColumns: renamedColumns)
    }

    /// Writes an answer: the rename fields only when there are renames, columns by new name.
    public func write(to writer: inout JSONWriter) throws {
        writer.reserve(64 + schema.utf8.count)
        writer.raw("{")
        writer.field(.table)
        writer.string(table)
        writer.field(.structVersion)
        writer.integer(structVersion)
        writer.field(.schema)
        writer.string(schema)
        if let renamedFrom {
            writer.field(.renamedFrom)
            writer.string(renamedFrom)
        }
        if !renamedColumns.isEmpty {
            writer.field(.renamedColumns)
            writer.raw("{")
            for (index, (new, old)) in renamedColumns.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { writer.raw(",") }
                writer.string(new)
                writer.raw(":")
                writer.string(old)
            }
            writer.raw("}")
        }
        writer.raw("}")
    }

    /// Reads the answer through its wire form.
    public init(from decoder: any Decoder) throws { try self.init(wireDecoder: decoder) }

    /// Writes the answer in its wire form.
    public func encode(to encoder: any Encoder) throws { try encode(wireEncoder: encoder) }
}
