import SerialDB
import SerialDBSync
import Synchronization

/// A minimal in-memory server with the documented semantics, for tests of the client alone:
/// versions from one counter in commit order, tombstones, conflicts on a base-version
/// mismatch, idempotent (client_id, seq), pages with has_more, resync below a purge floor.
final class FakeSyncServer: Sendable {
    struct Table: Sendable {
        var name: String
        var scope = "account"
        var structVersion: Int64 = 1
        var schema: String
        var primaryKey: [String]
        /// Upserts with NULL or no value here are rejected, as a NOT NULL column would be.
        var notNull: [String] = []
        /// Sent with the definition: the table's name before a rename, and renamed columns (new → old).
        var renamedFrom: String?
        var renamedColumns: [String: String] = [:]

        /// The row with only the columns the definition has, as the server serves stored rows
        /// after a column was dropped.
        func served(_ row: [String: SyncValue]) -> [String: SyncValue] {
            let columns = (try? Self.columns(of: schema, table: name)) ?? []
            return row.filter { name, _ in columns.contains(name.lowercased()) }
        }

        private static func columns(of schema: String, table: String) throws -> Set<String> {
            let scratch = try Database(path: ":memory:")
            try scratch.execute(sql: schema)
            return Set(
                try scratch.fetchAll(
                    String.self, sql: "SELECT lower(name) FROM pragma_table_info(?)", arguments: [table]))
        }
    }

    struct Key: Hashable {
        var account: String
        var values: [SyncValue]
    }

    struct Stored {
        var version: Int64
        var deleted: Bool
        var row: [String: SyncValue]
    }

    struct State {
        var tables: [Table]
        var tokens: [String: String]
        var counter: Int64 = 0
        var rows: [String: [Key: Stored]] = [:]
        var results: [String: SyncMutationResult] = [:]
        /// Per client id, the highest seq whose result ``expireResults()`` dropped.
        var expiredThrough: [String: Int64] = [:]
        var purgeFloor: [String: Int64] = [:]
        /// Every (client, seq) received, retries included.
        var receivedSeqs: [String] = []
        /// The largest page served, whatever the client asks (the real server's is 5000).
        var pageCap = 5000
        /// Whether a page marked "resyncing" is never answered "resync" (a server of the
        /// protocol's later revision); `false` serves as a server that predates the field.
        var honorsResyncing = false
    }

    let state: Mutex<State>

    init(tables: [Table], tokens: [String: String] = ["t-alice": "alice", "t-bob": "bob"]) {
        state = Mutex(State(tables: tables, tokens: tokens))
    }

    /// A transport speaking for the account of `token`.
    func transport(token: String) -> FakeTransport {
        FakeTransport(server: self, token: token)
    }

    /// Serves a new definition from now on; stored rows stay.
    func replaceTable(_ table: Table) {
        state.withLock { state in
            state.tables.removeAll { $0.name == table.name }
            state.tables.append(table)
        }
    }

    /// Serves `table` in place of `old` from now on, with its stored rows under the new table
    /// and column names (`table.renamedColumns`).
    func renameTable(_ old: String, to table: Table) {
        state.withLock { state in
            state.tables.removeAll { $0.name == old }
            state.tables.append(table)
            let oldNames = table.renamedColumns
            state.rows[table.name] = state.rows.removeValue(forKey: old)?.mapValues { stored in
                var stored = stored
                for (new, old) in oldNames {
                    if let value = stored.row.removeValue(forKey: old) { stored.row[new] = value }
                }
                return stored
            }
        }
    }

    /// Stops serving a table, as a server whose configuration no longer lists it.
    func removeTable(_ name: String) {
        state.withLock { state in state.tables.removeAll { $0.name == name } }
    }

    /// Forgets tombstones up to `version` (as `purge-tombstones --through` does).
    func purgeTombstones(of table: String, through version: Int64) {
        state.withLock { state in
            state.rows[table] = state.rows[table]?.filter { !$0.value.deleted || $0.value.version > version }
            state.purgeFloor[table] = version
        }
    }

