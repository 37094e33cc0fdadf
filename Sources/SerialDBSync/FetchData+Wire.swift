import SerialDBSyncWire

extension FetchDataRequest: WireRequest {
    func write(to writer: inout JSONWriter) throws {
        writer.raw("{\"table\":")
        writer.string(table)
        writer.raw(",\"since\":")
        writer.integer(since)
        writer.raw(",\"limit\":")
        writer.integer(Int64(limit))
        if resyncing { writer.raw(",\"resyncing\":true") }
        writer.raw("}")
    }
}

extension FetchDataResponse: WireResponse {
    init(json: JSONValue) throws {
        let fields = try WireFields(json, context: "the fetch-data answer")
        self.init(
            table: try fields.string("table"),
            changes: try fields.array("changes").enumerated().map { index, entry in
                let change = try WireFields(entry, context: "change \(index) of the fetch-data answer")
                return SyncChange(
                    version: try change.integer("version"), deleted: try change.bool("deleted"),
                    row: try change.row("row"))
            },
            version: try fields.integer("version"), hasMore: try fields.bool("has_more"),
            resync: try fields.bool("resync"), floor: try fields.optionalInteger("floor"))
    }
}
