import SerialDB
import Synchronization

/// Syncs the tables of one database with a server: applies the table definitions that changed
/// on the server, uploads local changes, then fetches the rows that changed there.
///
/// The app writes with plain SQL through its queue; triggers record each change of a synced
/// table for upload, so no app code is involved. Tables come from the server: a new table is
/// created, a changed definition is applied as a declarative schema change.
///
/// ```swift
/// let client = try SyncClient(queue: queue, transport: HTTPSyncTransport(baseURL: url, token: "t-alice"))
/// let report = try await client.sync()
/// print(report.uploaded, report.downloaded, report.conflicts.count)
/// ```
///
/// One sync runs at a time per client. Each upload result and each downloaded page commits in
/// its own transaction with the cursor it covers, so cancelling the task (checked between
/// pages), a network error or a crash leaves everything consistent, and the next sync goes on
/// from there. A request retried after an unanswered one reuses its seqs, so the server
/// applies it once.
public final class SyncClient: Sendable {
    /// The database synced: a `DatabaseQueue` or a `DatabasePool`.
    public let database: any DatabaseWriter
    /// How the server is reached.
    public let transport: any SyncTransport
    /// Settles conflicts: called inside the transaction that applies an upload's results, it
    /// must not use the queue. `nil` adopts the server's row.
    public let conflictResolver: (@Sendable (SyncConflict) -> SyncConflictResolution)?
    /// This device's id for the server (a UUID made once per database file).
    public let clientID: String
    /// Rows per FetchData page, and mutations per PostData request.
    public let pageSize: Int

    private let running = Mutex(false)

    /// Prepares the database behind `queue` for sync; see
    /// ``init(database:transport:conflictResolver:pageSize:)``.
    public convenience init(
        queue: DatabaseQueue, transport: any SyncTransport,
        conflictResolver: (@Sendable (SyncConflict) -> SyncConflictResolution)? = nil,
        pageSize: Int = SyncLimits.defaultPageSize
    ) throws {
        try self.init(
            database: queue as any DatabaseWriter, transport: transport, conflictResolver: conflictResolver,
            pageSize: pageSize)
    }

    /// Prepares `database` for sync: creates `TableVersion` and SerialDB's side tables when
    /// missing, and puts back the outbox triggers of synced tables if something dropped them.
    ///
    /// A pool syncs like a queue: the sync's writes run on its writer, its reads on readers.
    ///
    /// - Parameters:
    ///   - database: the app database, a `DatabaseQueue` or a `DatabasePool`.
    ///   - transport: usually an ``HTTPSyncTransport``.
    ///   - conflictResolver: decides each conflict; `nil` adopts the server's row.
    ///   - pageSize: rows per page and mutations per upload, 1...500.
    /// - Throws: `DatabaseError`, `SerialDBError` (a closed queue).
    public init(
        database: any DatabaseWriter, transport: any SyncTransport,
        conflictResolver: (@Sendable (SyncConflict) -> SyncConflictResolution)? = nil,
        pageSize: Int = SyncLimits.defaultPageSize
    ) throws {
        self.database = database
        self.transport = transport
        self.conflictResolver = conflictResolver
        self.pageSize = min(max(pageSize, 1), SyncLimits.defaultPageSize)
        clientID = try database.write { db in
            let (clientID, staleTriggers) = try SyncMetadata.install(db)
            try Self.restoreTriggers(db, all: staleTriggers)
            return clientID
        }
    }

