/// The name of one member of a protocol message (`"struct_version"`), spelled here once for
/// every reader and writer of the protocol, client and server alike.
///
/// Writers copy it as bytes (``JSONWriter/field(_:)``); readers look members up by it
/// (``WireFields``).
public struct WireName: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The name as a static string, for the writer.
    public let text: StaticString

    /// A name from a literal.
    public init(stringLiteral text: StaticString) {
        self.text = text
    }

    /// The name as a string.
    public var string: String { text.description }

    /// The name.
    public var description: String { string }

    /// Whether both spell the same name.
    public static func == (lhs: WireName, rhs: WireName) -> Bool { lhs.string == rhs.string }

    /// Hashes the spelling.
    public func hash(into hasher: inout Hasher) { hasher.combine(string) }
}

extension WireName {
    /// A table's name, in every call.
    public static let table: WireName = "table"
    /// The list of tables of check-update, both ways.
    public static let tables: WireName = "tables"
    /// A table definition's version.
    public static let structVersion: WireName = "struct_version"
    /// A version: a table's cursor, a change's version, a page's new cursor, an applied result's version.
    public static let version: WireName = "version"
    /// The account a token belongs to (check-update's answer).
    public static let account: WireName = "account"
    /// A table's scope, `account` or `global`.
    public static let scope: WireName = "scope"
    /// The account that owns a table's rows, empty for a global table.
    public static let owner: WireName = "owner"
    /// Whether the client lacks the table's definition.
    public static let schemaChanged: WireName = "schema_changed"
    /// Whether the client must fetch the table's rows.
    public static let dataChanged: WireName = "data_changed"
    /// The tombstone purge floor.
    public static let floor: WireName = "floor"
    /// The table's definition as SQL (fetch-schema).
    public static let schema: WireName = "schema"
    /// A table's former name (fetch-schema).
    public static let renamedFrom: WireName = "renamed_from"
    /// Renamed columns, new name → old name (fetch-schema).
    public static let renamedColumns: WireName = "renamed_columns"
    /// fetch-data's cursor.
    public static let since: WireName = "since"
    /// fetch-data's page size.
    public static let limit: WireName = "limit"
    /// fetch-data's mark of a page of a resync.
    public static let resyncing: WireName = "resyncing"
    /// fetch-data's changes.
    public static let changes: WireName = "changes"
    /// Whether a change is a tombstone.
    public static let deleted: WireName = "deleted"
    /// A row object: every column, or the key of a tombstone.
    public static let row: WireName = "row"
    /// Whether more changes follow the page.
    public static let hasMore: WireName = "has_more"
    /// Whether the client must fetch the table again from 0.
    public static let resync: WireName = "resync"
    /// post-data's device id.
    public static let clientID: WireName = "client_id"
    /// post-data's mutations.
    public static let mutations: WireName = "mutations"
    /// A mutation's sequence number, and its result's.
    public static let seq: WireName = "seq"
    /// A mutation's operation, `upsert` or `delete`.
    public static let op: WireName = "op"
    /// A delete's key object.
    public static let key: WireName = "key"
    /// The version the client last saw for a key.
    public static let baseVersion: WireName = "base_version"
    /// post-data's results.
    public static let results: WireName = "results"
    /// A result's status.
    public static let status: WireName = "status"
    /// A conflict's current state of the key.
    public static let current: WireName = "current"
    /// A rejection's reason; the error body's object.
    public static let error: WireName = "error"
    /// The error body's code.
    public static let code: WireName = "code"
    /// The error body's message.
    public static let message: WireName = "message"
    /// A BLOB's only member.
    public static let base64: WireName = "base64"
}
