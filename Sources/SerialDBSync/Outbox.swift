import Foundation
import SerialDB
import SerialDBSyncWire

/// The upload side: turning outbox entries into mutations and settling the server's results.
enum Outbox {
    /// The highest seq in the outbox now: one upload sends what was written before it started.
    static func highWater(_ db: Database) throws -> Int64 {
        try db.fetchOne(Int64.self, sql: "SELECT max(seq) FROM serialdb_sync_outbox") ?? 0
    }

    /// The mutations of one upload, and the entries refused before sending.
    struct Batch {
        var mutations: [SyncMutation] = []
        /// The wire form of each mutation, as the outbox keeps it: the request sends these
        /// instead of encoding the mutations again.
        var encodedMutations: [String] = []
        /// The mutations were sent before without an answer and go again as they were kept.
        var isRetry = false
        /// Entries that cannot travel (a REAL that is infinite: JSON has no form for it). They
        /// left the outbox, as a change the server rejects does; the local row is untouched.
        var rejected: [SyncRejection] = []
        /// The canonical key of each mutation, in order, for a batch read from the outbox (empty
        /// for a retry): settling the answer needs them, and need not read them back.
        var entryKeys: [String] = []

        /// The (table, key) of each mutation of a batch read from the outbox (none for a retry).
        var keys: Set<TableKey> {
            Set(zip(mutations, entryKeys).map { TableKey(table: $0.table, key: $1) })
        }

        var isEmpty: Bool { mutations.isEmpty && rejected.isEmpty }
    }

    /// A row of a synced table: its table's name and canonical key.
    struct TableKey: Hashable, Sendable {
        var table: String
        var key: String
    }

    /// The most bytes of mutations one upload carries. The server refuses a request body over
    /// 4 MiB (its default limit) with 413, so a batch counted in mutations alone could be
    /// refused every time and hold the outbox forever; 64 KiB are left for the request's
    /// envelope.
    static let maximumBatchBytes = SyncLimits.defaultBodyLimit - 64 * 1024

    /// The next batch, in seq order. Entries sent before without an answer come first, exactly
    /// as they were sent (same seqs, same rows), so a retried request changes nothing twice.
    /// Otherwise up to `limit` unsent entries become mutations: the row is read now, the base
    /// version is the one last seen; they are marked sent with the mutation kept. A delete of a
    /// key the server never had is dropped instead of sent; a row with a value JSON cannot
    /// carry leaves the outbox as a rejection, so it never holds up the others. A batch also
    /// stops before its mutations would pass ``maximumBatchBytes`` of JSON (it holds at least
    /// one), and a row too large to travel alone leaves the outbox as a rejection too.
    ///
    /// `sending` are the keys of a batch on its way to the server, whose answer has not been
    /// settled: the batch made meanwhile stops before an entry of one of them (its base version
    /// comes with that answer) and before an entry it would reject (the sync may yet fail and
    /// never report it), and it holds no retry (the only entries marked sent are the batch on
    /// its way).
    static func nextBatch(
        _ db: Database, limit: Int, through highWater: Int64, sending: Set<TableKey>? = nil
    ) throws -> Batch {
        if sending == nil, let retry = try retryBatch(db) { return retry }
        return try freshBatch(db, limit: limit, through: highWater, sending: sending)
    }