    /// Asks which tables changed and applies new definitions, uploads local changes, then
    /// fetches new rows.
    ///
    /// Definitions come before the upload, so that changes of a table the server renamed go up
    /// under its new names, rows an app table held before it was synced go up with this sync,
    /// and a table the server no longer serves is not sent to it.
    ///
    /// - Parameter progress: called as the sync moves on (from the sync's task).
    /// - Returns: what was uploaded, downloaded, in conflict, changed in the schema, rejected.
    /// - Throws: ``SyncError`` (``SyncError/Code/syncInProgress`` when this client already
    ///   syncs; network and server errors), `CancellationError`, `SerialDBError`
    ///   (`SerialDBError.Code.closed` when the queue was closed), `DatabaseError`.
    public func sync(progress: (@Sendable (SyncProgress) -> Void)? = nil) async throws -> SyncReport {
        let started = running.withLock { isRunning in
            defer { isRunning = true }
            return !isRunning
        }
        guard started else {
            throw SyncError(.syncInProgress, "This client is already syncing; wait for that sync to finish.")
        }
        defer { running.withLock { $0 = false } }
        var report = SyncReport()
        var state = SyncProgress(
            phase: .checking, tablesCompleted: 0, tablesTotal: 0, rowsUploaded: 0, rowsDownloaded: 0)
        progress?(state)
        // Uploading under a token of another account would hand this account's rows to it:
        // the token's account is checked before anything is sent or applied.
        let (tables, check) = try await checkUpdate()
        try verifyAccount(tables, check)
        let toFetch = try await applyDefinitions(check, tables: tables, into: &report)
        state.phase = .uploading
        progress?(state)
        let uploaded = try await upload(into: &report, state: &state, progress: progress)
        try await download(
            check, tables: toFetch, uploaded: uploaded, into: &report, state: &state, progress: progress)
        state.phase = .finished
        progress?(state)
        return report
    }

    // MARK: - Upload

    /// What an upload tells the download that follows it.
    private struct Uploaded {
        /// The tables the server applied changes to.
        var changedTables: Set<String> = []
        /// By table, rows the server stored as this sync read them (``Outbox/Settled/ownRows``),
        /// up to ``maximumOwnRows`` in all.
        var ownRows: [String: [String: Int64]] = [:]
        var ownRowCount = 0

        /// Enough for the uploads of a sync to be remembered whole, little enough that memory
        /// stays bounded after a long time offline; rows past it are written again by a fetch
        /// from 0, as any known row is.
        static let maximumOwnRows = 100_000

        mutating func add(_ settled: Outbox.Settled) {
            changedTables.formUnion(settled.changedTables)
            for (table, rows) in settled.ownRows where ownRowCount + rows.count <= Self.maximumOwnRows {
                ownRows[table, default: [:]].merge(rows) { _, new in new }
                ownRowCount += rows.count
            }
        }
    }

