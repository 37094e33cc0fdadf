import Foundation
import SerialDBSyncWire

/// The sync store for deployments that outgrow one machine: rows, versions, tombstones and
/// upload results in one PostgreSQL database, through libpq, shared by any number of
/// `serialdb-sync-server` processes.
///
/// The tables mirror ``SQLiteSyncStore``'s (`serialdb_sync_…`), created on first start and
/// versioned in `serialdb_sync_schema` so that a later release can upgrade them. Each process
/// keeps a small pool of connections, runs prepared statements with every value as a
/// parameter, and sends each upload in a handful of statements whatever its size (the rows
/// travel as array parameters).
///
/// Versions follow commit order across processes: every writing transaction first locks the
/// one row of `serialdb_sync_state` (`SELECT ... FOR UPDATE`) and advances its counter
/// (`UPDATE ... SET version = version + n RETURNING version`) before it commits, so a writer
/// holding lower versions has always committed before the next one takes higher ones, and a
/// fetch (`version > since ORDER BY version`, one statement, one snapshot) never returns a
/// cursor that a later commit could fall behind. A sequence would not do: a slow transaction
/// holding a lower number could commit after a reader moved past it.
///
/// A session that is lost (terminated, server restarted) is replaced by a new connection and
/// the work retried once when that is safe: always before COMMIT was sent (the transaction was
/// rolled back), and after it for uploads, whose results are remembered by
/// (account, client id, seq) in the same transaction, so a retry returns the first result
/// instead of applying twice. Otherwise the call throws ``PostgresError`` with libpq's message.
///
/// ```swift
/// let store = try PostgresSyncStore(url: "postgresql://sync@db.internal/sync", connections: 8)
/// let server = try SyncServer(configuration: configuration, store: store)
/// ```
public final class PostgresSyncStore: SyncStore {
    /// Connections each store keeps when the caller names no number.
    public static let defaultConnections = 4

    private let pool: PostgresConnectionPool
    /// The time each upload result is recorded at, and that ``purgeResults(olderThan:)`` counts from.
    private let clock: @Sendable () -> Date

    /// Connects to the database at `url`, and creates or upgrades the store's tables in it.
    ///
    /// - Parameters:
    ///   - url: a libpq connection URL (`postgresql://user:password@host:5432/database`) or
    ///     connection string (<https://www.postgresql.org/docs/15/libpq-connect.html#LIBPQ-CONNSTRING>).
    ///   - connections: the most connections this store opens at once (at least 1).
    ///   - clock: the time results are recorded at (the system clock; tests pass their own).
    /// - Throws: ``PostgresError`` when the database cannot be reached or refuses the schema;
    ///   ``SyncServerError/Code/invalidStore`` when a newer release wrote its tables.
    public init(
        url: String, connections: Int = PostgresSyncStore.defaultConnections,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        self.clock = clock
        pool = try PostgresConnectionPool(url: url, size: connections)
        try pool.withConnection { try PostgresSyncSchema.prepare($0) }
    }

    /// The highest version of each (table, owner) pair, 0 for one with no rows: one statement.
    public func latestVersions(of tables: [(table: String, owner: String)]) throws -> [Int64] {
        guard !tables.isEmpty else { return [] }
        let names = PostgresArray.text(tables.map(\.table))
        let owners = PostgresArray.text(tables.map(\.owner))
        return try withRetry { connection in
            let result = try connection.run(Self.latest, [names, owners])
            return try (0..<result.count).map { try result.int64($0, 0) ?? 0 }
        }
    }

