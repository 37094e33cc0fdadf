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
        /// The (table, key) of each mutation of a batch read from the outbox (not a retry).
        var keys: Set<[String]> = []

        var isEmpty: Bool { mutations.isEmpty && rejected.isEmpty }
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
        _ db: Database, limit: Int, through highWater: Int64, sending: Set<[String]>? = nil
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

    private static func freshBatch(_ db: Database, limit: Int, through highWater: Int64, sending: Set<[String]>?)
        throws -> Batch
    {
        // With the version each key was last seen at (its base version), one index probe each.
        let entries = try db.fetchAll(
            Row.self,
            sql: """
                SELECT entry.seq, entry.table_name, entry.key, entry.op, coalesce(known.version, 0)
                FROM serialdb_sync_outbox AS entry LEFT JOIN serialdb_sync_row AS known
                ON known.table_name = entry.table_name AND known.key = entry.key
                WHERE entry.seq > \(SyncMetadata.sentThroughSQL) AND entry.seq <= ? ORDER BY entry.seq LIMIT ?
                """,
            arguments: [highWater, limit])
        var tables: [String: SyncedTable] = [:]
        var batch = Batch()
        var bytes = 0
        var waitsForSending = false
        for entry in entries {
            let seq: Int64 = try entry.decode(at: 0)
            let tableName: String = try entry.decode(at: 1)
            let key: String = try entry.decode(at: 2)
            if let sending, sending.contains([tableName, key]) { break }
            let table: SyncedTable
            if let known = tables[tableName] {
                table = known
            } else {
                table = try SyncedTable(db, name: tableName)
                tables[tableName] = table
            }
            guard let values = CanonicalKey.parse(key), values.count == table.primaryKey.count else {
                throw SyncError(
                    .unsupportedTable,
                    "Outbox entry \(seq) of \(tableName.quotedDatabaseIdentifier) has a key that does not match the "
                        + "table's primary key; the table's key changed outside the sync.")
            }
            let baseVersion: Int64 = try entry.decode(at: 4)
            var mutation = SyncMutation(
                seq: seq, table: tableName, op: .upsert, row: nil, key: nil, baseVersion: baseVersion)
            if try entry.decode(String.self, at: 3) == "upsert", let row = try table.fetchRow(db, key: values) {
                mutation.row = row
            } else if baseVersion == 0 {
                // Created and deleted here before the server ever had it: nothing to tell.
                try db.execute(sql: "DELETE FROM serialdb_sync_outbox WHERE seq = ?", arguments: [seq])
                continue
            } else {
                mutation.op = .delete
                mutation.key = table.wireKey(values)
            }
            // An entry that cannot travel leaves the outbox as a rejection; the local row stays.
            func reject(_ message: String) throws {
                if sending != nil {
                    // Left for a batch made once the one on its way is settled.
                    waitsForSending = true
                    return
                }
                try db.execute(sql: "DELETE FROM serialdb_sync_outbox WHERE seq = ?", arguments: [seq])
                batch.rejected.append(
                    SyncRejection(
                        table: tableName, key: Dictionary(uniqueKeysWithValues: zip(table.primaryKey, values)),
                        operation: mutation.op, message: "not sent: " + message))
            }
            if let column = nonFiniteColumn(of: mutation) {
                try reject(
                    "column \(JSONWriter.quoted(column.name)) is \(column.value), which JSON cannot carry to the "
                        + "server; store a finite number or NULL and the row goes up with the next sync")
                if waitsForSending { break }
                continue
            }
            var writer = JSONWriter(capacity: 256)
            try mutation.write(to: &writer)
            let encoded = writer.string
            let size = encoded.utf8.count + 1  // and its comma
            if size > maximumBatchBytes {
                try reject(
                    "the row is \(size) bytes of JSON, more than one upload may carry (\(maximumBatchBytes)); "
                        + "store less in it and the row goes up with the next sync")
                if waitsForSending { break }
                continue
            }
            bytes += size
            // The rest waits for the next batch of this upload.
            if !batch.mutations.isEmpty && bytes > maximumBatchBytes { break }
            batch.mutations.append(mutation)
            batch.encodedMutations.append(encoded)
            batch.keys.insert([tableName, key])
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

    /// The first column (by name) of the mutation's row or key that holds an infinite REAL.
    /// (SQLite stores NaN as NULL, so infinities are the only doubles without a JSON form.)
    private static func nonFiniteColumn(of mutation: SyncMutation) -> (name: String, value: Double)? {
        let columns = mutation.row ?? mutation.key ?? [:]
        return columns.compactMap { name, value -> (name: String, value: Double)? in
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
    static func settle(
        _ db: Database, batch: [SyncMutation], results: [SyncMutationResult],
        resolver: (@Sendable (SyncConflict) -> SyncConflictResolution)?, isRetry: Bool = false
    ) throws -> Settled {
        let bySeq = Dictionary(results.map { ($0.seq, $0) }, uniquingKeysWith: { first, _ in first })
        var settled = Settled()
        try SyncMetadata.applyingServerRows(db) {
            try db.execute(sql: "PRAGMA defer_foreign_keys = ON")
            // The batch's entries leave the outbox in one statement, which returns their keys:
            // a range of seqs, because a sent batch is every entry left between its first and
            // last seq (see `SyncMetadata`).
            var keysBySeq: [Int64: String] = [:]
            keysBySeq.reserveCapacity(batch.count)
            if let first = batch.first?.seq, let last = batch.last?.seq {
                for row in try db.fetchAll(
                    Row.self, sql: "DELETE FROM serialdb_sync_outbox WHERE seq BETWEEN ? AND ? RETURNING seq, key",
                    arguments: [first, last])
                {
                    keysBySeq[try row.decode(Int64.self, at: 0)] = try row.decode(String.self, at: 1)
                }
                try db.execute(sql: "DELETE FROM serialdb_sync_sent WHERE first_seq = ?", arguments: [first])
            }
            var tables: [String: SyncedTable] = [:]
            var appliedVersions: [String: [String: Int64?]] = [:]
            for mutation in batch {
                guard let result = bySeq[mutation.seq] else {
                    throw SyncError(
                        .invalidResponse, "The server's answer to an upload lacks the result of seq \(mutation.seq).")
                }
                guard let key = keysBySeq[mutation.seq] else { continue }
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
