import Foundation
import HarnessSupport
import SerialDBSyncServer

/// The server child's record of every change its store applied, one line per change in a file
/// the parent reads at the end: what "on the server" means for the `lost` check, since the store
/// itself keeps only each key's latest state.
///
/// The line is written after the store committed and before the answer goes out. A kill in
/// between loses the line but not the change; the client, which got no answer, sends the same
/// seq again, the store answers with the remembered result, and the line is written then.
///
/// Line: `VERSION TAB upsert|delete TAB ACCOUNT TAB CLIENT-ID TAB ROW-OR-KEY-JSON`.
final class AuditingSyncStore: SyncStore {
    private let base: any SyncStore
    private let file: Locked<FileHandle>

    init(_ base: any SyncStore, auditPath: String) throws {
        self.base = base
        if !FileManager.default.fileExists(atPath: auditPath) {
            _ = FileManager.default.createFile(atPath: auditPath, contents: nil)
        }
        guard let handle = FileHandle(forWritingAtPath: auditPath) else {
            throw StressError("cannot open the audit file \(auditPath)")
        }
        file = Locked(handle)
    }

    func latestVersions(of tables: [(table: String, owner: String)]) throws -> [Int64] {
        try base.latestVersions(of: tables)
    }

    func changes(table: String, owner: String, since: Int64, limit: Int, maximumBytes: Int) throws -> SyncChangePage {
        try base.changes(table: table, owner: owner, since: since, limit: limit, maximumBytes: maximumBytes)
    }

    func apply(account: String, clientID: String?, mutations: [SyncStoreMutation]) throws -> [SyncUploadOutcome] {
        let results = try base.apply(account: account, clientID: clientID, mutations: mutations)
        var text = ""
        for (mutation, result) in zip(mutations, results) {
            guard case .applied(let version) = result else { continue }
            switch mutation.action {
            case .upsert(_, _, let rowJSON):
                text += "\(version)\tupsert\t\(account)\t\(clientID ?? "")\t\(rowJSON)\n"
            case .delete(_, let keyJSON):
                text += "\(version)\tdelete\t\(account)\t\(clientID ?? "")\t\(keyJSON)\n"
            case .reject:
                break
            }
        }
        if !text.isEmpty {
            try file.withLock { handle in
                try handle.seekToEnd()
                try handle.write(contentsOf: Data(text.utf8))
            }
        }
        return results
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