    /// Drops every remembered upload result, as a purge does once the retention window has
    /// passed: a retry of one of those seqs is answered "duplicate".
    func expireResults() {
        state.withLock { state in
            for (id, result) in state.results {
                let client = String(id[..<id.lastIndex(of: "|")!])
                state.expiredThrough[client] = max(state.expiredThrough[client] ?? 0, result.seq)
            }
            state.results = [:]
        }
    }

    /// The live rows of an account, keyed by their first key column's text.
    func rows(of table: String, account: String) -> [[String: SyncValue]] {
        state.withLock { state in
            (state.rows[table] ?? [:]).filter { $0.key.account == account && !$0.value.deleted }.map(\.value.row)
        }
    }

    private func account(_ token: String, _ state: State) throws -> String {
        guard let account = state.tokens[token] else {
            throw SyncError(.server, "unknown token", httpStatus: 401, serverCode: "unauthorized")
        }
        return account
    }

    private func table(_ name: String, _ state: State) throws -> Table {
        guard let table = state.tables.first(where: { $0.name == name }) else {
            throw SyncError(.server, "unknown table", httpStatus: 400, serverCode: "bad_request")
        }
        return table
    }

    private func owner(_ table: Table, _ account: String) -> String {
        table.scope == "account" ? account : ""
    }

    func checkUpdate(token: String, _ request: CheckUpdateRequest) throws -> CheckUpdateResponse {
        try state.withLock { state in
            let account = try account(token, state)
            return CheckUpdateResponse(
                account: account,
                tables: state.tables.map { table in
                    let owner = owner(table, account)
                    let version =
                        (state.rows[table.name] ?? [:]).filter { $0.key.account == owner }.map(\.value.version)
                        .max() ?? 0
                    let client = request.tables.first { $0.table == table.name }
                    let since = client?.version ?? 0
                    // A cursor a purge overtook always fetches (and is told to resync), even
                    // when the purged tombstones held the highest versions.
                    let overtaken = since > 0 && since < state.purgeFloor[table.name] ?? 0
                    return CheckUpdateResponse.Table(
                        table: table.name, scope: table.scope, owner: owner, structVersion: table.structVersion,
                        version: version, schemaChanged: client?.structVersion != table.structVersion,
                        dataChanged: version > since || overtaken)
                })
        }
    }

    func fetchSchema(token: String, _ request: FetchSchemaRequest) throws -> FetchSchemaResponse {
        try state.withLock { state in
            _ = try account(token, state)
            let table = try table(request.table, state)
            return FetchSchemaResponse(
                table: table.name, structVersion: table.structVersion, schema: table.schema,
                renamedFrom: table.renamedFrom, renamedColumns: table.renamedColumns)
        }
    }

    func fetchData(token: String, _ request: FetchDataRequest) throws -> FetchDataResponse {
        try state.withLock { state in
            let table = try table(request.table, state)
            let owner = owner(table, try account(token, state))
            if request.since > 0 && request.since < state.purgeFloor[table.name] ?? 0
                && !(request.resyncing && state.honorsResyncing)
            {
                return FetchDataResponse(table: table.name, changes: [], version: 0, hasMore: false, resync: true)
            }
            let newer = (state.rows[table.name] ?? [:]).filter {
                $0.key.account == owner && $0.value.version > request.since
            }
            .map(\.value).sorted { $0.version < $1.version }
            let page = newer.prefix(min(request.limit, state.pageCap))
            let changes = page.map { stored in
                SyncChange(
                    version: stored.version, deleted: stored.deleted,
                    row: stored.deleted
                        ? stored.row.filter { table.primaryKey.contains($0.key) } : table.served(stored.row))
            }
            return FetchDataResponse(
                table: table.name, changes: changes, version: page.last?.version ?? request.since,
                hasMore: newer.count > page.count, resync: false)
        }
    }

