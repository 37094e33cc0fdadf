import CSQLite
import Foundation
import Synchronization

/// Tells the observations of one writer connection which tables its commits changed.
///
/// One set of hooks per connection, however many observations: the update hook notes the
/// tables a transaction changes (``ChangedTables``), the commit hook moves them to "committed",
/// the rollback hook forgets them, and the shared ``DatabaseAuthorizer`` flags statements that
/// change the schema (which re-run every observation). Nothing is fetched inside a hook: the
/// serializer calls ``publishCommits()`` once the block that committed has returned, and each
/// observation whose region holds a changed table is marked changed; its consumer then fetches
/// again, on the queue or on a pool's reader, so it sees the commit. An observation costs only
/// the tables it reads: a commit looks up each changed table in `byTable`, and never visits
/// the others.
///
/// A commit that concerns no observation (the common case: the observed tables are not the
/// written ones) costs no lock and no hashing: every change to `byTable` or `fetching` bumps
/// `version`, and each changed table caches whether an observation read it at a given version.
/// ``publishCommits()`` takes `lock` only when the version moved, an observation is fetching,
/// or a committed table is observed.
///
/// A transaction that changed rows the update hook does not report (SQLite's truncate
/// optimization for `DELETE FROM t`, WITHOUT ROWID tables) is found by comparing
/// `sqlite3_total_changes64` with the rows the hook saw, and re-runs every observation. Other
/// connections' and other processes' writes are not seen at all.
///
/// The hooks are installed by the first observation's registration (a writer block) and
/// removed by a writer block after the last one ends.
///
/// Safe to share (`@unchecked Sendable`): the connection-side state (everything the hooks and
/// `publishCommits` touch, marked below) is used only by the thread running a block of the
/// writer's serializer, under its lock; the registry and every ``ObservationState``'s fields are
/// read and written only while holding `lock`; `version` is an atomic, raised while holding `lock`.
final class ObservationHub: @unchecked Sendable {
    // MARK: Connection side (under the serializer's lock)

    // Unchecked exclusivity on the connection side's `var`s: the update hook runs once per
    // changed row and the commit hook once per commit, and the run-time checks were most of
    // what a commit that concerns no observation cost. Accesses cannot overlap: they are all
    // made by the one thread that holds the serializer's lock, and no access passes one of
    // these properties inout to code that touches the same property.

    /// The connection the hooks are installed on, nil when none.
    @exclusivity(unchecked)
    private var hookedConnection: OpaquePointer?
    @exclusivity(unchecked)
    private var authorizer: DatabaseAuthorizer?
    /// The tables changed by the open transaction and committed since the last publication.
    private let changes = ChangedTables()
    /// Rows the update hook reported in this transaction, and `total_changes` before it.
    @exclusivity(unchecked)
    private var hookedRows: Int64 = 0
    @exclusivity(unchecked)
    private var changesBefore: Int64 = 0
    /// A commit since the last ``publishCommits()`` changed what the hook cannot see or the schema.
    @exclusivity(unchecked)
    private var committedEverything = false
    /// The version of the observations the connection side last looked at, holding `lock`.
    @exclusivity(unchecked)
    private var knownVersion: UInt64 = 0
    /// Read by the serializer after every block: one load when nothing committed.
    @exclusivity(unchecked)
    private(set) var hasPendingCommit = false

    // MARK: Observations (under `lock`)

    private let lock = NSLock()
    /// Raised (holding `lock`) by every change to `byTable` or `fetching`, so that the
    /// connection side can trust what it learned at a version while the version stands.
    private let version = Atomic<UInt64>(1)
    private var registered: [ObjectIdentifier: ObservationState] = [:]
    /// Idle observations by the tables their last fetch read.
    private var byTable: [String: [ObjectIdentifier: ObservationState]] = [:]
    /// Observations whose fetch is running (or about to): they collect every commit's tables,
    /// since their new region is not known yet.
    private var fetching: [ObjectIdentifier: ObservationState] = [:]

    // MARK: - Hooks (writer blocks)

