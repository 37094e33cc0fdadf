extension SyncMutation {
    /// As kept in a client's outbox.
    public static let wireContext = "a mutation"

    /// Reads a mutation (a client reads back the ones its outbox keeps).
    public init(json: JSONValue, context: String) throws {
        let fields = try WireFields(json, context: context)
        self.init(
            seq: try fields.integer(.seq), table: try fields.string(.table), op: try Self.operation(in: fields),
            row: fields.optional(.row) == nil ? nil : try fields.row(.row),
            key: fields.optional(.key) == nil ? nil : try fields.row(.key),
            baseVersion: try fields.integer(.baseVersion))
    }

    /// The `op` member of a mutation.
    static func operation(in fields: WireFields) throws(WireFormatError) -> Operation {
        let name = try fields.string(.op)
        guard let op = Operation(rawValue: name) else {
            throw WireFormatError(
                message: "\(JSONWriter.quoted(WireName.op.string)) in \(fields.context) must be "
                    + "\(JSONWriter.quoted(Operation.upsert.rawValue)) or \(JSONWriter.quoted(Operation.delete.rawValue)), "
                    + "not \(JSONWriter.quoted(name))")
        }
        return op
    }

    /// Writes the wire form, also kept in the outbox while the upload is unanswered, so that
    /// a retry sends exactly the same mutation: row columns in name order.
    public func write(to writer: inout JSONWriter) throws {
        try Self.write(seq: seq, table: table, op: op, baseVersion: baseVersion, to: &writer) { writer in
            if let row {
                writer.field(.row)
                try SyncValue.write(row: row, to: &writer)
            }
            if let key {
                writer.field(.key)
                try SyncValue.write(row: key, to: &writer)
            }
        }
    }

    /// Writes the wire form of a mutation whose `"row"` or `"key"` member `columns` writes
    /// (with ``JSONWriter/field(_:)`` and a row object): the bytes ``write(to:)`` writes, for a
    /// writer that has the columns in another form than a dictionary (``WireRowLayout``).
    public static func write(
        seq: Int64, table: String, op: Operation, baseVersion: Int64, to writer: inout JSONWriter,
        columns: (inout JSONWriter) throws -> Void
    ) rethrows {
        writer.raw("{")
        writer.field(.seq)
        writer.integer(seq)
        writer.field(.table)
        writer.string(table)
        writer.field(.op)
        writer.string(op.rawValue)
        try columns(&writer)
        writer.field(.baseVersion)
        writer.integer(baseVersion)
        writer.raw("}")
    }

    /// Reads the mutation through its wire form.
    public init(from decoder: any Decoder) throws { try self.init(wireDecoder: decoder) }

    /// Writes the mutation in its wire form.
    public func encode(to encoder: any Encoder) throws { try encode(wireEncoder: encoder) }
}

extension PostDataRequest {
    /// As a server reads it.
    public static let wireContext = "the request"

    /// Reads a request, strictly (a client's own, or a test's). A server reads it as a
    /// ``ReceivedPostData``, which leaves rows as JSON to check them against their table.
    public init(json: JSONValue, context: String) throws {
        let received = try ReceivedPostData(json: json, context: context)
        self.init(
            clientID: received.clientID,
            mutations: try received.mutations.enumerated().map { index, entry in
                try SyncMutation(json: entry, context: "mutation \(index + 1)")
            })
    }

    /// Writes the request: the mutations' encoded forms as they are, when it has them.
    public func write(to writer: inout JSONWriter) throws {
        writer.raw("{")
        writer.field(.clientID)
        writer.string(clientID)
        writer.field(.mutations)
        if let encodedMutations {
            writer.reserve(encodedMutations.reduce(2) { $0 + $1.utf8.count + 1 })
            writer.raw("[")
            for (index, mutation) in encodedMutations.enumerated() {
                if index > 0 { writer.raw(",") }
                writer.rawJSON(mutation)
            }
            writer.raw("]")
        } else {
            try writer.array(mutations)
        }
        writer.raw("}")
    }

    /// Reads the request through its wire form.
    public init(from decoder: any Decoder) throws { try self.init(wireDecoder: decoder) }

    /// Writes the request in its wire form.
    public func encode(to encoder: any Encoder) throws { try encode(wireEncoder: encoder) }
}

/// A post-data request as a server receives it: the client id checked, the mutations still
/// JSON, to be read one at a time (``ReceivedMutation``) against the tables they name.
public struct ReceivedPostData: Sendable {
    /// The device's id: not empty, no NUL.
    public var clientID: String
    /// The mutations, in order.
    public var mutations: [JSONValue]

    /// Reads the envelope.
    /// - Throws: ``WireFormatError`` for a missing, empty or NUL-holding `client_id`, or
    ///   `mutations` that is not an array.
    public init(json: JSONValue, context: String = PostDataRequest.wireContext) throws(WireFormatError) {
        let fields = try WireFields(json, context: context)
        let clientID = try fields.string(.clientID)
        let name = JSONWriter.quoted(WireName.clientID.string)
        guard !clientID.isEmpty else { throw WireFormatError(message: "\(name) must not be empty") }
        guard !clientID.utf8.contains(0) else {
            throw WireFormatError(message: "\(name) must not contain NUL (\\u0000)")
        }
        self.clientID = clientID
        self.mutations = try fields.array(.mutations)
    }
}

/// One mutation of a ``ReceivedPostData``, read in the order a server decides it: its seq
/// and table first (a table the server does not sync is rejected without reading further),
/// then the rest on demand. Numbers are whole numbers of 0 or more; the row or key stays JSON.
public struct ReceivedMutation: Sendable {
    /// The members, for the parts read on demand.
    public let fields: WireFields
    /// The client's sequence number.
    public let seq: Int64
    /// The table it names.
    public let table: String

