import Foundation
import SerialDBSync
import SerialDBSyncServer
import SerialDBTestSupport
import Synchronization

/// The real sync service, in process: a ``SyncService`` over a ``SQLiteSyncStore`` file, which
/// the client's tests reach through ``InProcessTransport`` with the protocol's real bytes
/// (no HTTP). Nothing of the protocol's rules is copied here: changing the served tables
/// starts a new service over the same store, as a server restarted with a new configuration.
final class InProcessSyncServer: Sendable {
    /// A table to serve, as a configuration file declares it.
    struct Table: Sendable {
        var name: String
        var scope: SyncScope = .account
        var structVersion: Int64 = 1
        var schema: String
        /// The table's name before a rename, and renamed columns (new → old).
        var renamedFrom: String?
        var renamedColumns: [String: String] = [:]

        func synced() throws -> SyncTable {
            try SyncTable(
                name: name, scope: scope, structVersion: structVersion, schema: schema, renamedFrom: renamedFrom,
                renamedColumns: renamedColumns)
        }
    }

    /// How the transports of this server bend its answers, for tests of the client against
    /// servers unlike this one: set before the calls they should affect.
    struct Bends: Sendable {
        /// A smaller page cap than the protocol's (a request's limit is lowered to it).
        var pageCap: Int?
        /// Serve as a server that predates protocol 1.1: `"resyncing"` is taken off requests
        /// and `"floor"` off answers.
        var ignoresResyncing = false
    }

    private struct State {
        var tables: [Table]
        var service: SyncService
    }

    /// The store's directory, removed with the server.
    private let directory: TemporaryDirectory
    /// The store every service of this server uses.
    let store: SQLiteSyncStore
    private let tokens: [String: String]
    private let state: Mutex<State>
    /// Every `client_id|seq` the transports sent, retries included.
    let receivedSeqs = Mutex<[String]>([])
    /// See ``Bends``.
    let bends = Mutex(Bends())

    init(tables: [Table], tokens: [String: String] = ["t-alice": "alice", "t-bob": "bob"]) throws {
        directory = try TemporaryDirectory()
        store = try SQLiteSyncStore(path: directory.path("server.sqlite"))
        self.tokens = tokens
        let service = try Self.service(tables, tokens: tokens, store: store)
        state = Mutex(State(tables: tables, service: service))
    }

    deinit {
        try? store.close()
    }

    private static func service(_ tables: [Table], tokens: [String: String], store: SQLiteSyncStore) throws
        -> SyncService
    {
        let configuration = try SyncServerConfiguration(tables: try tables.map { try $0.synced() }, tokens: tokens)
        return try SyncService(configuration: configuration, store: store)
    }

    /// A transport speaking for the account of `token`.
    func transport(token: String) -> InProcessTransport {
        InProcessTransport(server: self, token: token)
    }

    /// Answers one request, as the HTTP server would.
    func handle(_ request: SyncRequest) -> SyncResponse {
        state.withLock { $0.service }.handle(request)
    }

    /// Serves `tables` from now on (a restart with a new configuration); stored rows stay and
    /// are carried into the new definitions.
    private func serve(_ change: (inout [Table]) -> Void) throws {
        try state.withLock { state in
            var tables = state.tables
            change(&tables)
            state.service = try Self.service(tables, tokens: tokens, store: store)
            state.tables = tables
        }
    }

    /// Serves a new definition of `table.name` from now on.
    func replaceTable(_ table: Table) throws {
        try serve { tables in
            tables.removeAll { $0.name == table.name }
            tables.append(table)
        }
    }

    /// Serves `table` in place of `old` (its `renamedFrom`), with `old`'s stored rows.
    func renameTable(_ old: String, to table: Table) throws {
        try serve { tables in
            tables.removeAll { $0.name == old }
            tables.append(table)
        }
    }

    /// Stops serving a table, as a server whose configuration no longer lists it.
    func removeTable(_ name: String) throws {
        try serve { tables in tables.removeAll { $0.name == name } }
    }

    /// Removes tombstones through `version` and raises the floor (`purge-tombstones --through`).
    func purgeTombstones(through version: Int64) throws {
        _ = try store.purgeTombstones(through: version)
    }

    /// Drops every remembered upload result, as a purge does once the retention window has
    /// passed: a retry of one of those seqs is answered "duplicate".
    func expireResults() throws {
        _ = try store.purgeResults(olderThan: -1)
    }

    /// The highest version any served table holds for any account (the server's counter, as
    /// long as no purge removed the newest tombstones).
    func latestVersion() throws -> Int64 {
        let tables = state.withLock { $0.tables }
        let owners = [""] + Set(tokens.values).sorted()
        let pairs = tables.flatMap { table in owners.map { (table: table.name, owner: $0) } }
        return try store.latestVersions(of: pairs).max() ?? 0
    }

    /// The live rows `account` has in `table`.
    func rows(of table: String, account: String) throws -> [[String: SyncValue]] {
        let page = try store.changes(table: table, owner: account, since: 0, limit: 1_000_000)
        return try page.changes.filter { !$0.deleted }.map { change in
            try SyncValue.row(
                try JSONValue.parse(Array(change.rowJSON.utf8)).objectValue ?? [:], context: "a stored row")
        }
    }
}