    /// The changes of one table and owner above `since`, in version order, at most `limit` and
    /// `maximumBytes`: the purge floor and the page come from one statement, so from one
    /// snapshot, and the database sends the JSON of the page's rows only.
    public func changes(
        table: String, owner: String, since: Int64, limit: Int, maximumBytes: Int
    ) throws -> SyncChangePage {
        try withRetry { connection in
            let result = try connection.run(
                Self.page,
                [
                    table, owner, String(since), String(limit + 1), String(maximumBytes),
                    String(SyncEncodedChange.wireOverhead),
                ])
            let floor = result.count > 0 ? try result.int64(0, 0) ?? 0 : 0
            var changes: [SyncEncodedChange] = []
            changes.reserveCapacity(result.count)
            var hasMore = false
            for row in 0..<result.count {
                guard let version = try result.int64(row, 1) else { continue }
                // The change after the page: it exists, its JSON was not sent.
                guard let json = result.string(row, 3) else {
                    hasMore = true
                    continue
                }
                changes.append(
                    SyncEncodedChange(version: version, deleted: result.bool(row, 2) ?? false, rowJSON: json))
            }
            return SyncChangePage(changes: changes, hasMore: hasMore, floor: floor)
        }
    }

    /// Applies an upload in one transaction that holds the version counter's row lock; see ``SyncStore``.
    public func apply(account: String, clientID: String?, mutations: [SyncStoreMutation]) throws -> [SyncUploadOutcome]
    {
        // With a client id a retry after an unknown COMMIT outcome finds the results it stored;
        // without one (an administrative load) it could apply twice, so it is not retried.
        try withRetry(afterUnknownCommit: clientID != nil) { connection in
            try connection.transaction {
                try applyInTransaction(connection, account: account, clientID: clientID, mutations: mutations)
            }
        }
    }

    private func applyInTransaction(
        _ connection: PostgresConnection, account: String, clientID: String?, mutations: [SyncStoreMutation]
    ) throws -> [SyncUploadOutcome] {
        // The row lock orders this transaction's commit against every other writer's; the
        // client's mark comes with it, in the same round trip.
        let state = try connection.run(Self.lockForUpload, [account, clientID ?? ""])
        let start = try state.int64(0, 0) ?? 0
        // The highest seq answered to the client, nil when none was (a first seq may be 0).
        let highest = clientID == nil ? nil : try state.int64(0, 1)
        var version = start
        var remembered: [Int64: SyncUploadOutcome] = [:]
        // A result is recorded in the transaction that raises the mark to its seq or above, so
        // only seqs at or below the mark can have one: a new request's seqs need no lookup.
        let answered = mutations.map(\.seq).filter { SyncUploadRule.wasAnswered($0, highestAnswered: highest) }
        if let clientID, !answered.isEmpty {
            let found = try connection.run(Self.findApplied, [account, clientID, PostgresArray.bigint(answered)])
            for row in 0..<found.count {
                remembered[try found.int64(row, 0) ?? 0] = try Self.storedResult(found, row: row)
            }
        }
        let skipping = clientID == nil ? [:] : remembered
        var current = try currentState(connection, of: mutations, skipping: skipping)
        let stored = Set(current.keys)
        let unique =
            mutations.contains(where: \.checksUniqueness)
            ? try UniqueHolders(connection, of: mutations, skipping: skipping) : nil
        var written: [RowKey: SyncEncodedChange] = [:]
        var recorded: [(seq: Int64, result: SyncUploadOutcome)] = []
        var results: [SyncUploadOutcome] = []
        results.reserveCapacity(mutations.count)
        for mutation in mutations {
            if clientID != nil,
                let answer = SyncUploadRule.earlierAnswer(
                    remembered: remembered[mutation.seq], seq: mutation.seq, highestAnswered: highest)
            {
                results.append(answer)
                continue
            }
            let result: SyncUploadOutcome
            switch mutation.action {
            case .reject(let message):
                result = .rejected(message: message)
            case .upsert(let key, let keyJSON, let rowJSON):
                result = change(
                    mutation, key: key, keyJSON: keyJSON, deleted: false, rowJSON: rowJSON, version: &version,
                    current: &current, written: &written, unique: unique)
            case .delete(let key, let keyJSON):
                result = change(
                    mutation, key: key, keyJSON: keyJSON, deleted: true, rowJSON: keyJSON, version: &version,
                    current: &current, written: &written, unique: unique)
            }
            if clientID != nil {
                remembered[mutation.seq] = result
                recorded.append((mutation.seq, result))
            }
            results.append(result)
        }
        try write(written, stored: stored, on: connection)
        try unique?.write(on: connection)
        if let clientID, !recorded.isEmpty {
            try record(recorded, account: account, clientID: clientID, on: connection)
        }
        if let clientID, let top = mutations.map(\.seq).max(),
            !SyncUploadRule.wasAnswered(top, highestAnswered: highest)
        {
            try connection.run(Self.raiseHighest, [account, clientID, String(top)])
        }
        if version != start {
            let advanced = try connection.run(Self.advanceCounter, [String(version - start)]).int64(0, 0)
            guard advanced == version else {
                throw SyncServerError(
                    .invalidStore,
                    "the version counter moved from \(start) to \(advanced ?? 0) while its row was locked "
                        + "(expected \(version)); is another program writing serialdb_sync_state?")
            }
        }
        return results
    }