    /// The first batch sent before without an answer, exactly as it was sent, or `nil` when
    /// none. A kept batch none of whose entries is left (deleted by hand, as the error for an
    /// unreadable one advises) is dropped.
    private static func retryBatch(_ db: Database) throws -> Batch? {
        while let kept = try db.fetchOne(
            Row.self, sql: "SELECT first_seq, last_seq, mutations FROM serialdb_sync_sent ORDER BY first_seq LIMIT 1")
        {
            let (first, last): (Int64, Int64) = (try kept.decode(at: 0), try kept.decode(at: 1))
            let left = try db.fetchOne(Bool.self, sql: sentEntryInRangeSQL, arguments: [first, last])
            guard left == true else {
                try db.execute(sql: "DELETE FROM serialdb_sync_sent WHERE first_seq = ?", arguments: [first])
                continue
            }
            var batch = Batch(isRetry: true)
            do {
                let text: String = try kept.decode(at: 2)
                for element in try JSONValue.parse(text.utf8).arrayValue ?? [] {
                    let mutation = try SyncMutation(json: element, context: "upload \(first)...\(last)")
                    // Written again by the writer that wrote it: the same bytes (one an earlier
                    // release kept in another form: the same mutation).
                    var writer = JSONWriter(capacity: 256)
                    try mutation.write(to: &writer)
                    batch.mutations.append(mutation)
                    batch.encodedMutations.append(writer.string)
                }
                guard !batch.mutations.isEmpty else { throw WireFormatError(message: "no mutations") }
            } catch {
                throw SyncError(
                    .invalidResponse,
                    "The kept copy of uploads \(first) to \(last), sent before without an answer, cannot be read "
                        + "(\(error)); the database was changed outside SerialDB. Delete the outbox entries with "
                        + "seq \(first) to \(last) to go on.")
            }
            return batch
        }
        // Entries sent whose copy is gone would never be answered, nor replaced by a newer
        // change: sent again under their seqs with today's rows, an applied one would be ignored.
        if let stranded = try db.fetchOne(Int64.self, sql: firstSentEntrySQL) {
            let sentThrough = try db.fetchOne(Int64.self, sql: "SELECT " + SyncMetadata.sentThroughSQL) ?? stranded
            throw SyncError(
                .invalidResponse,
                "Upload \(stranded) was sent without an answer, but its kept copy is gone; the database was "
                    + "changed outside SerialDB. Delete the outbox entries with seq \(stranded) to \(sentThrough) "
                    + "to go on.")
        }
        return nil
    }

    /// Whether an entry with a seq in a range (`?1` to `?2`, a kept batch: every entry in it is
    /// sent) is left, and the first entry sent: both a seek in the outbox's seqs, whatever it
    /// holds (one retry's check runs at the start of every upload).
    static let sentEntryInRangeSQL = "SELECT EXISTS (SELECT 1 FROM serialdb_sync_outbox WHERE seq BETWEEN ? AND ?)"
    static let firstSentEntrySQL =
        "SELECT min(seq) FROM serialdb_sync_outbox WHERE seq <= \(SyncMetadata.sentThroughSQL)"

    /// One outbox entry to send: its seq, row, operation and the version its key was last seen at.
    private struct Entry {
        var seq: Int64
        var table: String
        var key: String
        var isUpsert: Bool
        var baseVersion: Int64
    }

    /// The unsent entries after `sent_through`, up to `highWater`, in seq order, each with the
    /// version its key was last seen at (its base version): one index probe each.
    private static let unsentEntriesSQL = """
        SELECT entry.seq, entry.table_name, entry.key, entry.op = 'upsert', coalesce(known.version, 0)
        FROM serialdb_sync_outbox AS entry LEFT JOIN serialdb_sync_row AS known
        ON known.table_name = entry.table_name AND known.key = entry.key
        WHERE entry.seq > \(SyncMetadata.sentThroughSQL) AND entry.seq <= ? ORDER BY entry.seq LIMIT ?
        """