    /// Sends the outbox in batches. Conflicts the resolver keeps locally are queued again and
    /// sent in a few more rounds at most, so two devices that both insist cannot loop forever.
    ///
    /// Two batches overlap the server's work: while batch N+1 is on its way, batch N (answered
    /// just before it left) is settled, then batch N+2 is read from the outbox. N+1 was read
    /// while N travelled, so it holds no key of N
    /// (see ``Outbox/nextBatch(_:limit:through:sending:)`` for what it leaves for later), and
    /// N+2, read once N is settled, holds no key of N+1: no batch goes up on a base version an
    /// unsettled answer is about to change. A retry travels alone. Nothing throws with a
    /// request in flight: a failure (of a settle, of a read, a cancellation) waits for its
    /// answer first, without cancelling it; a batch answered is settled before the next
    /// request's failure is thrown.
    private func upload(
        into report: inout SyncReport, state: inout SyncProgress, progress: (@Sendable (SyncProgress) -> Void)?
    ) async throws -> Uploaded {
        var uploaded = Uploaded()
        var highWater = try await database.read { db in try Outbox.highWater(db) }
        var extraRounds = 3
        let limit = pageSize
        let resolver = conflictResolver
        let transport = transport
        // Read and marked sent, not yet on its way.
        var next: Outbox.Batch?
        // On its way and answered, not yet settled.
        var answered: (batch: Outbox.Batch, response: PostDataResponse)?

        func settleAnswered() async throws {
            guard let (batch, response) = answered else { return }
            answered = nil
            let mutations = batch.mutations
            let entryKeys = batch.entryKeys
            let isRetry = batch.isRetry
            let settled = try await database.write { db in
                try ProcessorSharing.sharing(db) {
                    try Outbox.settle(
                        db, batch: mutations, entryKeys: entryKeys, results: response.results, resolver: resolver,
                        isRetry: isRetry)
                }
            }
            report.uploaded += settled.uploaded
            uploaded.add(settled)
            report.downloaded += settled.downloaded
            report.conflicts += settled.conflicts
            report.rejected += settled.rejected
            if let requeued = settled.requeuedThrough, extraRounds > 0 {
                highWater = max(highWater, requeued)
                extraRounds -= 1
            }
            state.rowsUploaded = report.uploaded
            state.rowsDownloaded = report.downloaded
            progress?(state)
        }

        while true {
            let batch: Outbox.Batch
            if let prepared = next {
                batch = prepared
                next = nil
            } else {
                // Nothing read ahead: the batch answered is settled first, as what is read now
                // may hold its keys or entries its conflicts queue again.
                try await settleAnswered()
                try Task.checkCancellation()
                let through = highWater
                batch = try await database.write { db in
                    try ProcessorSharing.sharing(db) { try Outbox.nextBatch(db, limit: limit, through: through) }
                }
            }
            guard !batch.isEmpty else { return uploaded }
            report.rejected += batch.rejected
            guard !batch.mutations.isEmpty else { continue }
            try Task.checkCancellation()
            let request = PostDataRequest(
                clientID: clientID, mutations: batch.mutations, encodedMutations: batch.encodedMutations)
            let sending = Task { try await transport.postData(request) }
            do {
                try await settleAnswered()
                if !batch.isRetry {
                    let keys = batch.keys
                    let through = highWater
                    let read = try await database.write { db in
                        try ProcessorSharing.sharing(db) {
                            try Outbox.nextBatch(db, limit: limit, through: through, sending: keys)
                        }
                    }
                    // Empty (nothing more, or stopped before its first entry): asked again
                    // once this batch is settled, which may queue entries again.
                    if !read.isEmpty { next = read }
                }
            } catch {
                _ = await sending.result
                throw error
            }
            answered = (batch, try await sending.value)
        }
    }

    // MARK: - Definitions

    /// Applies the definitions check-update says changed, then stops syncing the tables it no
    /// longer lists. Returns the `TableVersion` row of each table to fetch (a refused
    /// definition is not fetched).
    private func applyDefinitions(
        _ check: CheckUpdateResponse, tables: [SyncMetadata.TableState], into report: inout SyncReport
    ) async throws -> [String: SyncMetadata.TableState] {
        var toFetch: [String: SyncMetadata.TableState] = [:]
        for table in check.tables {
            try Task.checkCancellation()
            let current = tables.first { $0.table == table.table }
            guard table.schemaChanged || current == nil || current?.structVersion != table.structVersion else {
                toFetch[table.table] = current
                continue
            }
            let schema = try await transport.fetchSchema(FetchSchemaRequest(table: table.table))
            // A table the server renamed is still listed here under its old name.
            let previous = current ?? schema.renamedFrom.flatMap { old in tables.first { $0.table == old } }
            let change = try await database.inDatabase { db in
                try TableSchemaChange.apply(db, table: table, schema: schema, previous: previous)
            }
            report.schemaChanges.append(change)
            if change.isApplied {
                toFetch[table.table] = try await database.read { db in
                    try SyncMetadata.tableState(db, table: table.table)
                }
            }
        }
        try await stopSyncingTablesNoLongerServed(check, into: &report)
        return toFetch
    }

