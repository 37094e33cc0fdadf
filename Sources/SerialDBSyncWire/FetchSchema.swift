/// `POST /v1/fetch-schema`: the current definition of one table.
public struct FetchSchemaRequest: Sendable, Equatable, WireCodable {
    /// The table's name.
    public var table: String

    /// Creates a request.
    public init(table: String) {
        self.table = table
    }
}

/// The answer to ``FetchSchemaRequest``.
public struct FetchSchemaResponse: Sendable, Equatable, WireCodable {
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
}
