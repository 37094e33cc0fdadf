import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

@testable import SerialDBSync

@Suite("AccountDatabases", .timeLimit(.minutes(5)))
struct AccountDatabasesTests {
    @Test(
        "any account id maps to a file inside the directory",
        arguments: [
            "alice", "Alice", "../x", "a/b", "/etc/passwd", "..", ".", "a\u{0}b", "ä",
            String(repeating: "é", count: 5000),
        ])
    func fileStaysInsideDirectory(account: String) throws {
        let directory = try TemporaryDirectory()
        let accounts = try AccountDatabases(directory: directory.url)
        let url = try accounts.fileURL(forAccount: account)
        #expect(url.deletingLastPathComponent().standardizedFileURL.path == directory.url.standardizedFileURL.path)
        #expect(url.lastPathComponent.utf8.count <= 200)
        #expect(!url.lastPathComponent.contains("/") && !url.lastPathComponent.hasPrefix("."))
        let queue = try accounts.open(account: account)
        try queue.write { db in try db.execute(sql: "CREATE TABLE t(x)") }
        #expect(FileManager.default.fileExists(atPath: url.path))
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(files.contains(url.lastPathComponent))
    }

    @Test("different ids never share a file, even ids that differ only in case or are long")
    func idsNeverShareAFile() throws {
        let long = String(repeating: "x", count: 10_000)
        let ids = ["alice", "Alice", "ALICE", "%41lice", "a%2Fb", "a/b", long, long + "y", "x~y", "a.b", "a b"]
        let names = try ids.map { try AccountDatabases.fileName(forAccount: $0).lowercased() }
        #expect(Set(names).count == ids.count)
    }

    @Test("an empty account id is refused")
    func emptyIdIsRefused() throws {
        let directory = try TemporaryDirectory()
        let accounts = try AccountDatabases(directory: directory.url)
        #expect(throws: SyncError.self) { _ = try accounts.open(account: "") }
    }

    @Test("the same account gets the same queue until it is closed, then a new one")
    func sameQueueUntilClosed() async throws {
        let directory = try TemporaryDirectory()
        let accounts = try AccountDatabases(directory: directory.url)
        let first = try accounts.open(account: "alice")
        #expect(try accounts.open(account: "alice") === first)
        #expect(try accounts.open(account: "bob") !== first)
        try await first.write { db in try db.execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (1)") }
        try await accounts.close(account: "alice")
        await #expect(throws: SerialDBError.self) {
            try await first.read { db in try db.fetchOne(Int.self, sql: "SELECT 1") }
        }
        let second = try accounts.open(account: "alice")
        #expect(second !== first)
        #expect(try await second.read { db in try db.fetchOne(Int.self, sql: "SELECT x FROM t") } == 1)
        #expect(accounts.openAccounts == ["alice", "bob"])
    }

    @Test("a sync bound to a closed account fails with closed and writes nowhere else")
    func syncOfClosedAccountFails() async throws {
        let directory = try TemporaryDirectory()
        let accounts = try AccountDatabases(directory: directory.url)
        let server = try InProcessSyncServer(tables: [noteTable])
        let alice = try accounts.open(account: "alice")
        let client = try SyncClient(queue: alice, transport: server.transport(token: "t-alice"))
        _ = try await client.sync()
        try await alice.write { db in try db.execute(sql: "INSERT INTO note(id, title) VALUES ('a', 'x')") }
        _ = try await client.sync()
        let bob = try accounts.open(account: "bob")
        let bobClient = try SyncClient(queue: bob, transport: server.transport(token: "t-bob"))
        _ = try await bobClient.sync()
        try await alice.write { db in try db.execute(sql: "UPDATE note SET title = 'y'") }
        try await accounts.close(account: "alice")
        await #expect(throws: SerialDBError.self) { _ = try await client.sync() }
        let bobRows = try await bob.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM note") }
        #expect(bobRows == 0)
        #expect(try server.rows(of: "note", account: "alice").first?["title"] == .text("x"))
    }
}
