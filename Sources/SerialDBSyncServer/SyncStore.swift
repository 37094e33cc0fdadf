import Foundation
// The store's protocol speaks in the wire's types (changes, outcomes): whoever imports the server
// names them without importing the protocol module too.
@_exported import SerialDBSyncWire

/// Where a sync server keeps rows, versions, tombstones and the results of uploads.
///
/// The HTTP layer and the protocol (``SyncService``) know nothing of how a store works; a store
/// knows nothing of HTTP or JSON requests. Rows reach the store already validated, as canonical
/// keys and JSON text, so a store only keeps and orders them. ``SQLiteSyncStore`` is the
/// embedded default.
///
/// What every store guarantees:
/// - one server-wide version counter, advanced inside the writing transaction, so that commit
///   order is version order: once ``changes(table:owner:since:limit:)`` returned a page ending
///   at version V, no change with a version ≤ V can commit later;
/// - ``apply(account:clientID:mutations:)`` runs in one transaction, and remembers each result
///   by (account, client id, seq) in that same transaction: a repeated seq returns its first
///   result and changes nothing, across restarts; and once ``purgeResults(olderThan:)`` dropped
///   it, a seq at or below the highest one answered for its client is a `duplicate` (the rule both stores follow is `SyncUploadRule`);
/// - a delete leaves a tombstone until ``purgeTombstones(through:)`` removes it and raises
///   the purge floor;
/// - no two keys of one owner in one table hold the same ``SyncUniqueValue``: an upsert that
///   would is answered `rejected` with SQLite's message;
/// - the stored rows of a table are in the definition last adopted for it
///   (``adoptDefinition(table:schema:renamedFrom:carryOver:)``).
public protocol SyncStore: Sendable {
    /// The highest version of each (table, owner) pair, 0 for one with no rows.
    func latestVersions(of tables: [(table: String, owner: String)]) throws -> [Int64]

    /// The changes of one table and owner with a version above `since`, in ascending version
    /// order, at most `limit` of them, and no more than fit in `maximumBytes` of
    /// `SyncEncodedChange.wireSize` (but always the first, however large); each key appears once,
    /// in its latest state. `hasMore` says whether changes were left out. A store reads no more
    /// than the page (and the size, not the value, of the change after it). The page carries
    /// the purge floor read in the same snapshot; whether the client must resync is the
    /// caller's decision (``SyncChangePage/mustResync(since:resyncing:)``).
    func changes(table: String, owner: String, since: Int64, limit: Int, maximumBytes: Int) throws -> SyncChangePage

    /// Applies the mutations of one upload in one transaction and returns one result each, in order.
    /// A `clientID` of `nil` records nothing (administrative loads, not client uploads).
    func apply(account: String, clientID: String?, mutations: [SyncStoreMutation]) throws -> [SyncUploadOutcome]

    /// Removes the tombstones with a version ≤ `version` and raises the purge floor to it
    /// (never above the current version, never lower than before).
    /// - Returns: the number of tombstones removed and the new floor.
    func purgeTombstones(through version: Int64) throws -> (purged: Int, floor: Int64)

    /// The tombstone purge floor: 0 until a purge.
    func purgeFloor() throws -> Int64

    /// Drops the upload results recorded more than `retention` seconds ago by the store's
    /// clock. The highest seq answered for each (account, client id) stays, so a later retry
    /// of a dropped seq is answered `SyncUploadOutcome.duplicate`.
    /// - Returns: the number of results dropped.
    func purgeResults(olderThan retention: TimeInterval) throws -> Int

    /// Makes `schema` the definition of `table`'s stored rows, once: when the store last
    /// adopted another schema for it (or none), in one transaction it moves the rows of
    /// `renamedFrom` to `table` (when `table` had no adopted definition yet), hands every
    /// stored row of `table` to `carryOver`, replaces them by what it returns (keys, rows and
    /// unique values may all change; versions stay), and records `schema`. When `carryOver`
    /// throws, nothing changes and the error is rethrown.
    func adoptDefinition(
        table: String, schema: String, renamedFrom: String?, carryOver: ([SyncStoredRow]) throws -> [SyncStoredRow]
    ) throws

    /// The server-wide version counter: the highest version given so far (0 for a new store).
    /// What the health check asks: a cheap read of the store's own state.
    func currentVersion() throws -> Int64

    /// Per table, its live rows, tombstones and highest version, and the number of accounts
    /// holding rows: what the status page shows. It counts every stored row, so it costs a
    /// scan of the store.
    func summary() throws -> SyncStoreSummary

    /// Waits for the work in progress and closes the store; later calls throw.
    func close() throws
}

extension SyncStore {
    /// The changes above `since`, at most `limit` of them, whatever their size.
    public func changes(table: String, owner: String, since: Int64, limit: Int) throws -> SyncChangePage {
        try changes(table: table, owner: owner, since: since, limit: limit, maximumBytes: .max)
    }
}

/// A row as a store keeps it, for ``SyncStore/adoptDefinition(table:schema:renamedFrom:carryOver:)``.
public struct SyncStoredRow: Sendable, Equatable {
    /// The account that owns the row (empty for a global table).
    public var owner: String
    /// The canonical key.
    public var key: String
    /// The version of the row's latest change.
    public var version: Int64
    /// Whether the row is a tombstone (`rowJSON` then holds only the key columns).
    public var deleted: Bool
    /// The row as a JSON object, in the wire encoding.
    public var rowJSON: String
    /// The row's values under its table's UNIQUE constraints (read back empty; set by `carryOver`).
    public var uniqueValues: [SyncUniqueValue]

