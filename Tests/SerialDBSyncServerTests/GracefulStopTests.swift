import Foundation
import SerialDBSyncServer
import SerialDBTestSupport
import Testing

/// Stopping the server finishes the requests in flight before it closes the connections.
@Suite(.timeLimit(.minutes(5))) struct GracefulStopTests {
    @Test func stopAnswersTheRequestInFlightBeforeItReturns() async throws {
        let gate = GatedStore(try SQLiteSyncStore())
        var options = SyncServerOptions()
        options.port = 0
        let server = try SyncServer(configuration: try SyncFixtures.configuration(), store: gate, options: options)
        let client = SyncHTTPClient(baseURL: server.url, token: "t-alice")
        let inFlight = Task { try await client.fetchData("note", since: 0) }
        try await waitUntil { gate.entered }

        let stopped = Locked(false)
        Thread.detachNewThread {
            server.stop()
            stopped.withLock { $0 = true }
        }
        // The request is held inside the store: stop must wait for it, not cut it off.
        try await Task.sleep(for: .milliseconds(200))
        #expect(stopped.withLock { $0 } == false)
        gate.open()
        let answer = try await inFlight.value
        #expect(answer.status == 200)
        try await waitUntil { stopped.withLock { $0 } }
        try gate.close()
    }
}

/// A store whose fetches wait until the test opens the gate: a slow request, on demand.
final class GatedStore: SyncStore, @unchecked Sendable {
    // Safe: `base` is Sendable; the flags are behind `condition`.
    private let base: any SyncStore
    private let condition = NSCondition()
    private var isOpen = false
    private var didEnter = false

    init(_ base: any SyncStore) {
        self.base = base
    }

    /// Whether a fetch is waiting at the gate.
    var entered: Bool { condition.withLock { didEnter } }

    /// Lets the waiting fetch (and every later one) through.
    func open() {
        condition.withLock {
            isOpen = true
            condition.broadcast()
        }
    }

    func changes(table: String, owner: String, since: Int64, limit: Int, maximumBytes: Int) throws -> SyncChangePage {
        condition.withLock {
            didEnter = true
            // Bounded: a test that never opens the gate fails instead of hanging.
            let deadline = Date().addingTimeInterval(30)
            while !isOpen && condition.wait(until: deadline) {}
        }
        return try base.changes(table: table, owner: owner, since: since, limit: limit, maximumBytes: maximumBytes)
    }

    func latestVersions(of tables: [(table: String, owner: String)]) throws -> [Int64] {
        try base.latestVersions(of: tables)
    }

    func apply(account: String, clientID: String?, mutations: [SyncStoreMutation]) throws -> [SyncUploadOutcome] {
        try base.apply(account: account, clientID: clientID, mutations: mutations)
    }

    func purgeTombstones(through version: Int64) throws -> (purged: Int, floor: Int64) {
        try base.purgeTombstones(through: version)
    }

    func purgeFloor() throws -> Int64 {
        try base.purgeFloor()
    }

    func purgeResults(olderThan retention: TimeInterval) throws -> Int {
        try base.purgeResults(olderThan: retention)
    }

    func currentVersion() throws -> Int64 {
        try base.currentVersion()
    }

    func summary() throws -> SyncStoreSummary {
        try base.summary()
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