    func postData(token: String, _ request: PostDataRequest) throws -> PostDataResponse {
        try state.withLock { state in
            let account = try account(token, state)
            var results: [SyncMutationResult] = []
            for mutation in request.mutations {
                let id = request.clientID + "|" + String(mutation.seq)
                state.receivedSeqs.append(id)
                if let first = state.results[id] {
                    results.append(first)
                    continue
                }
                if mutation.seq <= state.expiredThrough[request.clientID] ?? 0 {
                    results.append(SyncMutationResult(seq: mutation.seq, status: .duplicate))
                    continue
                }
                guard let table = state.tables.first(where: { $0.name == mutation.table }) else {
                    // One mutation at a time, never a 400 for the whole request.
                    let result = SyncMutationResult(
                        seq: mutation.seq, status: .rejected, error: "there is no synced table \"\(mutation.table)\"")
                    state.results[id] = result
                    results.append(result)
                    continue
                }
                guard table.scope == "account" else {
                    throw SyncError(.server, "global table", httpStatus: 403, serverCode: "forbidden")
                }
                let source = mutation.row ?? mutation.key ?? [:]
                let key = Key(account: account, values: table.primaryKey.map { source[$0] ?? .null })
                let current = state.rows[table.name]?[key]
                let currentVersion = current.map { $0.deleted ? 0 : $0.version } ?? 0
                let result: SyncMutationResult
                if mutation.op == .upsert,
                    let column = table.notNull.first(where: { (mutation.row?[$0] ?? .null) == .null })
                {
                    result = SyncMutationResult(
                        seq: mutation.seq, status: .rejected, error: "column \"\(column)\" is NOT NULL")
                } else if mutation.baseVersion != currentVersion {
                    result = SyncMutationResult(
                        seq: mutation.seq, status: .conflict,
                        current: SyncCurrentRow(
                            version: current?.version ?? 0, deleted: current?.deleted ?? true,
                            row: current.map { table.served($0.row) } ?? mutation.key))
                } else {
                    state.counter += 1
                    state.rows[table.name, default: [:]][key] = Stored(
                        version: state.counter, deleted: mutation.op == .delete, row: source)
                    result = SyncMutationResult(seq: mutation.seq, status: .applied, version: state.counter)
                }
                state.results[id] = result
                results.append(result)
            }
            return PostDataResponse(results: results)
        }
    }
}

/// One account's way to the fake server, with hooks that run before (or after) a call to
/// simulate a network failure, a lost answer, a cancelled task or a concurrent app write.
final class FakeTransport: SyncTransport {
    enum Moment: Sendable {
        /// Before the server sees the request.
        case before
        /// After the server handled it, before the client sees the answer.
        case after
    }

    struct Hook: Sendable {
        var call: String
        var moment: Moment
        var action: @Sendable () async throws -> Void
    }

    let server: FakeSyncServer
    let token: String
    let hooks = Mutex<[Hook]>([])
    let calls = Mutex<[String]>([])

    init(server: FakeSyncServer, token: String) {
        self.server = server
        self.token = token
    }

    /// Runs `action` once, at the next `call` ("check-update", "fetch-schema", "fetch-data",
    /// "post-data") at `moment`. A throwing action makes the call fail.
    func once(_ call: String, _ moment: Moment = .before, _ action: @escaping @Sendable () async throws -> Void) {
        hooks.withLock { $0.append(Hook(call: call, moment: moment, action: action)) }
    }

    /// A network failure at the next `call`.
    func failOnce(_ call: String, _ moment: Moment = .before) {
        once(call, moment) { throw SyncError(.network, "simulated network failure") }
    }

    private func run(_ call: String, _ moment: Moment) async throws {
        let hook = hooks.withLock { hooks -> Hook? in
            guard let index = hooks.firstIndex(where: { $0.call == call && $0.moment == moment }) else { return nil }
            return hooks.remove(at: index)
        }
        try await hook?.action()
    }

    private func perform<T>(_ call: String, _ body: () throws -> T) async throws -> T {
        calls.withLock { $0.append(call) }
        try await run(call, .before)
        let result = try body()
        try await run(call, .after)
        return result
    }

    func checkUpdate(_ request: CheckUpdateRequest) async throws -> CheckUpdateResponse {
        try await perform("check-update") { try server.checkUpdate(token: token, request) }
    }

    func fetchSchema(_ request: FetchSchemaRequest) async throws -> FetchSchemaResponse {
        try await perform("fetch-schema") { try server.fetchSchema(token: token, request) }
    }

    func fetchData(_ request: FetchDataRequest) async throws -> FetchDataResponse {
        try await perform("fetch-data") { try server.fetchData(token: token, request) }
    }

    func postData(_ request: PostDataRequest) async throws -> PostDataResponse {
        try await perform("post-data") { try server.postData(token: token, request) }
    }
}
