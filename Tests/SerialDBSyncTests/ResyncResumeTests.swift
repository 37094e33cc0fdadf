import Foundation
import PostgresHarness
import SerialDB
import SerialDBTestSupport
import Synchronization
import Testing

@testable import SerialDBSync

/// The store behind the real `serialdb-sync-server` these tests start.
enum ServerStoreKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqliteFile
    case postgres

    var description: String { rawValue }

    /// The server's store arguments: a file of `directory`, or a fresh PostgreSQL database
    /// (the case is skipped with a printed reason where no PostgreSQL is found, and fails in CI).
    func storeArguments(in directory: TemporaryDirectory) throws -> [String] {
        switch self {
        case .sqliteFile: return ["--db", directory.path("server.sqlite")]
        case .postgres:
            switch ScratchPostgres.server {
            case .success: return ["--postgres", try ScratchPostgres.makeDatabase()]
            case .failure(let error):
                if ScratchPostgres.isCI { throw error }
                print("ResyncResumeTests: the PostgreSQL case is skipped: \(error.message)")
                try Test.cancel("skipped: \(error.message)")
            }
        }
    }
}

/// A transport to the real server that records the fetch-data requests and the size of their
/// answers, can fail every fetch-data request once a number have been answered (a network that
/// drops between pages), runs a hook before the first fetch-data request, and one after the
/// next answer arrived, before the client gets it.
final class RecordingTransport: SyncTransport {
    private let base: HTTPSyncTransport
    private let failAfter: Int?
    let requests = Mutex<[FetchDataRequest]>([])
    let changesReceived = Mutex(0)
    let beforeFirstFetch = Mutex<(@Sendable () async throws -> Void)?>(nil)
    let afterNextFetch = Mutex<(@Sendable () async throws -> Void)?>(nil)

    init(_ base: HTTPSyncTransport, failAfter: Int? = nil) {
        self.base = base
        self.failAfter = failAfter
    }

    func checkUpdate(_ request: CheckUpdateRequest) async throws -> CheckUpdateResponse {
        try await base.checkUpdate(request)
    }

    func fetchSchema(_ request: FetchSchemaRequest) async throws -> FetchSchemaResponse {
        try await base.fetchSchema(request)
    }

    func postData(_ request: PostDataRequest) async throws -> PostDataResponse {
        try await base.postData(request)
    }

    func fetchData(_ request: FetchDataRequest) async throws -> FetchDataResponse {
        if let hook = beforeFirstFetch.withLock({ hook in
            defer { hook = nil }
            return hook
        }) {
            try await hook()
        }
        let answered = requests.withLock { requests in
            defer { requests.append(request) }
            return requests.count
        }
        if let failAfter, answered >= failAfter {
            throw SyncError(.network, "the test's network dropped after \(failAfter) fetch-data answers")
        }
        let page = try await base.fetchData(request)
        changesReceived.withLock { $0 += page.changes.count }
        if let hook = afterNextFetch.withLock({ hook in
            defer { hook = nil }
            return hook
        }) {
            try await hook()
        }
        return page
    }
}

/// A resync through 12,000 changes below the server's purge floor, interrupted between pages
/// and resumed, against the real server on both stores.
@Suite("A resync interrupted between pages resumes", .serialized, .timeLimit(.minutes(5)))
struct ResyncResumeTests {
    /// Rows left on the server, all below the floor once purged.
    private static let kept = 12_000
    /// Rows the server deletes that the laptop holds: the resync must delete them locally.
    private static let deleted = 200
    private static let pageSize = 1000
    /// fetch-data answers before the interruption: "resync", then four pages.
    private static let answersBeforeInterruption = 5

    enum Interruption: String, CaseIterable, Sendable, CustomStringConvertible {
        /// The network fails between pages.
        case transportFails
        /// The syncing process is killed between pages.
        case processKilled
        var description: String { rawValue }
    }

    private struct Setup {
        let directory: TemporaryDirectory
        let server: SyncServerProcess
        let laptopPath: String
    }

    private static func id(_ index: Int) -> String { String(format: "r%05d", index) }

    private static func notes(_ queue: DatabaseQueue) throws -> [String: String] {
        let rows = try queue.read { db in try db.fetchAll(Row.self, sql: "SELECT id, title FROM note") }
        return Dictionary(
            uniqueKeysWithValues: try rows.map {
                (try $0.decode(String.self, at: 0), try $0.decode(String.self, at: 1))
            })
    }

    private static func count(_ queue: DatabaseQueue, _ sql: String) throws -> Int {
        try queue.read { db in try db.fetchOne(Int.self, sql: sql) ?? -1 }
    }