    /// A table of `TableVersion` that check-update no longer lists was removed from the
    /// server's configuration (a renamed one has moved to its new name by now): it stops being
    /// synced, its local table and rows stay.
    private func stopSyncingTablesNoLongerServed(_ check: CheckUpdateResponse, into report: inout SyncReport)
        async throws
    {
        let served = Set(check.tables.map(\.table))
        let stopped = try await database.write { db in
            var stopped: [(String, [SyncRejection])] = []
            for table in try SyncMetadata.tableStates(db) where !served.contains(table.table) {
                stopped.append((table.table, try TableSchemaChange.stopSyncing(db, table: table.table)))
            }
            return stopped
        }
        for (table, rejected) in stopped {
            report.unsyncedTables.append(table)
            report.rejected += rejected
        }
    }

    // MARK: - Download

    /// Fetches the new rows of every table of `tables` (the ones served, with their cursors):
    /// those check-update said changed, and those this sync uploaded to (so that the cursor
    /// covers the versions of its own changes). Parents first (``FetchOrder``).
    private func download(
        _ check: CheckUpdateResponse, tables: [String: SyncMetadata.TableState], uploaded: Uploaded,
        into report: inout SyncReport, state: inout SyncProgress, progress: (@Sendable (SyncProgress) -> Void)?
    ) async throws {
        let (resyncing, order) = try await database.read { db in
            (try Download.resyncingTables(db), try FetchOrder.parentsFirst(db, check.tables.map(\.table)))
        }
        let byName = Dictionary(check.tables.map { ($0.table, $0) }, uniquingKeysWith: { first, _ in first })
        state.tablesTotal = check.tables.count
        for table in order.compactMap({ byName[$0] }) {
            try Task.checkCancellation()
            state.phase = .downloading(table: table.table)
            progress?(state)
            if let current = tables[table.table] {
                // "data_changed" also says when a purge overtook the cursor: the highest version
                // left on the server may then be below the cursor, yet the table must resync.
                let cursor = current.version
                if table.dataChanged || table.version > cursor || uploaded.changedTables.contains(table.table)
                    || resyncing.contains(table.table)
                {
                    report.downloaded += try await fetch(
                        table.table, from: cursor, resyncing: resyncing.contains(table.table),
                        ownRows: uploaded.ownRows[table.table] ?? [:], state: &state, progress: progress)
                }
            }
            state.tablesCompleted += 1
            state.rowsDownloaded = report.downloaded
            progress?(state)
        }
    }

    /// CheckUpdate with the tables of `TableVersion`.
    private func checkUpdate() async throws -> ([SyncMetadata.TableState], CheckUpdateResponse) {
        let tables = try await database.read { db in try SyncMetadata.tableStates(db) }
        let check = try await transport.checkUpdate(
            CheckUpdateRequest(
                tables: tables.map {
                    CheckUpdateRequest.Table(table: $0.table, structVersion: $0.structVersion, version: $0.version)
                }))
        return (tables, check)
    }

    /// Refuses a token of another account than the one whose rows the database holds.
    private func verifyAccount(_ tables: [SyncMetadata.TableState], _ check: CheckUpdateResponse) throws {
        if let other = tables.first(where: { $0.ownerType == "account" && $0.owner != check.account }) {
            throw SyncError(
                .accountMismatch,
                "This database holds rows of account \"\(other.owner)\", but the token belongs to \"\(check.account)\". "
                    + "Open the account's own database (AccountDatabases) instead; nothing was sent or applied.")
        }
    }

