/// `POST /v1/fetch-schema`: the current definition of one table.
public struct FetchSchemaRequest: Sendable, Codable, Equatable {
    /// The table's name.
    public var table: String

    /// Creates a request.
    public init(table: String) {
        self.table = table
    }
}

/// The answer to ``FetchSchemaRequest``.
public struct FetchSchemaResponse: Sendable, Codable, Equatable {
    /// The table's name.
    public var table: String
    /// The version of this definition.
    public var structVersion: Int64
    /// `CREATE TABLE ...; CREATE INDEX ...` statements for this table.
    public var schema: String
    /// The table's name before the server renamed it (`renamed_from`), or `nil`: a device that
    /// syncs the table under that name renames it, keeping its rows and sync state.
    public var renamedFrom: String?
    /// Columns the server renamed (`renamed_columns`): new name → old name; empty when none.
    public var renamedColumns: [String: String]

    /// Creates a response.
    public init(
        table: String, structVersion: Int64, schema: String, renamedFrom: String? = nil,
        renamedColumns: [String: String] = [:]
    ) {
        self.table = table
        self.structVersion = structVersion
        self.schema = schema
        self.renamedFrom = renamedFrom
        self.renamedColumns = renamedColumns
    }

    enum CodingKeys: String, CodingKey {
        case table
        case structVersion = "struct_version"
        case schema
        case renamedFrom = "renamed_from"
        case renamedColumns = "renamed_columns"
    }

    /// Reads the answer; the rename fields are optional.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            table: try container.decode(String.self, forKey: .table),
            structVersion: try container.decode(Int64.self, forKey: .structVersion),
            schema: try container.decode(String.self, forKey: .schema),
            renamedFrom: try container.decodeIfPresent(String.self, forKey: .renamedFrom),
            renamedColumns: try container.decodeIfPresent([String: String].self, forKey: .renamedColumns) ?? [:])
    }
}