    /// Decides one row change against the key's state so far (stored, or written earlier in
    /// this upload) and, unless its base version is stale or another key of the owner holds one
    /// of its unique values, gives it the next version.
    private func change(
        _ mutation: SyncStoreMutation, key: String, keyJSON: String, deleted: Bool, rowJSON: String,
        version: inout Int64, current: inout [RowKey: SyncEncodedChange], written: inout [RowKey: SyncEncodedChange],
        unique: UniqueHolders?
    ) -> SyncUploadOutcome {
        let rowKey = RowKey(table: mutation.table, owner: mutation.owner, key: key)
        let now = current[rowKey]
        if let conflict = SyncUploadRule.conflict(baseVersion: mutation.baseVersion, current: now, keyJSON: keyJSON) {
            return conflict
        }
        if let unique, mutation.checksUniqueness {
            let values = deleted ? [] : mutation.uniqueValues
            if let taken = unique.firstTaken(of: values, by: rowKey) { return taken.rejection }
            unique.hold(values, by: rowKey)
        }
        version += 1
        let change = SyncEncodedChange(version: version, deleted: deleted, rowJSON: rowJSON)
        current[rowKey] = change
        written[rowKey] = change
        return .applied(version: version)
    }

    /// The stored state of every key the upload touches (except the mutations answered from
    /// `skipping`), in one statement.
    private func currentState(
        _ connection: PostgresConnection, of mutations: [SyncStoreMutation], skipping: [Int64: SyncUploadOutcome]
    ) throws -> [RowKey: SyncEncodedChange] {
        var keys: [RowKey] = []
        for mutation in mutations where skipping[mutation.seq] == nil {
            switch mutation.action {
            case .upsert(let key, _, _), .delete(let key, _):
                keys.append(RowKey(table: mutation.table, owner: mutation.owner, key: key))
            case .reject:
                break
            }
        }
        guard !keys.isEmpty else { return [:] }
        let found = try connection.run(
            Self.findCurrent,
            [
                PostgresArray.text(keys.map(\.table)), PostgresArray.text(keys.map(\.owner)),
                PostgresArray.text(keys.map(\.key)),
            ])
        var current: [RowKey: SyncEncodedChange] = [:]
        for row in 0..<found.count {
            let key = RowKey(
                table: found.string(row, 0) ?? "", owner: found.string(row, 1) ?? "", key: found.string(row, 2) ?? "")
            current[key] = SyncEncodedChange(
                version: try found.int64(row, 3) ?? 0, deleted: found.bool(row, 4) ?? false,
                rowJSON: found.string(row, 5) ?? "{}")
        }
        return current
    }

