import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

@testable import SerialDBSync

@Suite("AccountDatabases", .timeLimit(.minutes(5)))
struct AccountDatabasesTests {
    /// A configuration the writers must be opened with (a label, and the journal mode a pool needs).
    private static var configuration: Configuration {
        var configuration = Configuration()
        configuration.journalMode = .wal
        configuration.label = "account-test"
        return configuration
    }

    /// Runs `body` on an `AccountDatabases` of queues or of pools, in `directory`.
    private func withAccounts(
        _ kind: WriterKind, in directory: URL, _ body: some AccountsCheck
    ) async throws {
        switch kind {
        case .queue:
            try await body.run(AccountDatabases(directory: directory, configuration: Self.configuration))
        case .pool:
            try await body.run(
                AccountDatabases(directory: directory, configuration: Self.configuration) { path, configuration in
                    try DatabasePool(path: path, configuration: configuration)
                })
        }
    }

    @Test(
        "any account id maps to a file inside the directory",
        arguments: WriterKind.allCases,
        [
            "alice", "Alice", "../x", "a/b", "/etc/passwd", "..", ".", "a\u{0}b", "ä",
            String(repeating: "é", count: 5000),
        ])
    func fileStaysInsideDirectory(kind: WriterKind, account: String) async throws {
        let directory = try TemporaryDirectory()
        try await withAccounts(kind, in: directory.url, FileStaysInside(account: account, directory: directory.url))
    }

    private struct FileStaysInside: AccountsCheck {
        let account: String
        let directory: URL

        func run<Writer: DatabaseWriter>(_ accounts: AccountDatabases<Writer>) async throws {
            let url = try accounts.fileURL(forAccount: account)
            #expect(url.deletingLastPathComponent().standardizedFileURL.path == directory.standardizedFileURL.path)
            #expect(url.lastPathComponent.utf8.count <= 200)
            #expect(!url.lastPathComponent.contains("/") && !url.lastPathComponent.hasPrefix("."))
            let writer = try accounts.open(account: account)
            #expect(writer.path == url.path)
            #expect(writer.configuration.label == "account-test")
            try await writer.write { db in try db.execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (1)") }
            #expect(try await writer.read { db in try db.fetchOne(Int.self, sql: "SELECT x FROM t") } == 1)
            #expect(FileManager.default.fileExists(atPath: url.path))
            let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(files.contains(url.lastPathComponent))
            try await accounts.close(account: account)
        }
    }

    @Test("different ids never share a file, even ids that differ only in case or are long")
    func idsNeverShareAFile() throws {
        let long = String(repeating: "x", count: 10_000)
        let ids = ["alice", "Alice", "ALICE", "%41lice", "a%2Fb", "a/b", long, long + "y", "x~y", "a.b", "a b"]
        let names = try ids.map { try AccountDatabases.fileName(forAccount: $0).lowercased() }
        #expect(Set(names).count == ids.count)
    }

    @Test("an empty account id is refused, and nothing is opened", arguments: WriterKind.allCases)
    func emptyIdIsRefused(kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        try await withAccounts(kind, in: directory.url, EmptyIdIsRefused())
    }

    private struct EmptyIdIsRefused: AccountsCheck {
        func run<Writer: DatabaseWriter>(_ accounts: AccountDatabases<Writer>) async throws {
            #expect(throws: SyncError.self) { _ = try accounts.open(account: "") }
            #expect(accounts.openAccounts.isEmpty)
        }
    }

    @Test("the same account gets the same writer until it is closed, then a new one", arguments: WriterKind.allCases)
    func sameWriterUntilClosed(kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        try await withAccounts(kind, in: directory.url, SameWriterUntilClosed())
    }

    private struct SameWriterUntilClosed: AccountsCheck {
        func run<Writer: DatabaseWriter>(_ accounts: AccountDatabases<Writer>) async throws {
            let first = try accounts.open(account: "alice")
            #expect(try accounts.open(account: "alice") === first)
            #expect(try accounts.open(account: "bob") !== first)
            try await first.write { db in try db.execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (1)") }
            try await accounts.close(account: "alice")
            await #expect(throws: SerialDBError.self) {
                try await first.read { db in try db.fetchOne(Int.self, sql: "SELECT 1") }
            }
            #expect(throws: SerialDBError.self) {
                try first.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") }
            }
            let second = try accounts.open(account: "alice")
            #expect(second !== first)
            #expect(try await second.read { db in try db.fetchAll(Int.self, sql: "SELECT x FROM t") } == [1])
            #expect(accounts.openAccounts == ["alice", "bob"])
            try await accounts.close(account: "alice")
            try await accounts.close(account: "bob")
            #expect(accounts.openAccounts.isEmpty)
        }
    }

    @Test("a sync bound to a closed account fails with closed and writes nowhere else", arguments: WriterKind.allCases)
    func syncOfClosedAccountFails(kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        try await withAccounts(
            kind, in: directory.url.appendingPathComponent("accounts"), SyncOfClosedAccount(server: server))
    }

    private struct SyncOfClosedAccount: AccountsCheck {
        let server: InProcessSyncServer

        func run<Writer: DatabaseWriter>(_ accounts: AccountDatabases<Writer>) async throws {
            let alice = try accounts.open(account: "alice")
            let client = try SyncClient(database: alice, transport: server.transport(token: "t-alice"))
            _ = try await client.sync()
            try await alice.write { db in try db.execute(sql: "INSERT INTO note(id, title) VALUES ('a', 'x')") }
            #expect(try await client.sync().uploaded == 1)
            let bob = try accounts.open(account: "bob")
            let bobClient = try SyncClient(database: bob, transport: server.transport(token: "t-bob"))
            _ = try await bobClient.sync()
            try await alice.write { db in try db.execute(sql: "UPDATE note SET title = 'y'") }
            try await accounts.close(account: "alice")
            await #expect(throws: SerialDBError.self) { _ = try await client.sync() }
            let bobRows = try await bob.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM note") }
            #expect(bobRows == 0)
            #expect(try server.rows(of: "note", account: "alice").first?["title"] == .text("x"))
            // Reopened, alice's edit is still there, unsent, and the next sync sends it.
            let reopened = try accounts.open(account: "alice")
            let again = try SyncClient(database: reopened, transport: server.transport(token: "t-alice"))
            #expect(try await again.sync().uploaded == 1)
            #expect(try server.rows(of: "note", account: "alice").first?["title"] == .text("y"))
            try await accounts.close(account: "alice")
            try await accounts.close(account: "bob")
        }
    }
}

/// A check run on an `AccountDatabases` of either writer type (a generic method, since a
/// closure cannot be generic).
private protocol AccountsCheck {
    func run<Writer: DatabaseWriter>(_ accounts: AccountDatabases<Writer>) async throws
}
