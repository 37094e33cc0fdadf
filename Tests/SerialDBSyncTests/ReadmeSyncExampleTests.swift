import Foundation
import SerialDB
import SerialDBSync
import SerialDBTestSupport
import Testing

/// The README's "Sync" example, run as written against the real server (in a temporary
/// directory, on the server's free port), so the front page stays true.
@Suite(.timeLimit(.minutes(5))) struct ReadmeSyncExampleTests {
    @Test func theTwoDeviceExampleRunsAsWritten() async throws {
        let directory = try TemporaryDirectory()
        let running = try await SyncServerProcess(in: directory)
        let server = running.url

        let phoneAccounts = try AccountDatabases(directory: directory.url.appendingPathComponent("Phone/Accounts"))
        let phone = try phoneAccounts.open(account: "alice")
        let phoneSync = try SyncClient(queue: phone, transport: HTTPSyncTransport(baseURL: server, token: "t-alice"))
        _ = try await phoneSync.sync()

        let laptopAccounts = try AccountDatabases(directory: directory.url.appendingPathComponent("Laptop/Accounts"))
        let laptop = try laptopAccounts.open(account: "alice")
        let laptopSync = try SyncClient(
            queue: laptop, transport: HTTPSyncTransport(baseURL: server, token: "t-alice"),
            conflictResolver: { conflict in conflict.localRow == nil ? .keepServer : .keepLocal })

        try await phone.write { db in
            try db.execute(sql: "INSERT INTO note(id, title) VALUES (?, ?)", arguments: ["a1", "Groceries"])
        }
        let sent = try await phoneSync.sync()
        let received = try await laptopSync.sync()
        #expect(sent.uploaded == 1)
        #expect(received.downloaded == 1)

        try await laptop.write { db in try db.execute(sql: "UPDATE note SET body = 'milk' WHERE id = 'a1'") }
        try await phone.write { db in try db.execute(sql: "DELETE FROM note WHERE id = 'a1'") }
        _ = try await laptopSync.sync()
        let report = try await phoneSync.sync()
        #expect(report.conflicts.count == 1)
        #expect(report.conflicts.first?.localRow == nil)
        #expect(report.conflicts.first?.serverRow?["body"] == .text("milk"))
        let body = try await phone.read { db in
            try db.fetchOne(String.self, sql: "SELECT body FROM note WHERE id = 'a1'")
        }
        #expect(body == "milk")

        try await phoneAccounts.close(account: "alice")
        try await laptopAccounts.close(account: "alice")
        await #expect(throws: SerialDBError.self) { _ = try await phoneSync.sync() }
        try await running.stop()
    }
}