    /// Writes the final state of every key the upload changed: the keys not `stored` before
    /// with a plain INSERT, the others with an upsert, one statement each. An upsert costs
    /// PostgreSQL a speculative insertion per row (about 1.7 times a plain insert); no other
    /// writer can add one of the new keys meanwhile, since all of them hold the counter's row lock.
    private func write(
        _ written: [RowKey: SyncEncodedChange], stored: Set<RowKey>, on connection: PostgresConnection
    ) throws {
        var new: [(key: RowKey, value: SyncEncodedChange)] = []
        var changed: [(key: RowKey, value: SyncEncodedChange)] = []
        for row in written {
            if stored.contains(row.key) { changed.append(row) } else { new.append(row) }
        }
        for (statement, rows) in [(Self.insertRows, new), (Self.writeRows, changed)] where !rows.isEmpty {
            try connection.run(
                statement,
                [
                    PostgresArray.text(rows.map(\.key.table)), PostgresArray.text(rows.map(\.key.owner)),
                    PostgresArray.text(rows.map(\.key.key)), PostgresArray.bigint(rows.map(\.value.version)),
                    PostgresArray.boolean(rows.map(\.value.deleted)), PostgresArray.text(rows.map(\.value.rowJSON)),
                ])
        }
    }

    /// Remembers each result under its seq, in one statement.
    private func record(
        _ recorded: [(seq: Int64, result: SyncUploadOutcome)], account: String, clientID: String,
        on connection: PostgresConnection
    ) throws {
        var statuses: [String?] = []
        var versions: [Int64?] = []
        var deleted: [Bool?] = []
        var rows: [String?] = []
        var messages: [String?] = []
        for (_, result) in recorded {
            guard let record = result.record else { preconditionFailure("a duplicate is answered, never recorded") }
            statuses.append(record.status)
            versions.append(record.version)
            deleted.append(record.deleted)
            rows.append(record.row)
            messages.append(record.message)
        }
        try connection.run(
            Self.recordApplied,
            [
                account, clientID, PostgresArray.bigint(recorded.map(\.seq)), PostgresArray.text(statuses),
                PostgresArray.bigint(versions), PostgresArray.boolean(deleted), PostgresArray.text(rows),
                PostgresArray.text(messages), String(ResultClock.seconds(clock())),
            ])
    }

    /// A remembered result, from columns 1... (status, version, deleted, row, message).
    private static func storedResult(_ found: PostgresResult, row: Int) throws -> SyncUploadOutcome {
        try SyncUploadOutcome.stored(
            SyncUploadOutcome.Record(
                status: found.string(row, 1) ?? "", version: try found.int64(row, 2), deleted: found.bool(row, 3),
                row: found.string(row, 4), message: found.string(row, 5)))
    }

    /// Drops the results recorded more than `retention` seconds ago; see ``SyncStore``.
    public func purgeResults(olderThan retention: TimeInterval) throws -> Int {
        let cutoff = ResultClock.seconds(clock()) - ResultClock.seconds(retention)
        return try withRetry { connection in try connection.run(Self.purgeResults, [String(cutoff)]).changedRows }
    }

    /// The purge floor.
    public func purgeFloor() throws -> Int64 {
        try withRetry { connection in try connection.run(Self.purgeFloor, []).int64(0, 0) ?? 0 }
    }

    /// The version counter.
    public func currentVersion() throws -> Int64 {
        try withRetry { connection in try connection.run(Self.currentVersion, []).int64(0, 0) ?? 0 }
    }

    /// Counts the rows, tombstones and owners of every table, in one statement (one snapshot).
    public func summary() throws -> SyncStoreSummary {
        try withRetry { connection in
            let result = try connection.run(Self.summary, [])
            var tables: [String: SyncStoreSummary.Table] = [:]
            var accounts = 0
            for row in 0..<result.count {
                accounts = Int(try result.int64(row, 4) ?? 0)
                guard let name = result.string(row, 0) else { continue }
                tables[name] = SyncStoreSummary.Table(
                    rows: Int(try result.int64(row, 1) ?? 0), tombstones: Int(try result.int64(row, 2) ?? 0),
                    highestVersion: try result.int64(row, 3) ?? 0)
            }
            return SyncStoreSummary(tables: tables, accounts: accounts)
        }
    }