    /// Reads the seq and table of mutation `position` (1 for the first).
    public init(json: JSONValue, position: Int) throws(WireFormatError) {
        fields = try WireFields(json, context: "mutation \(position)")
        seq = try fields.count(.seq)!
        table = try fields.string(.table)
    }

    /// The version the client last saw for the key.
    public func baseVersion() throws(WireFormatError) -> Int64 { try fields.count(.baseVersion)! }

    /// Upsert or delete.
    public func operation() throws(WireFormatError) -> SyncMutation.Operation {
        try SyncMutation.operation(in: fields)
    }

    /// An upsert's row object, as JSON.
    public func row() throws(WireFormatError) -> [String: JSONValue] { try fields.object(.row) }

    /// A delete's key object, as JSON.
    public func key() throws(WireFormatError) -> [String: JSONValue] { try fields.object(.key) }
}

extension SyncCurrentRow {
    /// As a client reads it.
    public static let wireContext = "a conflict's current row"

    /// Reads the state; `row` may be absent.
    public init(json: JSONValue, context: String) throws {
        let fields = try WireFields(json, context: context)
        self.init(
            version: try fields.integer(.version), deleted: try fields.bool(.deleted),
            row: fields.optional(.row) == nil ? nil : try fields.row(.row))
    }

    /// Writes the state (a change: version, deleted, row).
    public func write(to writer: inout JSONWriter) throws {
        writer.raw("{")
        writer.field(.version)
        writer.integer(version)
        writer.field(.deleted)
        writer.bool(deleted)
        if let row {
            writer.field(.row)
            try SyncValue.write(row: row, to: &writer)
        }
        writer.raw("}")
    }

    /// Reads the state through its wire form.
    public init(from decoder: any Decoder) throws { try self.init(wireDecoder: decoder) }

    /// Writes the state in its wire form.
    public func encode(to encoder: any Encoder) throws { try encode(wireEncoder: encoder) }
}

extension SyncMutationResult {
    /// As a client reads it.
    public static let wireContext = "a result"

    /// Reads a result.
    public init(json: JSONValue, context: String) throws {
        try self.init(json: json, describingContext: { context })
    }

    /// Reads a result, its context worked out only for an error message.
    init(json: JSONValue, describingContext: @escaping @Sendable () -> String) throws {
        let fields = try WireFields(json, describingContext: describingContext)
        let name = try fields.string(.status)
        guard let status = Status(rawValue: name) else {
            throw WireFormatError(
                message:
                    "\(JSONWriter.quoted(WireName.status.string)) of \(fields.context) is \(JSONWriter.quoted(name)), "
                    + "not applied, conflict, rejected or duplicate")
        }
        self.init(
            seq: try fields.integer(.seq), status: status,
            version: fields.optional(.version) == nil ? nil : try fields.integer(.version),
            current: try fields.optional(.current).map {
                try SyncCurrentRow(json: $0, context: "\"current\" of \(fields.context)")
            },
            error: fields.optional(.error) == nil ? nil : try fields.string(.error))
    }

    /// Writes a result: the members its status has.
    public func write(to writer: inout JSONWriter) throws {
        Self.writeHead(seq: seq, status: status, to: &writer)
        if let version {
            writer.field(.version)
            writer.integer(version)
        }
        if let current {
            writer.field(.current)
            try current.write(to: &writer)
        }
        if let error {
            writer.field(.error)
            writer.string(error)
        }
        writer.raw("}")
    }

    /// `{"seq":3,"status":"applied"`.
    static func writeHead(seq: Int64, status: Status, to writer: inout JSONWriter) {
        writer.raw("{")
        writer.field(.seq)
        writer.integer(seq)
        writer.field(.status)
        writer.string(status.rawValue)
    }

    /// Reads the result through its wire form.
    public init(from decoder: any Decoder) throws { try self.init(wireDecoder: decoder) }

    /// Writes the result in its wire form.
    public func encode(to encoder: any Encoder) throws { try encode(wireEncoder: encoder) }
}

extension PostDataResponse {
    /// As a client reads it.
    public static let wireContext = "the post-data answer"

    /// Reads an answer.
    public init(json: JSONValue, context: String) throws {
        self.init(
            results: try elements(
                .results, of: try WireFields(json, context: context), each: "result",
                read: SyncMutationResult.init(json:describingContext:)))
    }

    /// Writes an answer.
    public func write(to writer: inout JSONWriter) throws {
        writer.raw("{")
        writer.field(.results)
        try writer.array(results)
        writer.raw("}")
    }

    /// Writes an answer from the outcomes a store decided, one per seq, in order; a conflict's
    /// row is copied as the store keeps it.
    public static func write(seqs: [Int64], outcomes: [SyncUploadOutcome], to writer: inout JSONWriter) {
        writer.reserve(16 + 48 * outcomes.count)
        writer.raw("{")
        writer.field(.results)
        writer.raw("[")
        for (index, (seq, outcome)) in zip(seqs, outcomes).enumerated() {
            if index > 0 { writer.raw(",") }
            outcome.write(seq: seq, to: &writer)
        }
        writer.raw("]}")
    }

    /// Reads the answer through its wire form.
    public init(from decoder: any Decoder) throws { try self.init(wireDecoder: decoder) }

    /// Writes the answer in its wire form.
    public func encode(to encoder: any Encoder) throws { try encode(wireEncoder: encoder) }
}