    /// Fetches and applies pages until the server has no more, one transaction per page,
    /// as ``TableFetch`` directs: incremental from the cursor, from 0 after a definition change,
    /// or a resync (started by the server's answer, or resumed from where an interrupted one
    /// left off).
    ///
    /// The next page is asked for while the current one is applied, one request at a time,
    /// and a fetch never returns or throws with a request still in flight. A page's cursor is
    /// read before its rows (``FetchedPage``), so the next request leaves before they are
    /// read. `ownRows` are the rows this sync uploaded (see
    /// ``Download/apply(_:_:ownRows:bound:)``).
    private func fetch(
        _ table: String, from cursor: Int64, resyncing: Bool, ownRows: [String: Int64], state: inout SyncProgress,
        progress: (@Sendable (SyncProgress) -> Void)?
    ) async throws -> Int {
        var fetch = TableFetch(
            table: table, cursor: cursor, resyncInProgress: resyncing,
            pageSize: Self.fetchPageSize(pageSize, ownRows: ownRows.count))
        var downloaded = 0
        // What each page proves of the table's known versions for the next one.
        var bound: Download.KnownVersionBound?
        guard let first = fetch.nextRequest else { return 0 }
        try Task.checkCancellation()
        let transport = transport
        var answer = try await FetchedPage.fetch(first, from: transport)
        while true {
            switch try fetch.receive(answer.header) {
            case .beginResync:
                try await database.write { db in try Download.startResync(db, table: table) }
                guard let request = fetch.nextRequest else { return downloaded }
                try Task.checkCancellation()
                answer = try await FetchedPage.fetch(request, from: transport)
            case .apply(var application):
                try Task.checkCancellation()
                // The next page is asked for while this one is read and applied, so that the
                // server builds it meanwhile. A page that fails to read or apply (or a
                // cancelled sync) waits for that request's answer before it throws, so that no
                // request outlives the sync; the request is not cancelled, which URLSession on
                // Linux does not always honour promptly (a `serialdb sync` stopped that way hung
                // under ThreadSanitizer). Its page is dropped: the cursor stays where it committed.
                let next = fetch.nextRequest.map { request in
                    Task { try await FetchedPage.fetch(request, from: transport) }
                }
                do {
                    application.changes = try await answer.changes()
                    let applied = try await database.write { [application, bound] db in
                        try ProcessorSharing.sharing(db) {
                            try Download.apply(db, application, ownRows: ownRows, bound: bound)
                        }
                    }
                    downloaded += applied.downloaded
                    bound = applied.bound
                    report(downloaded, state: state, progress: progress)
                    try Task.checkCancellation()
                } catch {
                    _ = await next?.result
                    throw error
                }
                guard let next else { return downloaded }
                answer = try await next.value
            }
        }
    }

    /// The rows a fetch asks for per page: the client's page size, or, after an upload that
    /// stored more rows of the table, that many (up to the protocol's largest page). Those rows
    /// come back with the fetch at the versions the upload was answered, and are neither looked
    /// up nor written (``Download/apply(_:_:ownRows:bound:)``): larger pages bring them back in
    /// fewer round trips. Rows of other devices between them are applied as in any page, so
    /// such a page's transaction may hold up to that many of them.
    static func fetchPageSize(_ pageSize: Int, ownRows: Int) -> Int {
        min(SyncLimits.maximumPageSize, max(pageSize, ownRows))
    }

    /// Reports the rows downloaded so far in the table being fetched.
    private func report(_ downloaded: Int, state: SyncProgress, progress: (@Sendable (SyncProgress) -> Void)?) {
        progress?(
            SyncProgress(
                phase: state.phase, tablesCompleted: state.tablesCompleted, tablesTotal: state.tablesTotal,
                rowsUploaded: state.rowsUploaded, rowsDownloaded: state.rowsDownloaded + downloaded))
    }

    /// Puts back the outbox triggers of account tables that lost them (an app migration that
    /// rebuilt a synced table, for example), or of every account table when `all` (their
    /// canonical key changed form, or they test the `sent` flag of an earlier version).
    private static func restoreTriggers(_ db: Database, all: Bool) throws {
        for table in try SyncMetadata.tableStates(db) where table.ownerType == "account" {
            guard try db.tableExists(table.table) else { continue }
            let present =
                try db.fetchOne(
                    Int.self,
                    sql:
                        "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? AND name LIKE 'serialdb_sync_%'",
                    arguments: [table.table]) ?? 0
            if present < 3 || all {
                try ChangeCapture.install(db, table: try SyncedTable(db, name: table.table))
            }
        }
    }
}
