import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

@testable import SerialDBSync

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

    /// Puts the database back in the layout of the release before `sent_through`, as that
    /// release left it: each sent entry flagged `sent = 1` (with their partial index), and
    /// outbox triggers that replace an entry only while it is flagged unsent.
    func revertToSentFlagLayout() throws {
        try queue.write { db in
            try db.execute(sql: "ALTER TABLE serialdb_sync_outbox ADD COLUMN sent INTEGER NOT NULL DEFAULT 0")
            try db.execute(sql: "UPDATE serialdb_sync_outbox SET sent = 1 WHERE seq <= \(SyncMetadata.sentThroughSQL)")
            try db.execute(sql: "CREATE INDEX serialdb_sync_outbox_sent ON serialdb_sync_outbox(seq) WHERE sent = 1")
            let triggers = try db.fetchAll(
                Row.self,
                sql: "SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' AND name LIKE 'serialdb_sync_%'")
            for trigger in triggers {
                let name: String = try trigger.decode(at: 0)
                let sql: String = try trigger.decode(at: 1)
                #expect(sql.contains(ChangeCapture.unsent))
                try db.execute(sql: "DROP TRIGGER \(name.quotedDatabaseIdentifier)")
                try db.execute(sql: sql.replacingOccurrences(of: ChangeCapture.unsent, with: "sent = 0"))
            }
            try db.execute(sql: "ALTER TABLE serialdb_sync_state DROP COLUMN sent_through")
        }
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