    private static func freshBatch(_ db: Database, limit: Int, through highWater: Int64, sending: Set<TableKey>?)
        throws -> Batch
    {
        var entries: [Entry] = []
        entries.reserveCapacity(limit)
        try db.cachedStatement(sql: unsentEntriesSQL).forEachRow(arguments: [highWater, limit]) { row in
            entries.append(
                Entry(
                    seq: try row.decode(at: 0), table: try row.decode(at: 1), key: try row.decode(at: 2),
                    isUpsert: try row.decode(at: 3), baseVersion: try row.decode(at: 4)))
        }
        var tables: [String: SyncedTable] = [:]
        var batch = Batch()
        batch.mutations.reserveCapacity(entries.count)
        batch.encodedMutations.reserveCapacity(entries.count)
        batch.entryKeys.reserveCapacity(entries.count)
        var bytes = 0
        // Entries that leave the outbox without being sent: a delete of a key the server never
        // had, and rejections.
        var dropped: [Int64] = []
        for (index, entry) in entries.enumerated() {
            ProcessorSharing.afterRow(index)
            if let sending, sending.contains(TableKey(table: entry.table, key: entry.key)) { break }
            let table: SyncedTable
            if let known = tables[entry.table] {
                table = known
            } else {
                table = try SyncedTable(db, name: entry.table)
                tables[entry.table] = table
            }
            guard let values = CanonicalKey.parse(entry.key), values.count == table.primaryKey.count else {
                throw SyncError(
                    .unsupportedTable,
                    "Outbox entry \(entry.seq) of \(entry.table.quotedDatabaseIdentifier) has a key that does not "
                        + "match the table's primary key; the table's key changed outside the sync.")
            }
            var mutation = SyncMutation(
                seq: entry.seq, table: entry.table, op: .upsert, row: nil, key: nil, baseVersion: entry.baseVersion)
            // The row's values in the order the wire writes them (by name), or nil for a delete.
            let rowValues = entry.isUpsert ? try table.fetchWireRow(db, key: values) : nil
            if let rowValues {
                mutation.row = Dictionary(uniqueKeysWithValues: zip(table.wireLayout.names, rowValues))
            } else if entry.baseVersion == 0 {
                // Created and deleted here before the server ever had it: nothing to tell.
                dropped.append(entry.seq)
                continue
            } else {
                mutation.op = .delete
                mutation.key = table.wireKey(values)
            }
            // An entry that cannot travel leaves the outbox as a rejection; the local row stays.
            // With a batch on its way, it is left for a batch made once that one is settled
            // (the sync may yet fail and never report it), and this batch ends before it.
            func reject(_ message: String) -> Bool {
                guard sending == nil else { return false }
                dropped.append(entry.seq)
                batch.rejected.append(
                    SyncRejection(
                        table: entry.table, key: Dictionary(uniqueKeysWithValues: zip(table.primaryKey, values)),
                        operation: mutation.op, message: "not sent: " + message))
                return true
            }
            let nonFinite =
                if let rowValues {
                    nonFiniteColumn(in: zip(table.wireLayout.names, rowValues))
                } else {
                    nonFiniteColumn(in: (mutation.key ?? [:]).lazy.map { ($0.key, $0.value) })
                }
            if let column = nonFinite {
                let message =
                    "column \(JSONWriter.quoted(column.name)) is \(column.value), which JSON cannot carry to the "
                    + "server; store a finite number or NULL and the row goes up with the next sync"
                guard reject(message) else { break }
                continue
            }
            var writer = JSONWriter(capacity: 256)
            if let rowValues {
                try SyncMutation.write(
                    seq: mutation.seq, table: mutation.table, op: .upsert, baseVersion: mutation.baseVersion,
                    to: &writer
                ) { writer in
                    writer.field(.row)
                    try table.wireLayout.write(values: rowValues, to: &writer)
                }
            } else {
                try mutation.write(to: &writer)
            }
            let encoded = writer.string
            let size = encoded.utf8.count + 1  // and its comma
            if size > maximumBatchBytes {
                let message =
                    "the row is \(size) bytes of JSON, more than one upload may carry (\(maximumBatchBytes)); "
                    + "store less in it and the row goes up with the next sync"
                guard reject(message) else { break }
                continue
            }
            bytes += size
            // The rest waits for the next batch of this upload.
            if !batch.mutations.isEmpty && bytes > maximumBatchBytes { break }
            batch.mutations.append(mutation)
            batch.encodedMutations.append(encoded)
            batch.entryKeys.append(entry.key)
        }
        if !dropped.isEmpty {
            let delete = try db.cachedStatement(sql: "DELETE FROM serialdb_sync_outbox WHERE seq = ?")
            for seq in dropped {
                try delete.execute(values: seq)
            }
        }
        try markSent(db, batch)
        return batch
    }

    /// Keeps the wire forms of a batch's mutations (seqs `first` to `last`) for its retry, as
    /// the JSON array the request carries.
    static func keep(_ db: Database, first: Int64, last: Int64, mutations: [String]) throws {
        try db.execute(
            sql: "INSERT INTO serialdb_sync_sent(first_seq, last_seq, mutations) VALUES (?, ?, ?)",
            arguments: [first, last, "[" + mutations.joined(separator: ",") + "]"])
    }

    /// Keeps the batch's mutations for a retry and marks its entries sent (`sent_through`
    /// moves to its last seq), in two statements whatever its size.
    private static func markSent(_ db: Database, _ batch: Batch) throws {
        guard let first = batch.mutations.first?.seq, let last = batch.mutations.last?.seq else { return }
        try keep(db, first: first, last: last, mutations: batch.encodedMutations)
        try db.execute(sql: "UPDATE serialdb_sync_state SET sent_through = ? WHERE id = 1", arguments: [last])
    }

