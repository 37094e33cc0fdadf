/// `POST /v1/check-update`: the tables the client has, with their versions.
public struct CheckUpdateRequest: Sendable, Equatable, WireCodable {
    /// One table the client syncs and where it stands.
    public struct Table: Sendable, Equatable, WireCodable {
        /// The table's name.
        public var table: String
        /// The definition the client has (`TableVersion.StructVersion`).
        public var structVersion: Int64
        /// The highest server version applied (`TableVersion.Version`).
        public var version: Int64

        /// Creates an entry.
        public init(table: String, structVersion: Int64, version: Int64) {
            self.table = table
            self.structVersion = structVersion
            self.version = version
        }

    }

    /// The tables listed in `TableVersion`.
    public var tables: [Table]

    /// Creates a request.
    public init(tables: [Table]) {
        self.tables = tables
    }
}

/// The answer to ``CheckUpdateRequest``: every table the server syncs.
public struct CheckUpdateResponse: Sendable, Equatable, WireCodable {
    /// One table of the server and what changed for this client.
    public struct Table: Sendable, Equatable, WireCodable {
        /// The table's name.
        public var table: String
        /// `account` (each account its own rows) or `global` (read by all, written by none).
        public var scope: String
        /// The account for an `account` table, empty for a `global` one.
        public var owner: String
        /// The server's definition version.
        public var structVersion: Int64
        /// The server's highest version for this table (as this account sees it).
        public var version: Int64
        /// The client does not have this definition: fetch it with FetchSchema.
        public var schemaChanged: Bool
        /// There are rows newer than the client's version, or a purge overtook its cursor:
        /// fetch them with FetchData.
        public var dataChanged: Bool
        /// The table's tombstone purge floor: 0 until a purge (0 too from a server that
        /// does not send it).
        public var floor: Int64

        /// Creates an entry.
        public init(
            table: String, scope: String, owner: String, structVersion: Int64, version: Int64, schemaChanged: Bool,
            dataChanged: Bool, floor: Int64 = 0
        ) {
            self.table = table
            self.scope = scope
            self.owner = owner
            self.structVersion = structVersion
            self.version = version
            self.schemaChanged = schemaChanged
            self.dataChanged = dataChanged
            self.floor = floor
        }

    }

    /// The account the token belongs to.
    public var account: String
    /// Every table the server syncs.
    public var tables: [Table]

    /// Creates a response.
    public init(account: String, tables: [Table]) {
        self.account = account
        self.tables = tables
    }
}
