/// `POST /v1/fetch-data`: one page of the changes of a table after a version.
public struct FetchDataRequest: Sendable, Equatable, WireCodable {
    /// The table's name.
    public var table: String
    /// The cursor: changes with a higher version are returned.
    public var since: Int64
    /// The most changes wanted in the page (the server caps it at ``SyncLimits/maximumPageSize``). A page also stops
    /// before it would pass ``SyncLimits/maximumPageBytes`` of JSON, so it may hold fewer (but at least one) with
    /// ``FetchDataResponse/hasMore`` set.
    public var limit: Int
    /// The page belongs to a resync (`"resyncing": true`, sent only when true): the server
    /// never answers "resync" to it, whatever its purge floor, so a resync pages through a
    /// table of any size.
    public var resyncing: Bool

    /// Creates a request.
    public init(table: String, since: Int64, limit: Int, resyncing: Bool = false) {
        self.table = table
        self.since = since
        self.limit = limit
        self.resyncing = resyncing
    }
}

/// One changed row: its latest state, or a tombstone.
public struct SyncChange: Sendable, Equatable, WireCodable {
    /// The server version of this change.
    public var version: Int64
    /// Whether the row was deleted; `row` then holds only the key.
    public var deleted: Bool
    /// The row's columns (all of them, or the key for a tombstone).
    public var row: [String: SyncValue]

    /// Creates a change.
    public init(version: Int64, deleted: Bool, row: [String: SyncValue]) {
        self.version = version
        self.deleted = deleted
        self.row = row
    }
}

/// The answer to ``FetchDataRequest``.
public struct FetchDataResponse: Sendable, Equatable, WireCodable {
    /// The table's name.
    public var table: String
    /// Changes in ascending version order, each key at most once.
    public var changes: [SyncChange]
    /// The cursor to store once the page is applied.
    public var version: Int64
    /// Whether more changes follow: fetch again from ``version``. A page that holds fewer
    /// changes than asked for may still have more after it (the server stops a page at 4 MiB).
    public var hasMore: Bool
    /// The cursor is below the tombstone purge floor: fetch again from 0 and treat local rows
    /// absent from the result as deleted.
    public var resync: Bool
    /// The table's tombstone purge floor (0 until a purge), or `nil` from a server that
    /// predates it. A server that sends it honours ``FetchDataRequest/resyncing``.
    public var floor: Int64?

    /// Creates a response.
    public init(
        table: String, changes: [SyncChange], version: Int64, hasMore: Bool, resync: Bool, floor: Int64? = nil
    ) {
        self.table = table
        self.changes = changes
        self.version = version
        self.hasMore = hasMore
        self.resync = resync
        self.floor = floor
    }
}
