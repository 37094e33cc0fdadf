import Foundation
import SerialDBSyncWire

/// The sync protocol, independent of HTTP and of the store: takes a request (method, path,
/// authorization, body) and returns the status and JSON body the wire protocol fixes (the README's "Sync server").
///
/// ``SyncServer`` feeds it the requests libmicrohttpd receives; tests and other servers can
/// call ``handle(_:)`` directly.
///
/// ```swift
/// let service = SyncService(configuration: configuration, store: try SQLiteSyncStore(path: "server.sqlite"))
/// let response = service.handle(SyncRequest(method: "POST", path: "/v1/check-update",
///                                           authorization: "Bearer t-alice", body: Data(#"{"tables": []}"#.utf8)))
/// ```
public final class SyncService: Sendable {
    /// The tables and sign-in served now: the last configuration ``reload(_:)`` accepted, or
    /// the first one.
    public var configuration: SyncServerConfiguration { served.snapshot }
    /// Where rows are kept.
    public let store: any SyncStore
    private let served: ServedConfiguration

    /// fetch-data's page size when the request names none, and the most it may ask for.
    public static let defaultFetchLimit = 500
    /// The largest page fetch-data returns, whatever the request asks for.
    public static let maximumFetchLimit = 5000
    /// How long upload results are kept when the purge names no window: 7 days
    /// (``SyncStore/purgeResults(olderThan:)``).
    public static let defaultResultRetention: TimeInterval = 7 * 24 * 3600
    /// The most bytes of JSON a fetch-data page holds: it stops before a change that would take
    /// it past them, unless that change comes first (a page always holds at least one), and
    /// says `has_more`.
    public static let maximumPageBytes = 4 * 1024 * 1024

    /// Serves `configuration` from `store`, first bringing the stored rows of each table whose
    /// definition changed into the new one (see ``SyncStore/adoptDefinition(table:schema:renamedFrom:carryOver:)``).
    ///
    /// - Throws: ``SyncServerError/Code/invalidConfiguration`` naming the table and the stored
    ///   rows when the new definition refuses rows the store holds (a new NOT NULL column
    ///   without a DEFAULT, a new CHECK or UNIQUE they break); nothing is changed then. The
    ///   store's errors.
    public init(configuration: SyncServerConfiguration, store: any SyncStore) throws {
        try Self.adopt(configuration, into: store)
        self.store = store
        served = ServedConfiguration(configuration)
    }

    /// Serves `configuration` from now on, as a restart with it would: the stored rows of each
    /// table whose definition changed are brought into the new one first. Requests already
    /// started finish with the configuration they started with; a reload waits for those
    /// being handled, and requests arriving meanwhile wait for it.
    ///
    /// - Throws: as ``init(configuration:store:)``; the configuration served and the stored
    ///   rows are then unchanged.
    public func reload(_ configuration: SyncServerConfiguration) throws {
        try served.replace { _ in
            try Self.adopt(configuration, into: store)
            return configuration
        }
    }

    /// Brings the stored rows of each table whose definition changed into the new one. Every
    /// table is first carried over and rolled back, so that a definition the stored rows refuse
    /// leaves every table as it was, not only its own.
    private static func adopt(_ configuration: SyncServerConfiguration, into store: any SyncStore) throws {
        struct Tried: Error {}
        for table in configuration.tables {
            do {
                try store.adoptDefinition(
                    table: table.name, schema: table.schema, renamedFrom: table.renamedFrom,
                    carryOver: { rows in
                        _ = try table.carryOver(rows)
                        throw Tried()
                    })
            } catch is Tried {}
        }
        for table in configuration.tables {
            try store.adoptDefinition(
                table: table.name, schema: table.schema, renamedFrom: table.renamedFrom,
                carryOver: { try table.carryOver($0) })
        }
    }

    /// The answer to a request that its method, path and `Authorization` header alone refuse
    /// (404, 405, 401), or `nil` when its body must be read. A server calls it as soon as the
    /// headers are in, so that a caller without a valid token cannot make it buffer a body.
    ///
    /// - Parameter configuration: the request's snapshot (``configuration`` when it started);
    ///   the current one when `nil`.
    public func refusal(
        method: String, path: String, authorization: String?, configuration: SyncServerConfiguration? = nil
    ) -> SyncResponse? {
        do {
            _ = try route(method: method, path: path)
            _ = try authenticate(authorization, in: configuration ?? self.configuration)
            return nil
        } catch {
            return SyncResponse(status: error.status, body: error.body)
        }
    }

