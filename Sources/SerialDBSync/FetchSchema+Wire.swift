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
        self.init(
            table: try fields.string("table"), structVersion: try fields.integer("struct_version"),
            schema: try fields.string("schema"))
    }
}
