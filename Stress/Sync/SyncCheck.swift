/// The sync scenario's invariants, counted after the final syncs from the server's rows, the
/// server's audit of what it applied, and each device's rows, cursor and ledger.
struct SyncCheck: Sendable {
    /// Rows in which a device differs from its account's rows on the server (missing, extra or
    /// with another value), over all devices.
    private(set) var diverged = 0
    /// Keys whose last local change is neither on the server (an upsert the server applied, a
    /// key deleted there) nor reported to its device as a conflict.
    private(set) var lost = 0
    /// Rows, on the server or a device, inserted or written by a device of another account.
    private(set) var leaked = 0
    /// Rows holding a change that another row of the same place holds too.
    private(set) var duplicated = 0
    /// Rows holding a change the server never applied, or a change older than a delete of
    /// their key that the server applied (a deleted row brought back).
    private(set) var unexpected = 0
    /// Updates the server applied over a newer change than the one they replaced on their
    /// device: a stale update that should have been a conflict silently overwrote a newer one.
    private(set) var overwritten = 0
    /// Devices whose `TableVersion.Version` differs from the version the server hands out.
    private(set) var cursorMismatches = 0
    private(set) var writes = 0
    private(set) var conflicts = 0
    /// A few of the problems, for the summary.
    private(set) var examples: [String] = []

    init(server: ServerState, audit: SyncAudit, devices: [DeviceSnapshot]) {
        let accountOf = Dictionary(uniqueKeysWithValues: devices.map { ($0.name, $0.account) })
        for device in devices {
            writes += device.ledger.changes.count
            conflicts += device.ledger.conflicts
            let serverRows = server.rows[device.account] ?? [:]
            for (id, row) in device.rows where serverRows[id]?.row != row {
                diverged += 1
                note("\(device.name) holds \(id) = \(row.value), the server \(serverRows[id]?.row.value ?? "nothing")")
            }
            for id in serverRows.keys where device.rows[id] == nil {
                diverged += 1
                note("\(device.name) lacks \(id), which the server holds")
            }
            for (key, change) in device.ledger.lastChanges {
                if let through = device.ledger.conflictsThrough[key], through >= change.seq { continue }
                let onServer: Bool
                if let value = change.value {
                    onServer = audit.upserts[device.account]?[value] != nil
                } else {
                    // A delete is kept when the key is gone from the server: applied from this
                    // device, or dropped by the client because the server had deleted the key
                    // too (a conflict settled for a newer local change, which is not a lost one).
                    onServer =
                        audit.deletesByClient.contains("\(device.clientID) \(key)") || serverRows[key] == nil
                }
                if !onServer {
                    lost += 1
                    note("\(device.name)'s change \(change.value ?? "delete") of \(key) never reached the server")
                }
            }
            let serverCursor = server.cursors[device.account] ?? 0
            if device.cursor != serverCursor {
                cursorMismatches += 1
                note("\(device.name)'s cursor is \(device.cursor), the server's \(serverCursor)")
            }
            checkRows(device.rows, account: device.account, at: device.name, audit: audit, accountOf: accountOf)
        }
        for (account, rows) in server.rows.sorted(by: { $0.key < $1.key }) {
            checkRows(rows.mapValues(\.row), account: account, at: "the server", audit: audit, accountOf: accountOf)
        }
        checkOverwrites(audit)
    }

    /// An update that replaced a value the server had applied must come right after that value
    /// in the key's history: anything between (another update, a delete) makes its base
    /// version stale, and the server must answer a conflict. An update that replaced a value
    /// the server never had (a local change superseded by a conflict, or merged in the outbox)
    /// went up on the version its device learned since, and proves nothing either way.
    private mutating func checkOverwrites(_ audit: SyncAudit) {
        for (account, keys) in audit.history.sorted(by: { $0.key < $1.key }) {
            for (id, changes) in keys.sorted(by: { $0.key < $1.key }) {
                for (index, change) in changes.enumerated() {
                    guard let previous = change.previous, audit.upserts[account]?[previous] != nil else { continue }
                    let before = index > 0 ? changes[index - 1].value : nil
                    if before != previous {
                        overwritten += 1
                        note(
                            "the server applied \(change.value ?? "a delete") over \(before ?? "a delete") of \(id), "
                                + "though its device had replaced \(previous)")
                    }
                }
            }
        }
    }

    /// Leaks, duplicates and unexpected rows of one place (a device, or an account on the server).
    private mutating func checkRows(
        _ rows: [String: StoredSyncRow], account: String, at place: String, audit: SyncAudit,
        accountOf: [String: String]
    ) {
        var holders: [String: Int] = [:]
        for (id, row) in rows.sorted(by: { $0.key < $1.key }) {
            let writer = String(row.value.split(separator: "-").first ?? "")
            if accountOf[row.origin] != account || accountOf[writer] != account {
                leaked += 1
                note("\(place) (\(account)) holds \(id) = \(row.value) of another account")
            }
            holders[row.value, default: 0] += 1
            guard let applied = audit.upserts[account]?[row.value] else {
                unexpected += 1
                note("\(place) holds \(id) = \(row.value), which the server never applied")
                continue
            }
            if let deleted = audit.deletes[account]?[id], deleted > applied.version {
                unexpected += 1
                note("\(place) holds \(id) = \(row.value), deleted on the server after it")
            }
        }
        duplicated += holders.values.filter { $0 > 1 }.map { $0 - 1 }.reduce(0, +)
    }

    private mutating func note(_ problem: String) {
        if examples.count < 8 { examples.append(problem) }
    }
}