    /// Answers one request. Never throws: every failure is a status and an error body.
    ///
    /// - Parameters:
    ///   - request: the request.
    ///   - snapshot: the configuration the request started with (``configuration`` when its
    ///     headers arrived); the current one when `nil`. Should a reload have changed the table
    ///     definitions since, the request is handled under the new configuration, whose
    ///     definitions the stored rows are in.
    public func handle(_ request: SyncRequest, configuration snapshot: SyncServerConfiguration? = nil) -> SyncResponse {
        served.handle(with: snapshot ?? configuration) { configuration in
            handle(request, in: configuration)
        }
    }

    private func handle(_ request: SyncRequest, in configuration: SyncServerConfiguration) -> SyncResponse {
        var account: String?
        do {
            let call = try route(method: request.method, path: request.path)
            let owner = try authenticate(request.authorization, in: configuration)
            account = owner
            let body: JSONValue
            do {
                body = try JSONValue.parse(request.body)
            } catch let error as JSONParseError {
                throw SyncRequestError.badRequest(error.message)
            }
            let response: Data
            var rows = SyncRowCounts()
            switch call {
            case .checkUpdate: response = try checkUpdate(body, account: owner, in: configuration)
            case .fetchSchema: response = try fetchSchema(body, in: configuration)
            case .fetchData: response = try fetchData(body, account: owner, rows: &rows, in: configuration)
            case .postData: response = try postData(body, account: owner, rows: &rows, in: configuration)
            case .other: throw SyncRequestError.notFound(request.path)
            }
            return SyncResponse(status: 200, body: response, account: account, rows: rows)
        } catch let error as SyncRequestError {
            return SyncResponse(status: error.status, body: error.body, account: account)
        } catch {
            // A store failure: the client learns only that it failed; the log gets the cause.
            let failure = SyncRequestError.internalError
            return SyncResponse(status: failure.status, body: failure.body, account: account, internalError: "\(error)")
        }
    }

    /// Writes rows into a table without a client: how global tables (which no client may
    /// write) are filled, or an account's rows seeded. Each row gets a new version; base
    /// versions are not checked and nothing is remembered for retries.
    ///
    /// - Parameters:
    ///   - rows: JSON objects, one per row, in the wire encoding.
    ///   - table: a configured table.
    ///   - account: the owner of the rows; ignored for a global table.
    /// - Returns: one result per row: `applied`, or `rejected` with the validation message.
    /// - Throws: ``SyncServerError/Code/invalidStore`` for an unknown table; the store's errors.
    public func load(rows: [JSONValue], into table: String, account: String = "") throws -> [SyncMutationResult] {
        try served.handle(with: configuration) { configuration in
            try load(rows: rows, into: table, account: account, in: configuration)
        }
    }

    private func load(rows: [JSONValue], into table: String, account: String, in configuration: SyncServerConfiguration)
        throws -> [SyncMutationResult]
    {
        guard let synced = configuration.table(named: table) else {
            throw SyncServerError(.invalidStore, "there is no synced table \(JSONWriter.quoted(table))")
        }
        let owner = synced.scope == .global ? "" : account
        let mutations = rows.enumerated().map { index, json in
            let action: SyncMutation.Action
            var uniqueValues: [SyncUniqueValue] = []
            do throws(SyncRejection) {
                guard let members = json.objectValue else { throw SyncRejection("a row must be a JSON object") }
                let row = try synced.validate(row: members)
                action = .upsert(key: row.key, keyJSON: row.keyJSON, rowJSON: row.rowJSON)
                uniqueValues = row.uniqueValues
            } catch {
                action = .reject(message: error.message)
            }
            return SyncMutation(
                seq: Int64(index + 1), table: synced.name, owner: owner, action: action, baseVersion: nil,
                checksUniqueness: !synced.uniqueConstraints.isEmpty, uniqueValues: uniqueValues)
        }
        return try store.apply(account: owner, clientID: nil, mutations: mutations)
    }

    private func route(method: String, path: String) throws(SyncRequestError) -> SyncCall {
        let call = SyncCall(path: path)
        guard call != .other else { throw .notFound(path) }
        guard method == "POST" else { throw .methodNotAllowed(method) }
        return call
    }

    private func authenticate(_ authorization: String?, in configuration: SyncServerConfiguration)
        throws(SyncRequestError) -> String
    {
        // A NUL ends the header for C code: what follows it must not decide anything.
        guard let header = authorization, !header.utf8.contains(0) else { throw .unauthorized }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { throw .unauthorized }
        return try configuration.signIn(token: parts[1].trimmingCharacters(in: .whitespaces), now: Date())
    }

    private func table(_ name: String, in configuration: SyncServerConfiguration) throws(SyncRequestError) -> SyncTable
    {
        guard let table = configuration.table(named: name) else {
            throw .badRequest("there is no synced table \(JSONWriter.quoted(name))")
        }
        return table
    }

    private func owner(of table: SyncTable, account: String) -> String {
        table.scope == .global ? "" : account
    }

    // MARK: - check-update

