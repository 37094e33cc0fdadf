import Foundation
import SerialDBSyncWire

/// The sync protocol, independent of HTTP and of the store: takes a request (method, path,
/// authorization, body) and returns the status and JSON body the wire protocol fixes (the README's "Sync server").
///
/// ``SyncServer`` feeds it the requests libmicrohttpd receives; tests and other servers can
/// call ``handle(_:configuration:)`` directly.
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

    /// fetch-data's page size when the request names none (`SyncLimits.defaultPageSize`).
    public static let defaultFetchLimit = SyncLimits.defaultPageSize
    /// The largest page fetch-data returns, whatever the request asks for (`SyncLimits.maximumPageSize`).
    public static let maximumFetchLimit = SyncLimits.maximumPageSize
    /// How long upload results are kept when the purge names no window: 7 days
    /// (``SyncStore/purgeResults(olderThan:)``).
    public static let defaultResultRetention: TimeInterval = 7 * 24 * 3600
    /// The most bytes of JSON a fetch-data page holds (`SyncLimits.maximumPageBytes`).
    public static let maximumPageBytes = SyncLimits.maximumPageBytes

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
    /// - Parameters:
    ///   - method: the HTTP method.
    ///   - path: the request's path (`/v1/post-data`).
    ///   - authorization: the `Authorization` header, if any.
    ///   - configuration: the request's snapshot (``configuration`` when it started); the
    ///     current one when `nil`.
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
            case .checkUpdate:
                response = try checkUpdate(try CheckUpdateRequest(json: body), account: owner, in: configuration)
            case .fetchSchema: response = try fetchSchema(try FetchSchemaRequest(json: body), in: configuration)
            case .fetchData:
                response = try fetchData(
                    try FetchDataRequest(json: body), account: owner, rows: &rows, in: configuration)
            case .postData:
                response = try postData(
                    try ReceivedPostData(json: body), account: owner, rows: &rows, in: configuration)
            }
            return SyncResponse(status: 200, body: response, account: account, rows: rows)
        } catch let error as WireFormatError {
            let failure = SyncRequestError.badRequest(error.message)
            return SyncResponse(status: failure.status, body: failure.body, account: account)
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
    public func load(rows: [JSONValue], into table: String, account: String = "") throws -> [SyncUploadOutcome] {
        try served.handle(with: configuration) { configuration in
            try load(rows: rows, into: table, account: account, in: configuration)
        }
    }

    private func load(rows: [JSONValue], into table: String, account: String, in configuration: SyncServerConfiguration)
        throws -> [SyncUploadOutcome]
    {
        guard let synced = configuration.table(named: table) else {
            throw SyncServerError(.invalidStore, "there is no synced table \(JSONWriter.quoted(table))")
        }
        let owner = synced.scope == .global ? "" : account
        let mutations = rows.enumerated().map { index, json in
            let action: SyncStoreMutation.Action
            var uniqueValues: [SyncUniqueValue] = []
            do throws(SyncRejection) {
                guard let members = json.objectValue else { throw SyncRejection("a row must be a JSON object") }
                let row = try synced.validate(row: members)
                action = .upsert(key: row.key, keyJSON: row.keyJSON, rowJSON: row.rowJSON)
                uniqueValues = row.uniqueValues
            } catch {
                action = .reject(message: error.message)
            }
            return SyncStoreMutation(
                seq: Int64(index + 1), table: synced.name, owner: owner, action: action, baseVersion: nil,
                checksUniqueness: !synced.uniqueConstraints.isEmpty, uniqueValues: uniqueValues)
        }
        return try store.apply(account: owner, clientID: nil, mutations: mutations)
    }

    private func route(method: String, path: String) throws(SyncRequestError) -> SyncCall {
        guard let call = SyncCall(path: path) else { throw .notFound(path) }
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

    private func checkUpdate(_ request: CheckUpdateRequest, account: String, in configuration: SyncServerConfiguration)
        throws -> Data
    {
        var known: [String: CheckUpdateRequest.Table] = [:]
        for table in request.tables { known[table.table] = table }
        let tables = configuration.tables
        let versions = try store.latestVersions(of: tables.map { ($0.name, owner(of: $0, account: account)) })
        let floor = try store.purgeFloor()
        let answer = CheckUpdateResponse(
            account: account,
            tables: tables.enumerated().map { index, table in
                let client = known[table.name]
                // Below the floor a purge took tombstones the client has not seen: it must fetch,
                // and fetch-data tells it to resync.
                let since = client?.version ?? 0
                return CheckUpdateResponse.Table(
                    table: table.name, scope: table.scope.rawValue, owner: owner(of: table, account: account),
                    structVersion: table.structVersion, version: versions[index],
                    schemaChanged: client?.structVersion != table.structVersion,
                    dataChanged: versions[index] > since || (since > 0 && since < floor), floor: floor)
            })
        return Data(try answer.jsonBytes())
    }

    // MARK: - fetch-schema

    private func fetchSchema(_ request: FetchSchemaRequest, in configuration: SyncServerConfiguration) throws -> Data {
        let table = try table(request.table, in: configuration)
        let answer = FetchSchemaResponse(
            table: table.name, structVersion: table.structVersion, schema: table.schema,
            renamedFrom: table.renamedFrom, renamedColumns: table.renamedColumns)
        return Data(try answer.jsonBytes())
    }

    // MARK: - fetch-data

    private func fetchData(
        _ request: FetchDataRequest, account: String, rows: inout SyncRowCounts,
        in configuration: SyncServerConfiguration
    ) throws -> Data {
        let table = try table(request.table, in: configuration)
        let since = request.since
        let limit = min(request.limit, SyncLimits.maximumPageSize)
        var writer = JSONWriter(capacity: 128)
        FetchDataResponse.writeHead(table: table.name, to: &writer)
        let page = try store.changes(
            table: table.name, owner: owner(of: table, account: account), since: since, limit: limit,
            maximumBytes: SyncLimits.maximumPageBytes - writer.bytes.count - FetchDataResponse.tailSize)
        // Every page of a resync after its first says so: it is never sent back to 0, so a
        // resync pages through a table of any size even while purges raise the floor.
        let resync = page.mustResync(since: since, resyncing: request.resyncing)
        let changes = resync ? [] : page.changes
        rows.served = changes.count
        writer.reserve(changes.reduce(FetchDataResponse.tailSize) { $0 + $1.wireSize })
        for (index, change) in changes.enumerated() {
            if index > 0 { writer.raw(",") }
            change.write(to: &writer)
        }
        // The cursor to store: the last change served; unchanged when there was none; 0 when
        // the client must start again.
        FetchDataResponse.writeTail(
            version: resync ? 0 : changes.last?.version ?? since, hasMore: !resync && page.hasMore, resync: resync,
            floor: page.floor, to: &writer)
        return writer.data
    }

    // MARK: - post-data

    private func postData(
        _ request: ReceivedPostData, account: String, rows: inout SyncRowCounts,
        in configuration: SyncServerConfiguration
    ) throws -> Data {
        var mutations: [SyncStoreMutation] = []
        mutations.reserveCapacity(request.mutations.count)
        // The whole request is checked before anything is applied: a malformed mutation or a
        // write to a global table refuses the request, so none of it is half-applied.
        var seqs = Set<Int64>(minimumCapacity: request.mutations.count)
        for (index, entry) in request.mutations.enumerated() {
            let received = try ReceivedMutation(json: entry, position: index + 1)
            let mutation = try mutation(received, account: account, in: configuration)
            // One seq is one result: two mutations under it could not both be answered on a retry.
            guard seqs.insert(mutation.seq).inserted else {
                throw SyncRequestError.badRequest(
                    "mutation \(index + 1) repeats seq \(mutation.seq); each mutation of a request needs its own seq")
            }
            mutations.append(mutation)
        }
        let results = try store.apply(account: account, clientID: request.clientID, mutations: mutations)
        rows.count(results)
        var writer = JSONWriter()
        PostDataResponse.write(seqs: mutations.map(\.seq), outcomes: results, to: &writer)
        return writer.data
    }

    private func mutation(
        _ received: ReceivedMutation, account: String, in configuration: SyncServerConfiguration
    ) throws -> SyncStoreMutation {
        let seq = received.seq
        guard let table = configuration.table(named: received.table) else {
            // A table the configuration no longer lists: the client may still hold edits of it,
            // which must leave its outbox without holding back the rest of the request.
            return SyncStoreMutation(
                seq: seq, table: received.table, owner: account,
                action: .reject(
                    message:
                        "there is no synced table \(JSONWriter.quoted(received.table)); the server does not sync it"),
                baseVersion: nil)
        }
        guard table.scope == .account else {
            throw SyncRequestError.forbidden(
                "table \(JSONWriter.quoted(table.name)) is global: every account reads it and none writes it")
        }
        let baseVersion = try received.baseVersion()
        let action: SyncStoreMutation.Action
        var uniqueValues: [SyncUniqueValue] = []
        switch try received.operation() {
        case .upsert:
            let members = try received.row()
            do throws(SyncRejection) {
                let row = try table.validate(row: members)
                action = .upsert(key: row.key, keyJSON: row.keyJSON, rowJSON: row.rowJSON)
                uniqueValues = row.uniqueValues
            } catch {
                action = .reject(message: error.message)
            }
        case .delete:
            let members = try received.key()
            do throws(SyncRejection) {
                let key = try table.validate(key: members)
                action = .delete(key: key.key, keyJSON: key.keyJSON)
            } catch {
                action = .reject(message: error.message)
            }
        }
        return SyncStoreMutation(
            seq: seq, table: table.name, owner: account, action: action, baseVersion: baseVersion,
            checksUniqueness: !table.uniqueConstraints.isEmpty, uniqueValues: uniqueValues)
    }
}