    /// The first column (by name) of `columns` (a row or a key) that holds an infinite REAL.
    /// (SQLite stores NaN as NULL, so infinities are the only doubles without a JSON form.)
    private static func nonFiniteColumn(in columns: some Sequence<(String, SyncValue)>) -> (
        name: String, value: Double
    )? {
        columns.compactMap { name, value -> (name: String, value: Double)? in
            if case .real(let real) = value, !real.isFinite { return (name, real) }
            return nil
        }.min { $0.name < $1.name }
    }

    /// What settling one batch did.
    struct Settled: Sendable {
        var uploaded = 0
        var downloaded = 0
        var conflicts: [SyncConflict] = []
        var rejected: [SyncRejection] = []
        /// Rows kept by the resolver and queued again on the server's version.
        var requeuedThrough: Int64?
        /// Tables with an applied change: their cursor is behind it now.
        var changedTables: Set<String> = []
        /// By table, the keys of applied upserts read from the local row for this batch (not
        /// retries of a request sent before), with the version the server stored them at: the
        /// server's row at that version is the local row, so a fetch from 0 need not write it
        /// again (see ``Download/apply(_:_:ownRows:)``).
        var ownRows: [String: [String: Int64]] = [:]
    }

    /// Applies the server's results for `batch`, in one transaction with the triggers quiet:
    /// each entry leaves the outbox; applied keys remember their new version; a conflict
    /// adopts the server's row unless the resolver keeps the local one (queued again on the
    /// server's version) or the key has a newer unsent change (which then goes up on it).
    ///
    /// `entryKeys` are the canonical keys of the batch's mutations, in order, when the batch
    /// was read from the outbox (``Batch/entryKeys``); without them (a retry) the keys are read
    /// back from the entries.
    static func settle(
        _ db: Database, batch: [SyncMutation], entryKeys: [String] = [], results: [SyncMutationResult],
        resolver: (@Sendable (SyncConflict) -> SyncConflictResolution)?, isRetry: Bool = false
    ) throws -> Settled {
        // A server answers in the request's order: results are then taken by position, not
        // looked up by seq.
        let inOrder = results.count == batch.count && zip(results, batch).allSatisfy { $0.seq == $1.seq }
        let bySeq = inOrder ? [:] : Dictionary(results.map { ($0.seq, $0) }, uniquingKeysWith: { first, _ in first })
        var settled = Settled()
        try SyncMetadata.applyingServerRows(db) {
            try db.execute(sql: "PRAGMA defer_foreign_keys = ON")
            let keys = try removeEntries(db, of: batch, entryKeys: entryKeys)
            var tables: [String: SyncedTable] = [:]
            var appliedVersions: [String: [String: Int64?]] = [:]
            for (index, mutation) in batch.enumerated() {
                guard let result = inOrder ? results[index] : bySeq[mutation.seq] else {
                    throw SyncError(
                        .invalidResponse, "The server's answer to an upload lacks the result of seq \(mutation.seq).")
                }
                guard let key = keys[index] else { continue }
                func table() throws -> SyncedTable {
                    let table = try tables[mutation.table] ?? SyncedTable(db, name: mutation.table)
                    tables[mutation.table] = table
                    return table
                }
                func keyColumns() throws -> [String: DatabaseValue] {
                    Dictionary(uniqueKeysWithValues: zip(try table().primaryKey, CanonicalKey.parse(key) ?? []))
                }
                switch result.status {
                case .applied:
                    guard let version = result.version else {
                        throw SyncError(.invalidResponse, "An applied upload (seq \(mutation.seq)) has no version.")
                    }
                    settled.uploaded += 1
                    settled.changedTables.insert(mutation.table)
                    appliedVersions[mutation.table, default: [:]][key] = mutation.op == .delete ? .some(nil) : version
                    if mutation.op == .upsert && !isRetry {
                        settled.ownRows[mutation.table, default: [:]][key] = version
                    }
                case .rejected:
                    settled.rejected.append(
                        SyncRejection(
                            table: mutation.table, key: try keyColumns(), operation: mutation.op,
                            message: result.error ?? "rejected without a message"))
                case .duplicate:
                    // Applied by an earlier attempt whose answer was lost; its version is unknown
                    // here and arrives with the next fetch.
                    settled.uploaded += 1
                case .conflict:
                    guard let current = result.current else {
                        throw SyncError(.invalidResponse, "A conflict (seq \(mutation.seq)) has no current row.")
                    }
                    try settleConflict(
                        db, table: try table(), key: key, values: CanonicalKey.parse(key) ?? [], mutation: mutation,
                        current: current, resolver: resolver, into: &settled)
                }
            }
            for (table, versions) in appliedVersions {
                try SyncMetadata.setKnownVersions(db, table: table, versions)
            }
        }
        try BrokenForeignKeys.check(db, writing: "the server's answer to an upload (the rows of its conflicts)")
        return settled
    }

