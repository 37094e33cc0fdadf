import Foundation
import SerialDB
import SerialDBSync
import SerialDBTestSupport

/// The note table of the protocol's examples, and a global one.
let noteTable = InProcessSyncServer.Table(
    name: "note", schema: "CREATE TABLE note(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, body TEXT)")
let countryTable = InProcessSyncServer.Table(
    name: "country", scope: .global,
    schema: "CREATE TABLE country(code TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL)")

/// One device: a database (file or memory) with a sync client on a transport.
struct Device {
    let queue: DatabaseQueue
    let client: SyncClient
    let transport: InProcessTransport

    init(
        _ kind: DatabaseKind, in directory: TemporaryDirectory, name: String, server: InProcessSyncServer,
        token: String = "t-alice", resolver: (@Sendable (SyncConflict) -> SyncConflictResolution)? = nil,
        pageSize: Int = 500
    ) throws {
        queue = try kind.makeQueue(in: directory, name: name + ".sqlite")
        transport = server.transport(token: token)
        client = try SyncClient(queue: queue, transport: transport, conflictResolver: resolver, pageSize: pageSize)
    }

    func insertNote(_ id: String, _ title: String, body: String? = nil) throws {
        try queue.write { db in
            try db.execute(sql: "INSERT INTO note(id, title, body) VALUES (?, ?, ?)", arguments: [id, title, body])
        }
    }

    func execute(_ sql: String, _ arguments: StatementArguments = []) throws {
        try queue.write { db in try db.execute(sql: sql, arguments: arguments) }
    }

    /// id → title of every note.
    func titles() throws -> [String: String] {
        let rows = try queue.read { db in try db.fetchAll(Row.self, sql: "SELECT id, title FROM note") }
        return Dictionary(
            uniqueKeysWithValues: try rows.map {
                (try $0.decode(String.self, at: 0), try $0.decode(String.self, at: 1))
            })
    }

    func outboxCount() throws -> Int {
        try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM serialdb_sync_outbox") ?? 0 }
    }

    func cursor(_ table: String = "note") throws -> Int64? {
        try queue.read { db in
            try db.fetchOne(Int64.self, sql: "SELECT Version FROM TableVersion WHERE TableName = ?", arguments: [table])
        }
    }
}
