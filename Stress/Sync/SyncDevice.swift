import Foundation
import HarnessSupport
import SerialDB
import SerialDBSync

/// One device of the sync scenario: its own database file (opened through `AccountDatabases`
/// in its own directory), a `SyncClient` that follows the server across restarts, and its
/// ledger. The harness drives it from one thread, one action at a time.
final class SyncDevice: Sendable {
    let name: String
    let account: String
    let token: String
    /// The database file (child syncs open it too).
    let path: String
    let queue: DatabaseQueue
    let client: SyncClient
    let ledger: Locked<DeviceLedger>
    /// `--break skip-outbox`: writes with the outbox triggers quiet.
    let skipsOutbox: Bool

    /// The synced table, as the server declares it. `prev` is the value an update replaced on
    /// this device, so the checks can tell an update the server applied over a newer value.
    static let table = "item"
    static let schema =
        "CREATE TABLE item(id TEXT PRIMARY KEY NOT NULL, origin TEXT NOT NULL, val TEXT NOT NULL, prev TEXT)"

    init(name: String, account: String, token: String, directory: URL, server: SyncServerProcess, skipsOutbox: Bool)
        throws
    {
        self.name = name
        self.account = account
        self.token = token
        self.skipsOutbox = skipsOutbox
        let accounts = try AccountDatabases(directory: directory)
        queue = try accounts.open(account: account)
        path = try accounts.fileURL(forAccount: account).path
        let ledger = Locked(DeviceLedger())
        self.ledger = ledger
        client = try SyncClient(
            queue: queue, transport: RoutingTransport(server: server, token: token),
            conflictResolver: { conflict in
                // Inside the settling transaction, on the device's sync: no local write runs now.
                ledger.withLock { $0.recordConflict(key: SyncDevice.keyText(conflict.key)) }
                return .keepServer
            }, pageSize: 100)
    }

    /// Inserts, updates or deletes a random row, commits, and records the change. Every value
    /// is unique (`DEVICE-SEQ`), so the checks can tell which change a row holds.
    func writeRandomly(using random: inout SeededRandom) throws {
        let ids = try queue.read { db in try db.fetchAll(String.self, sql: "SELECT id FROM item ORDER BY id") }
        let roll = Double.random(in: 0..<1, using: &random)
        // Half the updates and deletes go to the first few rows, which every device of the
        // account holds once synced: two devices then often change one row, and conflicts are
        // common, not rare.
        let hot = Bool.random(using: &random) ? min(ids.count, 3) : ids.count
        let picked = ids.isEmpty ? nil : ids[Int.random(in: 0..<hot, using: &random)]
        if let picked, roll >= 0.4 {
            try write(roll < 0.75 ? .update : .delete, key: picked)
        } else {
            _ = try insert()
        }
    }

    /// Inserts a new row, commits, records it, and returns its id.
    func insert() throws -> String {
        let key = "\(name)-k\(ledger.withLock { $0.lastSeq + 1 })"
        try write(.insert, key: key)
        return key
    }

    /// Gives the row `key` a new value (the old one goes to `prev`), commits, and records it.
    func update(_ key: String) throws {
        try write(.update, key: key)
    }

    /// Deletes the row `key`, commits, and records it.
    func delete(_ key: String) throws {
        try write(.delete, key: key)
    }

    private enum Operation: Sendable {
        case insert, update, delete
    }

    private func write(_ operation: Operation, key: String) throws {
        let seq = ledger.withLock { $0.lastSeq + 1 }
        let value = "\(name)-\(seq)"
        let skipsOutbox = skipsOutbox
        let name = name
        try queue.write { db in
            // The broken client: the same flag the library raises while it applies server rows.
            if skipsOutbox { try db.execute(sql: "UPDATE serialdb_sync_state SET applying = 1") }
            switch operation {
            case .insert:
                try db.execute(
                    sql: "INSERT INTO item(id, origin, val) VALUES (?, ?, ?)", arguments: [key, name, value])
            case .update:
                try db.execute(sql: "UPDATE item SET prev = val, val = ? WHERE id = ?", arguments: [value, key])
            case .delete:
                try db.execute(sql: "DELETE FROM item WHERE id = ?", arguments: [key])
            }
            if skipsOutbox { try db.execute(sql: "UPDATE serialdb_sync_state SET applying = 0") }
        }
        ledger.withLock { $0.record(key: key, value: operation == .delete ? nil : value) }
    }

    /// One sync in this process, waited for on the calling thread.
    func sync() -> Result<SyncReport, any Error> {
        Self.blockingSync(client)
    }

    /// Runs `client.sync()` on a task and waits for it on the calling thread (a device's own
    /// thread, never one of the cooperative pool's). A sync cannot hang: every request has
    /// URLSession's timeout.
    static func blockingSync(_ client: SyncClient) -> Result<SyncReport, any Error> {
        let outcome = Locked<Result<SyncReport, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                let report = try await client.sync()
                outcome.withLock { $0 = .success(report) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        return outcome.withLock { $0! }
    }

    /// The id of a row's key, as the ledger writes it.
    static func keyText(_ key: [String: DatabaseValue]) -> String {
        key["id"].flatMap { String.fromDatabaseValue($0) } ?? "\(key)"
    }

    /// What the device holds now, for the final checks.
    func snapshot() throws -> DeviceSnapshot {
        try queue.read { db in
            var rows: [String: StoredSyncRow] = [:]
            for row in try db.fetchAll(Row.self, sql: "SELECT id, origin, val FROM item") {
                rows[try row.decode(at: 0)] = StoredSyncRow(origin: try row.decode(at: 1), value: try row.decode(at: 2))
            }
            let cursor =
                try db.fetchOne(
                    Int64.self, sql: "SELECT Version FROM TableVersion WHERE TableName = ?", arguments: [Self.table])
                ?? 0
            let clientID = try db.fetchOne(String.self, sql: "SELECT client_id FROM serialdb_sync_state") ?? ""
            return DeviceSnapshot(
                name: name, account: account, clientID: clientID, rows: rows, cursor: cursor,
                ledger: ledger.withLock { $0 })
        }
    }
}

/// A row of the synced table, as a device or the server holds it.
struct StoredSyncRow: Sendable, Equatable {
    let origin: String
    let value: String
}

/// A device's state after the final syncs.
struct DeviceSnapshot: Sendable {
    let name: String
    let account: String
    let clientID: String
    let rows: [String: StoredSyncRow]
    /// `TableVersion.Version` of the synced table.
    let cursor: Int64
    let ledger: DeviceLedger
}
