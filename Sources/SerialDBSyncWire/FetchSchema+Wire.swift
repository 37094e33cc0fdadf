import SerialDBSyncWire

extension FetchSchemaRequest: WireRequest {
    func write(to writer: inout JSONWriter) throws {
        writer.raw("{\"table\":")
        writer.string(table)
        writer.raw("}")
    }
}

extension FetchSchemaResponse: WireResponse {
    init(json: JSONValue) throws {
        let fields = try WireFields(json, context: "the fetch-schema answer")
        var renamedColumns: [String: String] = [:]
        if fields.optional("renamed_columns") != nil {
            for (new, old) in try fields.object("renamed_columns") {
                guard let old = old.stringValue else {
                    throw WireFormatError(
                        message: "column \(JSONWriter.quoted(new)) of \"renamed_columns\" of the fetch-schema answer "
                            + "is \(old.kindName), not the old name as a string")
                }
                renamedColumns[new] = old
            }
        }
        self.init(
            table: try fields.string("table"), structVersion: try fields.integer("struct_version"),
            schema: try fields.string("schema"),
            renamedFrom: fields.optional("renamed_from") == nil ? nil : try fields.string("renamed_from"),
            renamedColumns: renamedColumns)
    }
}