    /// Carries the rows of `table` into `schema` in one transaction that holds the version
    /// counter's row lock, so no upload and no other starting server runs meanwhile; see ``SyncStore``.
    public func adoptDefinition(
        table: String, schema: String, renamedFrom: String?, carryOver: ([SyncStoredRow]) throws -> [SyncStoredRow]
    ) throws {
        try withRetry { connection in
            try connection.transaction {
                _ = try connection.run(Self.lockCounter, [])
                let found = try connection.run(Self.findDefinition, [table])
                let recorded = found.count > 0 ? found.string(0, 0) : nil
                guard recorded != schema else { return }
                if let renamedFrom, recorded == nil {
                    try connection.run(Self.renameRows, [table, renamedFrom])
                    try connection.run(Self.dropTableUnique, [renamedFrom])
                    try connection.run(Self.forgetDefinition, [renamedFrom])
                }
                let rows = try connection.run(Self.tableRows, [table])
                var stored: [SyncStoredRow] = []
                stored.reserveCapacity(rows.count)
                for row in 0..<rows.count {
                    stored.append(
                        SyncStoredRow(
                            owner: rows.string(row, 0) ?? "", key: rows.string(row, 1) ?? "",
                            version: try rows.int64(row, 2) ?? 0, deleted: rows.bool(row, 3) ?? false,
                            rowJSON: rows.string(row, 4) ?? "{}"))
                }
                let carried = try carryOver(stored)
                try connection.run(Self.dropTableRows, [table])
                try connection.run(Self.dropTableUnique, [table])
                // Every row of the table was just deleted: all of them are new keys.
                try write(
                    Dictionary(
                        carried.map {
                            (
                                RowKey(table: table, owner: $0.owner, key: $0.key),
                                SyncEncodedChange(version: $0.version, deleted: $0.deleted, rowJSON: $0.rowJSON)
                            )
                        }, uniquingKeysWith: { first, _ in first }), stored: [], on: connection)
                let held = carried.flatMap { row in row.uniqueValues.map { (row, $0.value) } }
                if !held.isEmpty {
                    try connection.run(
                        Self.holdUnique,
                        [
                            PostgresArray.text(held.map { _ in table }), PostgresArray.text(held.map(\.0.owner)),
                            PostgresArray.text(held.map(\.1)), PostgresArray.text(held.map(\.0.key)),
                        ])
                }
                try connection.run(Self.recordDefinition, [table, schema])
            }
        }
    }

    /// Removes tombstones up to `version` (capped at the current version) and raises the floor,
    /// holding the counter's row lock. Retrying it is harmless: the floor only goes up.
    public func purgeTombstones(through version: Int64) throws -> (purged: Int, floor: Int64) {
        try withRetry { connection in
            try connection.transaction {
                let state = try connection.run(Self.lockState, [])
                let current = try state.int64(0, 0) ?? 0
                let oldFloor = try state.int64(0, 1) ?? 0
                let floor = max(oldFloor, min(version, current))
                let purged = try connection.run(Self.purge, [String(floor)]).changedRows
                try connection.run(Self.raiseFloor, [String(floor)])
                return (purged, floor)
            }
        }
    }

    /// Waits for the calls in progress and closes every connection; later calls throw.
    public func close() throws {
        pool.close()
    }

    /// Runs `body` with a pooled connection; when the session turns out to be lost, drops the
    /// idle connections (a terminated or restarted server took them all) and runs it once more
    /// on a new one, unless COMMIT was on its way and `afterUnknownCommit` is false.
    private func withRetry<T>(afterUnknownCommit: Bool = true, _ body: (PostgresConnection) throws -> T) throws -> T {
        do {
            return try pool.withConnection(body)
        } catch let error as PostgresError
            where error.connectionLost && (afterUnknownCommit || !error.commitOutcomeUnknown)
        {
            pool.dropIdleConnections()
            return try pool.withConnection(body)
        }
    }
}

/// A stored row's identity.
private struct RowKey: Hashable {
    let table: String
    let owner: String
    let key: String
}