    /// Deletes the entries of a sent batch from the outbox, and returns the canonical key of
    /// each of its mutations whose entry was still there (`nil` for one deleted by hand since).
    ///
    /// A sent batch is every entry left between its first and last seq (see `SyncMetadata`),
    /// so one statement deletes the range. When the batch's keys are known (`entryKeys`) and the
    /// range holds as many entries as the batch has mutations, they are its entries (nothing
    /// writes an entry at or below `sent_through`), and their keys are not read back.
    private static func removeEntries(_ db: Database, of batch: [SyncMutation], entryKeys: [String]) throws
        -> [String?]
    {
        guard let first = batch.first?.seq, let last = batch.last?.seq else { return [] }
        try db.execute(sql: "DELETE FROM serialdb_sync_sent WHERE first_seq = ?", arguments: [first])
        let range: StatementArguments = [first, last]
        if entryKeys.count == batch.count,
            try db.fetchOne(
                Int.self, sql: "SELECT count(*) FROM serialdb_sync_outbox WHERE seq BETWEEN ? AND ?",
                arguments: range) == batch.count
        {
            try db.execute(sql: "DELETE FROM serialdb_sync_outbox WHERE seq BETWEEN ? AND ?", arguments: range)
            return entryKeys
        }
        var keysBySeq: [Int64: String] = [:]
        keysBySeq.reserveCapacity(batch.count)
        try db.cachedStatement(sql: "DELETE FROM serialdb_sync_outbox WHERE seq BETWEEN ? AND ? RETURNING seq, key")
            .forEachRow(arguments: range) { row in
                keysBySeq[try row.decode(Int64.self, at: 0)] = try row.decode(String.self, at: 1)
            }
        return batch.map { keysBySeq[$0.seq] }
    }

    private static func settleConflict(
        _ db: Database, table: SyncedTable, key: String, values: [DatabaseValue], mutation: SyncMutation,
        current: SyncCurrentRow, resolver: (@Sendable (SyncConflict) -> SyncConflictResolution)?,
        into settled: inout Settled
    ) throws {
        try SyncMetadata.setKnownVersion(
            db, table: table.name, key: key, version: current.deleted ? nil : current.version)
        let localRow = try table.fetchRow(db, key: values)
        let serverRow = current.deleted ? nil : current.row
        var conflict = SyncConflict(
            table: table.name, key: Dictionary(uniqueKeysWithValues: zip(table.primaryKey, values)),
            localRow: localRow?.mapValues(\.databaseValue), serverRow: serverRow?.mapValues(\.databaseValue),
            localBaseVersion: mutation.baseVersion, serverVersion: current.version, resolution: .keepServer)
        if try SyncMetadata.hasPendingChange(db, table: table.name, key: key) {
            // A newer local change waits: it is never overwritten, and goes up on the new base.
            conflict.resolution = .keepLocal
        } else {
            conflict.resolution = resolver?(conflict) ?? .keepServer
            switch conflict.resolution {
            case .keepServer:
                if let serverRow {
                    try table.upsert(db, row: serverRow)
                    settled.downloaded += 1
                } else if try table.delete(db, key: values) {
                    settled.downloaded += 1
                }
            case .keepLocal:
                guard localRow != nil || serverRow != nil else { break }
                try db.execute(
                    sql: "INSERT INTO serialdb_sync_outbox(table_name, key, op) VALUES (?, ?, ?)",
                    arguments: [table.name, key, localRow == nil ? "delete" : "upsert"])
                settled.requeuedThrough = db.lastInsertedRowID
            }
        }
        settled.conflicts.append(conflict)
    }
}
