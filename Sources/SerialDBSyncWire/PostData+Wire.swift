import SerialDBSyncWire

extension SyncMutation {
    /// The wire form, also kept in the outbox while the upload is unanswered, so that a retry
    /// sends exactly the same mutation.
    func write(to writer: inout JSONWriter) throws {
        writer.raw("{\"seq\":")
        writer.integer(seq)
        writer.raw(",\"table\":")
        writer.string(table)
        writer.raw(",\"op\":")
        writer.string(op.rawValue)
        if let row {
            writer.raw(",\"row\":")
            try SyncValue.write(row: row, to: &writer)
        }
        if let key {
            writer.raw(",\"key\":")
            try SyncValue.write(row: key, to: &writer)
        }
        writer.raw(",\"base_version\":")
        writer.integer(baseVersion)
        writer.raw("}")
    }

    /// Reads the wire form (a mutation kept in the outbox).
    init(json: JSONValue, context: String) throws {
        let fields = try WireFields(json, context: context)
        let opName = try fields.string("op")
        guard let op = Operation(rawValue: opName) else {
            throw WireFormatError(message: "\"op\" of \(context) is \(JSONWriter.quoted(opName)), not upsert or delete")
        }
        self.init(
            seq: try fields.integer("seq"), table: try fields.string("table"), op: op,
            row: fields.optional("row") == nil ? nil : try fields.row("row"),
            key: fields.optional("key") == nil ? nil : try fields.row("key"),
            baseVersion: try fields.integer("base_version"))
    }
}

extension PostDataRequest: WireRequest {
    func write(to writer: inout JSONWriter) throws {
        writer.raw("{\"client_id\":")
        writer.string(clientID)
        writer.raw(",\"mutations\":[")
        for (index, mutation) in mutations.enumerated() {
            if index > 0 { writer.raw(",") }
            try mutation.write(to: &writer)
        }
        writer.raw("]}")
    }
}

extension PostDataResponse: WireResponse {
    init(json: JSONValue) throws {
        let fields = try WireFields(json, context: "the post-data answer")
        self.init(
            results: try fields.array("results").enumerated().map { index, entry in
                try SyncMutationResult(json: entry, context: "result \(index) of the post-data answer")
            })
    }
}

extension SyncMutationResult {
    init(json: JSONValue, context: String) throws {
        let fields = try WireFields(json, context: context)
        let statusName = try fields.string("status")
        guard let status = Status(rawValue: statusName) else {
            throw WireFormatError(
                message:
                    "\"status\" of \(context) is \(JSONWriter.quoted(statusName)), not applied, conflict, rejected or duplicate"
            )
        }
        var current: SyncCurrentRow?
        if let entry = fields.optional("current") {
            let currentFields = try WireFields(entry, context: "\"current\" of \(context)")
            current = SyncCurrentRow(
                version: try currentFields.integer("version"), deleted: try currentFields.bool("deleted"),
                row: currentFields.optional("row") == nil ? nil : try currentFields.row("row"))
        }
        self.init(
            seq: try fields.integer("seq"), status: status,
            version: fields.optional("version") == nil ? nil : try fields.integer("version"), current: current,
            error: fields.optional("error") == nil ? nil : try fields.string("error"))
    }
}
