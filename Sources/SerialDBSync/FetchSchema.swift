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

    /// Creates a response.
    public init(table: String, structVersion: Int64, schema: String) {
        self.table = table
        self.structVersion = structVersion
        self.schema = schema
    }

    enum CodingKeys: String, CodingKey {
        case table
        case structVersion = "struct_version"
        case schema
    }
}