    /// A server whose 12,000 stored changes all lie below its floor, and a laptop that synced
    /// before the purge and so must resync (its database closed, at `laptopPath`).
    private func prepare(_ kind: ServerStoreKind) async throws -> Setup {
        let directory = try TemporaryDirectory()
        let store = try kind.storeArguments(in: directory)
        let first = try await SyncServerProcess(in: directory, store: store)
        let phone = try DatabaseQueue(path: directory.path("phone.sqlite"))
        let phoneClient = try SyncClient(queue: phone, transport: first.transport())
        _ = try await phoneClient.sync()
        try await phone.write { db in
            let insert = try db.cachedStatement(sql: "INSERT INTO note(id, title) VALUES (?, 't')")
            for index in 1...(Self.kept + Self.deleted) { try insert.execute(values: Self.id(index)) }
        }
        #expect(try await phoneClient.sync().uploaded == Self.kept + Self.deleted)
        let laptopPath = directory.path("laptop.sqlite")
        let laptop = try DatabaseQueue(path: laptopPath)
        let laptopClient = try SyncClient(queue: laptop, transport: first.transport(), pageSize: Self.pageSize)
        #expect(try await laptopClient.sync().downloaded == Self.kept + Self.deleted)
        try await laptop.close()
        try await phone.write { db in
            try db.execute(sql: "DELETE FROM note WHERE id <= ?", arguments: [Self.id(Self.deleted)])
            try db.execute(
                sql: "UPDATE note SET title = 'edited' WHERE id > ? AND id <= ?",
                arguments: [Self.id(Self.kept), Self.id(Self.kept + Self.deleted)])
        }
        _ = try await phoneClient.sync()
        let last = try await #require(
            try phone.read { db in
                try db.fetchOne(Int64.self, sql: "SELECT Version FROM TableVersion WHERE TableName = 'note'")
            })
        try await phone.close()
        try await first.stop()
        let purge = try RunningProcess(
            product: "serialdb-sync-server",
            arguments: ["purge-tombstones", "--config", directory.path("sync.json"), "--through", String(last)] + store)
        #expect(try await purge.waitForExit() == 0, "purge: \(purge.printed)")
        let server = try await SyncServerProcess(in: directory, store: store)
        return Setup(directory: directory, server: server, laptopPath: laptopPath)
    }

    @Test(arguments: ServerStoreKind.allCases, Interruption.allCases)
    func aResyncThroughTwelveThousandChangesResumesWhereItStopped(
        _ kind: ServerStoreKind, _ interruption: Interruption
    ) async throws {
        let setup = try await prepare(kind)
        let server = setup.server
        // The first attempt stops after a few pages.
        switch interruption {
        case .transportFails:
            let laptop = try DatabaseQueue(path: setup.laptopPath)
            let failing = RecordingTransport(server.transport(), failAfter: Self.answersBeforeInterruption)
            let client = try SyncClient(queue: laptop, transport: failing, pageSize: Self.pageSize)
            let error = await #expect(throws: SyncError.self) { _ = try await client.sync() }
            #expect(error?.code == .network)
            #expect(failing.requests.withLock { $0.first?.resyncing } == false)
            #expect(failing.requests.withLock { $0.dropFirst().allSatisfy(\.resyncing) })
            try await laptop.close()
        case .processKilled:
            let child = try ChildProcess(
                executable: "serialdb-test-child",
                arguments: [
                    "sync", setup.laptopPath, server.url.absoluteString, "t-alice", String(Self.pageSize),
                    String(Self.answersBeforeInterruption),
                ])
            _ = try await child.line(withPrefix: "paused", timeout: .seconds(120))
            child.kill()
            _ = try await child.exitStatus(timeout: .seconds(60))
        }
        let laptop = try DatabaseQueue(path: setup.laptopPath)
        let cursor = try await #require(
            try laptop.read { db in
                try db.fetchOne(Int64.self, sql: "SELECT Version FROM TableVersion WHERE TableName = 'note'")
            })
        #expect(cursor > 0, "pages of the resync were applied before the interruption")
        #expect(try Self.count(laptop, "SELECT count(*) FROM serialdb_sync_resync") == 1)
        #expect(try Self.notes(laptop)[Self.id(1)] != nil, "nothing is deleted before the resync's last page")

        // Resumed: a row written while the resync runs is unsent at its end and must stay.
        let resumed = RecordingTransport(server.transport())
        resumed.beforeFirstFetch.withLock {
            $0 = {
                try await laptop.write { db in
                    try db.execute(sql: "INSERT INTO note(id, title) VALUES ('local', 'unsent')")
                }
            }
        }
        let client = try SyncClient(queue: laptop, transport: resumed, pageSize: Self.pageSize)
        _ = try await client.sync()
        let requests = resumed.requests.withLock { $0 }
        #expect(requests.first?.since == cursor, "the resync resumes at its stored cursor, not at 0")
        #expect(requests.allSatisfy { $0.resyncing && $0.since >= cursor })

        // The server's rows, as a fresh device sees them, with the versions they carry.
        let auditorQueue = try DatabaseQueue(path: setup.directory.path("auditor.sqlite"))
        let auditor = try SyncClient(queue: auditorQueue, transport: server.transport())
        #expect(try await auditor.sync().downloaded == Self.kept)
        let onServer = try Self.notes(auditorQueue)
        let afterCursor = try await auditorQueue.read { db in
            try db.fetchOne(
                Int.self, sql: "SELECT count(*) FROM serialdb_sync_row WHERE table_name = 'note' AND version > ?",
                arguments: [cursor]) ?? -1
        }
        #expect(
            resumed.changesReceived.withLock { $0 } == afterCursor,
            "the resumed pages carry only the changes after the cursor: nothing downloaded twice")
        var expected = onServer
        expected["local"] = "unsent"
        let local = try Self.notes(laptop)
        #expect(local.count == expected.count)
        #expect(local == expected, "exactly the server's rows, the unsent one kept, the deleted ones gone")
        #expect(local[Self.id(Self.kept + 1)] == "edited")
        #expect(try Self.count(laptop, "SELECT count(*) FROM serialdb_sync_seen") == 0)
        #expect(try Self.count(laptop, "SELECT count(*) FROM serialdb_sync_resync") == 0)
        #expect(try Self.count(laptop, "SELECT count(*) FROM serialdb_sync_outbox") == 1)
        try await laptop.close()
        try await auditorQueue.close()
        try await server.stop()
    }
}
