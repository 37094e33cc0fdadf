import Foundation
import SerialDBSyncServer

/// The server's rows and cursors after the run, read through the store.
struct ServerState: Sendable {
    /// A live row and its version.
    struct Entry: Sendable {
        let row: StoredSyncRow
        let version: Int64
    }

    /// Account → id → live row (tombstones left out).
    var rows: [String: [String: Entry]] = [:]
    /// Account → the version check-update hands out for the synced table.
    var cursors: [String: Int64] = [:]

    /// Opens the stopped server's store and reads every change of each account from 0.
    static func read(from location: SyncStoreLocation, accounts: [String]) throws -> ServerState {
        let store = try location.open()
        var state = ServerState()
        do {
            for account in accounts {
                var rows: [String: Entry] = [:]
                var since: Int64 = 0
                while true {
                    let page = try store.changes(table: SyncDevice.table, owner: account, since: since, limit: 5000)
                    for change in page.changes where !change.deleted {
                        let fields = try SyncAudit.fields(of: change.rowJSON)
                        rows[fields.id] = Entry(
                            row: StoredSyncRow(origin: fields.origin ?? "", value: fields.value ?? ""),
                            version: change.version)
                    }
                    guard page.hasMore, let last = page.changes.last else { break }
                    since = last.version
                }
                state.rows[account] = rows
                state.cursors[account] =
                    try store.latestVersions(of: [(table: SyncDevice.table, owner: account)]).first ?? 0
            }
        } catch {
            try store.close()
            throw error
        }
        try store.close()
        return state
    }
}