    private func checkUpdate(_ body: JSONValue, account: String, in configuration: SyncServerConfiguration) throws
        -> Data
    {
        let request = try RequestFields(body, context: "the request")
        var known: [String: (structVersion: Int64, version: Int64)] = [:]
        for (index, entry) in try request.array("tables").enumerated() {
            let fields = try RequestFields(entry, context: "table entry \(index + 1)")
            known[try fields.string("table")] = (try fields.count("struct_version")!, try fields.count("version")!)
        }
        let tables = configuration.tables
        let versions = try store.latestVersions(of: tables.map { ($0.name, owner(of: $0, account: account)) })
        let floor = try store.purgeFloor()
        var writer = JSONWriter(capacity: 128 + 160 * tables.count)
        writer.raw("{\"account\":")
        writer.string(account)
        writer.raw(",\"tables\":[")
        for (index, table) in tables.enumerated() {
            let client = known[table.name]
            if index > 0 { writer.raw(",") }
            writer.raw("{\"table\":")
            writer.string(table.name)
            writer.raw(",\"scope\":")
            writer.string(table.scope.rawValue)
            writer.raw(",\"owner\":")
            writer.string(owner(of: table, account: account))
            writer.raw(",\"struct_version\":")
            writer.integer(table.structVersion)
            writer.raw(",\"version\":")
            writer.integer(versions[index])
            writer.raw(",\"schema_changed\":")
            writer.bool(client?.structVersion != table.structVersion)
            writer.raw(",\"data_changed\":")
            // Below the floor a purge took tombstones the client has not seen: it must fetch,
            // and fetch-data tells it to resync.
            let since = client?.version ?? 0
            writer.bool(versions[index] > since || (since > 0 && since < floor))
            writer.raw(",\"floor\":")
            writer.integer(floor)
            writer.raw("}")
        }
        writer.raw("]}")
        return writer.data
    }

    // MARK: - fetch-schema