    /// Creates a stored row.
    public init(
        owner: String, key: String, version: Int64, deleted: Bool, rowJSON: String, uniqueValues: [SyncUniqueValue] = []
    ) {
        self.owner = owner
        self.key = key
        self.version = version
        self.deleted = deleted
        self.rowJSON = rowJSON
        self.uniqueValues = uniqueValues
    }
}

/// One page of changes.
public struct SyncChangePage: Sendable, Equatable {
    /// The changes, in ascending version order.
    public var changes: [SyncEncodedChange]
    /// Whether more changes follow the last one.
    public var hasMore: Bool
    /// The purge floor when the page was read (from the same snapshot): 0 until a purge. A
    /// cursor above 0 and below it may have missed purged tombstones.
    public var floor: Int64

    /// Creates a page.
    public init(changes: [SyncEncodedChange], hasMore: Bool, floor: Int64) {
        self.changes = changes
        self.hasMore = hasMore
        self.floor = floor
    }

    /// Whether a client whose cursor is `since` must start again from 0 (a purge took
    /// tombstones it has not seen), unless it is already doing so (`resyncing`).
    public func mustResync(since: Int64, resyncing: Bool) -> Bool {
        !resyncing && since > 0 && since < floor
    }
}

/// One mutation of an upload, validated against the table's declaration.
public struct SyncStoreMutation: Sendable, Equatable {
    /// What the mutation does.
    public enum Action: Sendable, Equatable {
        /// Insert or replace the row under `key` (`keyJSON`: the key columns as a JSON object).
        case upsert(key: String, keyJSON: String, rowJSON: String)
        /// Delete `key`, leaving a tombstone whose row is `keyJSON`.
        case delete(key: String, keyJSON: String)
        /// Refused by validation: recorded under its seq with this message, nothing changes.
        case reject(message: String)
    }

    /// The client's sequence number, unique per client id.
    public var seq: Int64
    /// The table's name.
    public var table: String
    /// The account that owns the row (empty for a global table).
    public var owner: String
    /// What to do.
    public var action: Action
    /// The version the client last saw for the key (0: it believes the key is new); `nil`
    /// writes whatever the current version is (administrative loads, never a client's upload).
    public var baseVersion: Int64?
    /// Whether the table declares UNIQUE constraints besides its key: the store then keeps the
    /// values of each of its rows and refuses a row whose values another key of the owner holds.
    public var checksUniqueness: Bool
    /// The upserted row's values under each UNIQUE constraint (none for a delete).
    public var uniqueValues: [SyncUniqueValue]

    /// Creates a mutation.
    public init(
        seq: Int64, table: String, owner: String, action: Action, baseVersion: Int64?, checksUniqueness: Bool = false,
        uniqueValues: [SyncUniqueValue] = []
    ) {
        self.seq = seq
        self.table = table
        self.owner = owner
        self.action = action
        self.baseVersion = baseVersion
        self.checksUniqueness = checksUniqueness
        self.uniqueValues = uniqueValues
    }
}

/// A row's values under one UNIQUE constraint of its table, in a text that is equal exactly
/// when SQLite finds the values equal (collation and all). Two keys of one owner never hold
/// the same one.
public struct SyncUniqueValue: Sendable, Hashable {
    /// The canonical text.
    public var value: String
    /// The constraint's columns (`item.email`), for the rejection message.
    public var constraint: String

    /// Creates a unique value.
    public init(value: String, constraint: String) {
        self.value = value
        self.constraint = constraint
    }

    /// What a row that takes a held value is answered: SQLite's own message.
    var rejection: SyncUploadOutcome { .rejected(message: "UNIQUE constraint failed: \(constraint)") }
}

extension SyncUploadOutcome {
    /// The outcome a store recorded, or ``SyncServerError/Code/invalidStore`` for a record it
    /// cannot have written.
    static func stored(_ record: Record) throws -> SyncUploadOutcome {
        do {
            return try SyncUploadOutcome(record: record)
        } catch {
            throw SyncServerError(.invalidStore, error.message)
        }
    }
}

/// What a store holds, counted (``SyncStore/summary()``): never a row's value.
public struct SyncStoreSummary: Sendable, Equatable {
    /// One table's counts.
    public struct Table: Sendable, Equatable {
        /// Rows that are not deleted, over every owner.
        public var rows: Int
        /// Tombstones not purged yet.
        public var tombstones: Int
        /// The highest version of its rows and tombstones (0 when it has none).
        public var highestVersion: Int64

        /// Creates the counts of one table.
        public init(rows: Int, tombstones: Int, highestVersion: Int64) {
            self.rows = rows
            self.tombstones = tombstones
            self.highestVersion = highestVersion
        }
    }

    /// The tables holding rows or tombstones, by name.
    public var tables: [String: Table]
    /// The accounts owning at least one row or tombstone (of account-scoped tables).
    public var accounts: Int

    /// Creates a summary.
    public init(tables: [String: Table], accounts: Int) {
        self.tables = tables
        self.accounts = accounts
    }
}