    /// Installs the hooks on the writer connection, once. Call from a block of the writer.
    func installHooks(on database: Database) {
        guard let handle = database.handle, hookedConnection != handle else { return }
        hookedConnection = handle
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_update_hook(
            handle,
            { context, _, _, table, _ in
                guard let context, let table else { return }
                // The connection holds the hub (through its serializer) while hooks are set: no
                // retain needed, once per changed row.
                Unmanaged<ObservationHub>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.rowChanged(in: table) }
            }, context)
        sqlite3_commit_hook(
            handle,
            { context in
                guard let context else { return 0 }
                Unmanaged<ObservationHub>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.transactionWillCommit() }
                return 0
            }, context)
        sqlite3_rollback_hook(
            handle,
            { context in
                guard let context else { return }
                Unmanaged<ObservationHub>.fromOpaque(context).takeUnretainedValue().transactionDidRollBack()
            }, context)
        authorizer = database.authorizer
        database.authorizer.watchesSchema = true
        database.authorizer.schemaChangePrepared = false
        database.updateAuthorizer()
        resetTransaction(handle)
    }

    /// Removes the hooks when no observation is left. Call from a block of the writer.
    func removeHooksIfUnused(from database: Database) {
        guard lock.withLock({ registered.isEmpty }) else { return }
        defer {
            hookedConnection = nil
            authorizer = nil
        }
        guard let handle = database.handle, hookedConnection == handle else { return }
        sqlite3_update_hook(handle, nil, nil)
        sqlite3_commit_hook(handle, nil, nil)
        sqlite3_rollback_hook(handle, nil, nil)
        database.authorizer.watchesSchema = false
        database.authorizer.schemaChangePrepared = false
        database.updateAuthorizer()
        changes.removeAll()
        committedEverything = false
        hasPendingCommit = false
    }

    /// Whether hooks are installed now (for tests).
    var hasHooks: Bool { hookedConnection != nil }

    @inline(__always)
    private func rowChanged(in table: UnsafePointer<CChar>) {
        hookedRows &+= 1
        changes.rowChanged(in: table)
    }

    private func transactionWillCommit() {
        guard let handle = hookedConnection else { return }
        let changed = sqlite3_total_changes64(handle) - changesBefore
        if changed > hookedRows || authorizer?.schemaChangePrepared == true {
            // Rows the update hook did not report, or a new schema: every fetch may differ.
            committedEverything = true
        }
        if changes.commitTransaction() || committedEverything { hasPendingCommit = true }
        resetTransaction(handle)
    }

    private func transactionDidRollBack() {
        guard let handle = hookedConnection else { return }
        changes.endTransaction()
        resetTransaction(handle)
    }

    private func resetTransaction(_ handle: OpaquePointer) {
        hookedRows = 0
        changesBefore = sqlite3_total_changes64(handle)
        if let authorizer, authorizer.schemaChangePrepared { authorizer.schemaChangePrepared = false }
    }

    /// The connection is closing: every observation wakes and learns it is closed (a pool's
    /// readers may still answer for a moment, so the consumer asks the writer).
    func connectionWillClose() {
        lock.withLock { writerIsClosed = true }
        committedEverything = true
        hasPendingCommit = true
    }

    /// Whether the writer connection closed. Guarded by `lock`.
    private var writerIsClosed = false

    var isWriterClosed: Bool { lock.withLock { writerIsClosed } }

    /// Marks the observations that the commits since the last call concern as changed and wakes
    /// their consumers. Called by the serializer after the block that committed has returned,
    /// so any fetch they start sees the commit.
    ///
    /// Without the lock when the version has not moved since the connection side last looked
    /// and every committed table was found unobserved at that version: nothing registered, began
    /// or ended a fetch since (each raises the version before it lets its fetch start), no idle
    /// observation reads those tables, and every observation fetching then was already given
    /// them by the publication that found them unobserved. A fetch that begins after the
    /// version was read starts after the commit, and sees it: on a queue it is a later block;
    /// on a pool's reader, the commit was in the WAL index (which SQLite writes and reads
    /// between full memory barriers) before the version was read.
    func publishCommits() {
        hasPendingCommit = false
        defer {
            changes.clearCommitted()
            committedEverything = false
        }
        if !committedEverything {
            let now = version.load(ordering: .sequentiallyConsistent)
            if now == knownVersion && changes.committedConcernsNobody(atVersion: now) {
                return
            }
        }
        markConcernedObservations()
    }

    /// The rest of ``publishCommits()``: takes `lock`, marks and wakes the observations the
    /// commits concern, and refreshes what the connection side knows.
    private func markConcernedObservations() {
        let everything = committedEverything
        var woken: [CheckedContinuation<Bool, Never>] = []
        lock.withLock {
            let now = version.load(ordering: .sequentiallyConsistent)
            knownVersion = now
            if everything {
                for state in registered.values {
                    state.everythingChangedDuringFetch = true
                    state.markChanged(into: &woken)
                }
                return
            }
            var tables: Set<String> = []
            for index in changes.committed {
                let table = changes.tables[index].name
                tables.insert(table)
                let states = byTable[table]
                changes.setObserved(states != nil, at: index, version: now)
                for state in states?.values ?? [:].values {
                    state.markChanged(into: &woken)
                }
            }
            for state in fetching.values {
                state.changedDuringFetch.formUnion(tables)
            }
        }
        for continuation in woken {
            continuation.resume(returning: true)
        }
    }

    // MARK: - Observations (any thread)

    /// Adds an observation whose first fetch is about to start. Call from a block of the writer
    /// after ``installHooks(on:)``, so no commit after it goes unseen.
    func register(_ state: ObservationState) {
        lock.withLock {
            let id = ObjectIdentifier(state)
            registered[id] = state
            fetching[id] = state
            raiseVersion()
            state.changedDuringFetch = []
            state.everythingChangedDuringFetch = false
        }
    }

    /// Removes an observation; returns whether it was the last (the hooks can go).
    func unregister(_ state: ObservationState) -> Bool {
        let (waiter, isLast) = lock.withLock { () -> (CheckedContinuation<Bool, Never>?, Bool) in
            let id = ObjectIdentifier(state)
            guard registered.removeValue(forKey: id) != nil else { return (nil, false) }
            removeFromRegion(state)
            fetching[id] = nil
            raiseVersion()
            let waiter = state.waiter
            state.waiter = nil
            state.isEnded = true
            return (waiter, registered.isEmpty)
        }
        waiter?.resume(returning: false)
        return isLast
    }

    /// The observation is about to fetch again: it collects every commit until the fetch ends.
    func fetchWillBegin(_ state: ObservationState) {
        lock.withLock {
            let id = ObjectIdentifier(state)
            guard registered[id] != nil else { return }
            removeFromRegion(state)
            state.isChanged = false
            state.changedDuringFetch = []
            state.everythingChangedDuringFetch = false
            fetching[id] = state
            raiseVersion()
        }
    }

    /// The fetch read `region`: commits from now on concern the observation only through those
    /// tables; one that came during the fetch and touched them marks it changed at once.
    func fetchDidEnd(_ state: ObservationState, region: Set<String>) {
        lock.withLock {
            let id = ObjectIdentifier(state)
            guard registered[id] != nil else { return }
            fetching[id] = nil
            if state.everythingChangedDuringFetch || !state.changedDuringFetch.isDisjoint(with: region) {
                state.isChanged = true
            }
            state.changedDuringFetch = []
            state.everythingChangedDuringFetch = false
            state.region = region
            for table in region {
                byTable[table, default: [:]][id] = state
            }
            raiseVersion()
        }
    }

    /// Suspends until a commit concerns the observation; `false` when the task is cancelled
    /// or the observation ended.
    func waitForChange(_ state: ObservationState) async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let answer = lock.withLock { () -> Bool? in
                    if state.isCancelled || state.isEnded { return false }
                    if state.isChanged { return true }
                    state.waiter = continuation
                    return nil
                }
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            let waiter = lock.withLock { () -> CheckedContinuation<Bool, Never>? in
                state.isCancelled = true
                let waiter = state.waiter
                state.waiter = nil
                return waiter
            }
            waiter?.resume(returning: false)
        }
    }

    /// Whether a commit concerned the observation since its last fetch began (for tests).
    func isChanged(_ state: ObservationState) -> Bool {
        lock.withLock { state.isChanged }
    }

    /// Whether the observation's consumer is suspended, waiting for a change (for tests).
    func isWaiting(_ state: ObservationState) -> Bool {
        lock.withLock { state.waiter != nil }
    }

    /// The observations registered now, and those indexed under `table` (for tests).
    func counts(table: String) -> (registered: Int, indexed: Int) {
        lock.withLock { (registered.count, byTable[table]?.count ?? 0) }
    }

    /// `byTable` or `fetching` changed. Call holding `lock`, before the change lets a fetch start.
    private func raiseVersion() {
        version.add(1, ordering: .sequentiallyConsistent)
    }

    /// Call holding `lock`.
    private func removeFromRegion(_ state: ObservationState) {
        let id = ObjectIdentifier(state)
        for table in state.region {
            byTable[table]?[id] = nil
            if byTable[table]?.isEmpty == true { byTable[table] = nil }
        }
        state.region = []
    }
}

/// One observation's place in the hub.
///
/// Safe to share (`@unchecked Sendable`): every field is read and written only while holding
/// the hub's `lock`.
final class ObservationState: @unchecked Sendable {
    /// The tables the last fetch read, lowercase.
    var region: Set<String> = []
    /// A commit concerned the observation since its last fetch began.
    var isChanged = false
    /// Tables committed while the fetch ran, and whether a commit changed everything.
    var changedDuringFetch: Set<String> = []
    var everythingChangedDuringFetch = false
    /// The consumer waiting for a change.
    var waiter: CheckedContinuation<Bool, Never>?
    var isCancelled = false
    var isEnded = false

    /// Call holding the hub's lock.
    func markChanged(into woken: inout [CheckedContinuation<Bool, Never>]) {
        isChanged = true
        if let waiter {
            self.waiter = nil
            woken.append(waiter)
        }
    }
}