    private func fetchSchema(_ body: JSONValue, in configuration: SyncServerConfiguration) throws -> Data {
        let table = try table(try RequestFields(body, context: "the request").string("table"), in: configuration)
        var writer = JSONWriter(capacity: 64 + table.schema.utf8.count)
        writer.raw("{\"table\":")
        writer.string(table.name)
        writer.raw(",\"struct_version\":")
        writer.integer(table.structVersion)
        writer.raw(",\"schema\":")
        writer.string(table.schema)
        if let renamedFrom = table.renamedFrom {
            writer.raw(",\"renamed_from\":")
            writer.string(renamedFrom)
        }
        if !table.renamedColumns.isEmpty {
            writer.raw(",\"renamed_columns\":{")
            for (index, (new, old)) in table.renamedColumns.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { writer.raw(",") }
                writer.string(new)
                writer.raw(":")
                writer.string(old)
            }
            writer.raw("}")
        }
        writer.raw("}")
        return writer.data
    }

    // MARK: - fetch-data

    private func fetchData(
        _ body: JSONValue, account: String, rows: inout SyncRowCounts, in configuration: SyncServerConfiguration
    ) throws -> Data {
        let request = try RequestFields(body, context: "the request")
        let table = try table(try request.string("table"), in: configuration)
        let since = try request.count("since")!
        let asked = try request.count("limit", required: false) ?? Int64(Self.defaultFetchLimit)
        guard asked >= 1 else { throw SyncRequestError.badRequest("\"limit\" must be 1 or more") }
        let limit = Int(min(asked, Int64(Self.maximumFetchLimit)))
        // Every page of a resync after its first says so: it is never sent back to 0, so a
        // resync pages through a table of any size even while purges raise the floor.
        let resyncing = try request.flag("resyncing")
        var writer = JSONWriter(capacity: 128)
        writer.raw("{\"table\":")
        writer.string(table.name)
        writer.raw(",\"changes\":[")
        // What follows the changes: `],"version":` and a version, and the flags.
        let tail = 128
        let page = try store.changes(
            table: table.name, owner: owner(of: table, account: account), since: since, limit: limit,
            maximumBytes: Self.maximumPageBytes - writer.bytes.count - tail)
        let resync = page.mustResync(since: since, resyncing: resyncing)
        let changes = resync ? [] : page.changes
        rows.served = changes.count
        writer.reserve(changes.reduce(tail) { $0 + $1.wireSize })
        for (index, change) in changes.enumerated() {
            if index > 0 { writer.raw(",") }
            writeChange(change, into: &writer)
        }
        writer.raw("],\"version\":")
        // The cursor to store: the last change served; unchanged when there was none; 0 when
        // the client must start again.
        writer.integer(resync ? 0 : changes.last?.version ?? since)
        writer.raw(",\"has_more\":")
        writer.bool(!resync && page.hasMore)
        writer.raw(",\"resync\":")
        writer.bool(resync)
        writer.raw(",\"floor\":")
        writer.integer(page.floor)
        writer.raw("}")
        return writer.data
    }

    private func writeChange(_ change: SyncChange, into writer: inout JSONWriter) {
        writer.raw("{\"version\":")
        writer.integer(change.version)
        writer.raw(",\"deleted\":")
        writer.bool(change.deleted)
        writer.raw(",\"row\":")
        writer.rawJSON(change.rowJSON)
        writer.raw("}")
    }

    // MARK: - post-data

    private func postData(
        _ body: JSONValue, account: String, rows: inout SyncRowCounts, in configuration: SyncServerConfiguration
    ) throws -> Data {
        let request = try RequestFields(body, context: "the request")
        let clientID = try request.string("client_id")
        guard !clientID.isEmpty else { throw SyncRequestError.badRequest("\"client_id\" must not be empty") }
        guard !clientID.utf8.contains(0) else {
            throw SyncRequestError.badRequest("\"client_id\" must not contain NUL (\\u0000)")
        }
        let entries = try request.array("mutations")
        var mutations: [SyncMutation] = []
        mutations.reserveCapacity(entries.count)
        // The whole request is checked before anything is applied: a malformed mutation or a
        // write to a global table refuses the request, so none of it is half-applied.
        var seqs = Set<Int64>(minimumCapacity: entries.count)
        for (index, entry) in entries.enumerated() {
            let mutation = try mutation(entry, position: index + 1, account: account, in: configuration)
            // One seq is one result: two mutations under it could not both be answered on a retry.
            guard seqs.insert(mutation.seq).inserted else {
                throw SyncRequestError.badRequest(
                    "mutation \(index + 1) repeats seq \(mutation.seq); each mutation of a request needs its own seq")
            }
            mutations.append(mutation)
        }
        let results = try store.apply(account: account, clientID: clientID, mutations: mutations)
        var writer = JSONWriter(capacity: 16 + 48 * results.count)
        writer.raw("{\"results\":[")
        for (index, result) in results.enumerated() {
            if index > 0 { writer.raw(",") }
            writer.raw("{\"seq\":")
            writer.integer(mutations[index].seq)
            switch result {
            case .applied(let version):
                rows.applied += 1
                writer.raw(",\"status\":\"applied\",\"version\":")
                writer.integer(version)
            case .conflict(let current):
                rows.conflicts += 1
                writer.raw(",\"status\":\"conflict\",\"current\":")
                writeChange(current, into: &writer)
            case .rejected(let message):
                rows.rejected += 1
                writer.raw(",\"status\":\"rejected\",\"error\":")
                writer.string(message)
            case .duplicate:
                rows.duplicates += 1
                writer.raw(",\"status\":\"duplicate\"")
            }
            writer.raw("}")
        }
        writer.raw("]}")
        return writer.data
    }

    private func mutation(
        _ entry: JSONValue, position: Int, account: String, in configuration: SyncServerConfiguration
    ) throws -> SyncMutation {
        let fields = try RequestFields(entry, context: "mutation \(position)")
        let seq = try fields.count("seq")!
        let tableName = try fields.string("table")
        guard let table = configuration.table(named: tableName) else {
            // A table the configuration no longer lists: the client may still hold edits of it,
            // which must leave its outbox without holding back the rest of the request.
            return SyncMutation(
                seq: seq, table: tableName, owner: account,
                action: .reject(
                    message: "there is no synced table \(JSONWriter.quoted(tableName)); the server does not sync it"),
                baseVersion: nil)
        }
        guard table.scope == .account else {
            throw SyncRequestError.forbidden(
                "table \(JSONWriter.quoted(table.name)) is global: every account reads it and none writes it")
        }
        let baseVersion = try fields.count("base_version")!
        let action: SyncMutation.Action
        var uniqueValues: [SyncUniqueValue] = []
        switch try fields.string("op") {
        case "upsert":
            let members = try fields.object("row")
            do throws(SyncRejection) {
                let row = try table.validate(row: members)
                action = .upsert(key: row.key, keyJSON: row.keyJSON, rowJSON: row.rowJSON)
                uniqueValues = row.uniqueValues
            } catch {
                action = .reject(message: error.message)
            }
        case "delete":
            let members = try fields.object("key")
            do throws(SyncRejection) {
                let key = try table.validate(key: members)
                action = .delete(key: key.key, keyJSON: key.keyJSON)
            } catch {
                action = .reject(message: error.message)
            }
        case let other:
            throw SyncRequestError.badRequest(
                "\"op\" in mutation \(position) must be \"upsert\" or \"delete\", not \(JSONWriter.quoted(other))")
        }
        return SyncMutation(
            seq: seq, table: table.name, owner: account, action: action, baseVersion: baseVersion,
            checksUniqueness: !table.uniqueConstraints.isEmpty, uniqueValues: uniqueValues)
    }
}
