import Foundation
import PostgresHarness
import SerialDB
import SerialDBSyncServer
import SerialDBTestSupport
import Testing

/// The stores the conformance suite runs against: every test parameterised by it holds on
/// each store. The PostgreSQL cases skip (with a printed reason) where no PostgreSQL is found,
/// and fail instead in CI.
enum SyncStoreKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqliteFile
    /// The SQLite store on a file behind a `DatabasePool`: its reads on reader connections.
    case sqlitePool
    case sqliteMemory
    case postgres

    /// The stores whose data outlives the store object: a server can be killed and restarted on them.
    static let persistent: [SyncStoreKind] = [.sqliteFile, .sqlitePool, .postgres]

    var description: String { rawValue }

    /// A new, empty store; the directory keeps a file store alive.
    func makeStore(in directory: TemporaryDirectory) throws -> any SyncStore {
        try makeLocation(in: directory).open()
    }

    /// A new, empty place for a store of this kind: a file path, a fresh PostgreSQL database,
    /// or memory.
    func makeLocation(in directory: TemporaryDirectory) throws -> StoreLocation {
        switch self {
        case .sqliteFile, .sqlitePool: return StoreLocation(kind: self, address: directory.path("server.sqlite"))
        case .sqliteMemory: return StoreLocation(kind: self, address: "")
        case .postgres: return StoreLocation(kind: self, address: try TestPostgres.makeDatabase())
        }
    }
}

/// Where a store keeps its data, to open it again or hand it to the server's command line.
struct StoreLocation: Sendable {
    let kind: SyncStoreKind
    /// The file path or the database URL.
    let address: String

    /// Opens the store (a memory store is new each time), on `clock` when one is given.
    func open(connections: Int = PostgresSyncStore.defaultConnections, clock: TestClock? = nil) throws
        -> any SyncStore
    {
        let now: @Sendable () -> Date
        if let clock { now = { clock.now } } else { now = { Date() } }
        switch kind {
        case .sqliteFile: return try SQLiteSyncStore(path: address, clock: now)
        case .sqlitePool:
            var configuration = Configuration()
            configuration.label = "sync store (pool)"
            return try SQLiteSyncStore(
                database: try DatabasePool(path: address, configuration: configuration), clock: now)
        case .sqliteMemory: return try SQLiteSyncStore(clock: now)
        case .postgres: return try PostgresSyncStore(url: address, connections: connections, clock: now)
        }
    }

    /// The store's arguments of `serialdb-sync-server`.
    var serverArguments: [String] {
        kind == .postgres ? ["--postgres", address] : ["--db", address]
    }
}

/// The tests' PostgreSQL: a fresh database per test on ``ScratchPostgres``'s server.
enum TestPostgres {
    /// A new database's URL; without a PostgreSQL, the test case is skipped with a printed
    /// reason, or fails when `CI` is set.
    static func makeDatabase() throws -> String {
        switch ScratchPostgres.server {
        case .success:
            return try ScratchPostgres.makeDatabase()
        case .failure(let error):
            if ScratchPostgres.isCI { throw error }
            _ = announceSkip
            try Test.cancel("skipped: \(error.message)")
        }
    }

    /// Printed once per test process, the first time a PostgreSQL case is skipped.
    private static let announceSkip: Void = {
        if case .failure(let error) = ScratchPostgres.server {
            print("SerialDBSyncServerTests: the PostgreSQL cases are skipped: \(error.message)")
        }
    }()
}
