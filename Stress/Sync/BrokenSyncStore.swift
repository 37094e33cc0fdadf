import Foundation
import HarnessSupport
import SerialDBSyncServer

/// A store that breaks one promise of ``SyncStore`` on purpose (``SyncBreak``), around the real
/// store, in the server child only.
final class BrokenSyncStore: SyncStore {
    private let base: any SyncStore
    private let mode: SyncBreak
    /// Versions already held back once (cursor-order): each is held back a single time.
    private let heldBack = Locked(Set<Int64>())

    init(_ base: any SyncStore, mode: SyncBreak) {
        self.base = base
        self.mode = mode
    }

    func latestVersions(of tables: [(table: String, owner: String)]) throws -> [Int64] {
        try base.latestVersions(of: tables)
    }

    func changes(table: String, owner: String, since: Int64, limit: Int, maximumBytes: Int) throws -> SyncChangePage {
        var page = try base.changes(table: table, owner: owner, since: since, limit: limit, maximumBytes: maximumBytes)
        switch mode {
        case .forgetTombstones:
            page.changes.removeAll(where: \.deleted)
        case .cursorOrder:
            // Every change but the page's newest "has not committed yet" the first time it is
            // served, while the newest has: the page's cursor passes them, and later pages
            // start above them.
            let held = heldBack.withLock { heldBack in
                Set(page.changes.dropLast().map(\.version).filter { heldBack.insert($0).inserted })
            }
            page.changes = page.changes.filter { !held.contains($0.version) }
        case .skipOutbox, .lastWriterWins:
            break
        }
        return page
    }

    func apply(account: String, clientID: String?, mutations: [SyncStoreMutation]) throws -> [SyncUploadOutcome] {
        guard mode == .lastWriterWins else {
            return try base.apply(account: account, clientID: clientID, mutations: mutations)
        }
        // No base version: the store writes over whatever it holds, as for an administrative load.
        let unchecked = mutations.map { mutation in
            var mutation = mutation
            mutation.baseVersion = nil
            return mutation
        }
        return try base.apply(account: account, clientID: clientID, mutations: unchecked)
    }

    func purgeTombstones(through version: Int64) throws -> (purged: Int, floor: Int64) {
        try base.purgeTombstones(through: version)
    }

    func purgeFloor() throws -> Int64 {
        try base.purgeFloor()
    }

    func currentVersion() throws -> Int64 {
        try base.currentVersion()
    }

    func summary() throws -> SyncStoreSummary {
        try base.summary()
    }

    func purgeResults(olderThan retention: TimeInterval) throws -> Int {
        try base.purgeResults(olderThan: retention)
    }

    func adoptDefinition(
        table: String, schema: String, renamedFrom: String?, carryOver: ([SyncStoredRow]) throws -> [SyncStoredRow]
    ) throws {
        try base.adoptDefinition(table: table, schema: schema, renamedFrom: renamedFrom, carryOver: carryOver)
    }

    func close() throws {
        try base.close()
    }
}
