import SerialDBSyncWire

extension CheckUpdateRequest: WireRequest {
    func write(to writer: inout JSONWriter) throws {
        writer.raw("{\"tables\":[")
        for (index, table) in tables.enumerated() {
            if index > 0 { writer.raw(",") }
            writer.raw("{\"table\":")
            writer.string(table.table)
            writer.raw(",\"struct_version\":")
            writer.integer(table.structVersion)
            writer.raw(",\"version\":")
            writer.integer(table.version)
            writer.raw("}")
        }
        writer.raw("]}")
    }
}

extension CheckUpdateResponse: WireResponse {
    init(json: JSONValue) throws {
        let fields = try WireFields(json, context: "the check-update answer")
        self.init(
            account: try fields.string("account"),
            tables: try fields.array("tables").enumerated().map { index, entry in
                let table = try WireFields(entry, context: "table \(index) of the check-update answer")
                return Table(
                    table: try table.string("table"), scope: try table.string("scope"),
                    owner: try table.string("owner"), structVersion: try table.integer("struct_version"),
                    version: try table.integer("version"), schemaChanged: try table.bool("schema_changed"),
                    dataChanged: try table.bool("data_changed"))
            })
    }
}