/// Which key holds each unique value an upload involves, read in one statement before the
/// upload is decided and written back in two after, so that uniqueness costs no round trip
/// per row. The counter's row lock keeps every other writer out meanwhile.
private final class UniqueHolders {
    /// A value's place. The value is kept as bytes: Swift compares strings by canonical
    /// equivalence, the stores (and SQLite's collations) by bytes.
    private struct Slot: Hashable {
        let table: String
        let owner: String
        let value: [UInt8]

        init(table: String, owner: String, value: String) {
            self.table = table
            self.owner = owner
            self.value = Array(value.utf8)
        }
    }

    /// The key holding each slot, as bytes.
    private var holder: [Slot: [UInt8]] = [:]
    /// Every value each key the upload touches holds (complete for those keys).
    private var held: [RowKey: [String]] = [:]
    private var touched = Set<RowKey>()

    init(_ connection: PostgresConnection, of mutations: [SyncStoreMutation], skipping: [Int64: SyncUploadOutcome])
        throws
    {
        var slots: [(table: String, owner: String, value: String)] = []
        var keys: [RowKey] = []
        for mutation in mutations where mutation.checksUniqueness && skipping[mutation.seq] == nil {
            switch mutation.action {
            case .upsert(let key, _, _), .delete(let key, _):
                keys.append(RowKey(table: mutation.table, owner: mutation.owner, key: key))
                slots += mutation.uniqueValues.map { (mutation.table, mutation.owner, $0.value) }
            case .reject:
                break
            }
        }
        let found = try connection.run(
            PostgresSyncStore.findUnique,
            [
                PostgresArray.text(slots.map(\.table)), PostgresArray.text(slots.map(\.owner)),
                PostgresArray.text(slots.map(\.value)), PostgresArray.text(keys.map(\.table)),
                PostgresArray.text(keys.map(\.owner)), PostgresArray.text(keys.map(\.key)),
            ])
        for row in 0..<found.count {
            let table = found.string(row, 0) ?? ""
            let owner = found.string(row, 1) ?? ""
            let value = found.string(row, 2) ?? ""
            let key = found.string(row, 3) ?? ""
            holder[Slot(table: table, owner: owner, value: value)] = Array(key.utf8)
            held[RowKey(table: table, owner: owner, key: key), default: []].append(value)
        }
    }

    /// The first of `values` another key holds.
    func firstTaken(of values: [SyncUniqueValue], by key: RowKey) -> SyncUniqueValue? {
        values.first { value in
            holder[Slot(table: key.table, owner: key.owner, value: value.value)].map { !$0.elementsEqual(key.key.utf8) }
                ?? false
        }
    }

    /// Makes `values` (none for a delete) the ones `key` holds.
    func hold(_ values: [SyncUniqueValue], by key: RowKey) {
        for old in held[key] ?? [] {
            holder[Slot(table: key.table, owner: key.owner, value: old)] = nil
        }
        for value in values {
            holder[Slot(table: key.table, owner: key.owner, value: value.value)] = Array(key.key.utf8)
        }
        touched.insert(key)
        held[key] = values.map(\.value)
    }

    /// Replaces the stored values of every key the upload changed by the ones they hold now.
    func write(on connection: PostgresConnection) throws {
        guard !touched.isEmpty else { return }
        let touched = Array(self.touched)
        try connection.run(
            PostgresSyncStore.releaseUnique,
            [
                PostgresArray.text(touched.map(\.table)), PostgresArray.text(touched.map(\.owner)),
                PostgresArray.text(touched.map(\.key)),
            ])
        let rows = touched.flatMap { key in (held[key] ?? []).map { (key, $0) } }
        guard !rows.isEmpty else { return }
        try connection.run(
            PostgresSyncStore.holdUnique,
            [
                PostgresArray.text(rows.map(\.0.table)), PostgresArray.text(rows.map(\.0.owner)),
                PostgresArray.text(rows.map(\.1)), PostgresArray.text(rows.map(\.0.key)),
            ])
    }
}
