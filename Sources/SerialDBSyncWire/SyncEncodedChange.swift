/// One change as a server keeps and serves it: its row already in the wire encoding, as JSON
/// text, so that a fetch-data page copies stored rows instead of decoding and encoding them.
/// A client reads the same change as a ``SyncChange``.
public struct SyncEncodedChange: Sendable, Equatable {
    /// The version the change was given.
    public var version: Int64
    /// Whether the key was deleted; `rowJSON` then holds only the key columns.
    public var deleted: Bool
    /// The row (or the key of a tombstone) as a JSON object, in the wire encoding.
    public var rowJSON: String

    /// Creates a change.
    public init(version: Int64, deleted: Bool, rowJSON: String) {
        self.version = version
        self.deleted = deleted
        self.rowJSON = rowJSON
    }

    /// The most bytes of JSON around a row in a fetch-data page:
    /// `{"version":9223372036854775807,"deleted":false,"row":` and `}` and a comma.
    public static let wireOverhead = 55

    /// The bytes this change takes in a fetch-data page, at most: its row's JSON and
    /// ``wireOverhead``; what a page's byte bound (``SyncLimits/maximumPageBytes``) counts.
    public var wireSize: Int { rowJSON.utf8.count + Self.wireOverhead }
}
