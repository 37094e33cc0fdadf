import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

@testable import SerialDBSync

/// Rows from the server that would break a local foreign key are refused with a
/// `brokenForeignKey` error naming the rows and what to do, nothing of them applied, instead
/// of the COMMIT's bare "FOREIGN KEY constraint failed"; once the app resolves it, the next
/// sync applies them.
@Suite("Server rows that break a local foreign key", .timeLimit(.minutes(2)))
struct BrokenForeignKeyTests {
    /// A phone and a laptop that both hold note `n1`; the laptop has a local attachment table
    /// whose foreign key to `note` has no ON DELETE action, and an attachment of `n1`.
    private func devices(_ directory: TemporaryDirectory, _ server: InProcessSyncServer) async throws
        -> (phone: Device, laptop: Device)
    {
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let laptop = try Device(.file, in: directory, name: "laptop", server: server)
        _ = try await phone.client.sync()
        try phone.insertNote("n1", "one")
        try phone.insertNote("n2", "two")
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        try laptop.execute(
            "CREATE TABLE \"pièce jointe\"(id INTEGER PRIMARY KEY, note_id TEXT NOT NULL REFERENCES note(id))")
        try laptop.execute("INSERT INTO \"pièce jointe\"(note_id) VALUES ('n1')")
        return (phone, laptop)
    }

    private func noteIDs(_ device: Device) async throws -> [String] {
        try await device.queue.read { db in try db.fetchAll(String.self, sql: "SELECT id FROM note ORDER BY id") }
    }

    private func expectBrokenForeignKey(_ error: any Error) {
        #expect((error as? SyncError)?.code == .brokenForeignKey, "\(error)")
        let message = "\(error)"
        #expect(message.contains("\"pièce jointe\"") && message.contains("\"note\""), "\(message)")
        #expect(message.contains("ON DELETE CASCADE"), "\(message)")
        #expect(!message.contains("while executing `COMMIT"), "\(message)")
    }

    @Test("a downloaded delete of a row a local row still refers to is refused, then applied once resolved")
    func aDownloadedDeleteOfAReferencedRowIsRefusedNamingTheRows() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let (phone, laptop) = try await devices(directory, server)
        try phone.execute("DELETE FROM note WHERE id = 'n1'")
        try phone.execute("UPDATE note SET title = 'changed' WHERE id = 'n2'")
        _ = try await phone.client.sync()
        for _ in 0..<2 {
            do {
                _ = try await laptop.client.sync()
                Issue.record("the sync applied a page that breaks a foreign key")
            } catch {
                expectBrokenForeignKey(error)
            }
            // Nothing of the page: n1 is still there, n2 not yet changed.
            #expect(try await noteIDs(laptop) == ["n1", "n2"])
            #expect(try laptop.titles()["n2"] == "two")
        }
        try laptop.execute("DELETE FROM \"pièce jointe\"")
        let report = try await laptop.client.sync()
        #expect(report.downloaded == 2)
        #expect(try await noteIDs(laptop) == ["n2"])
        #expect(try laptop.titles()["n2"] == "changed")
    }

    @Test("a conflict whose server row is a delete of a row a local row refers to is refused, then settled")
    func aConflictAdoptingADeleteOfAReferencedRowIsRefused() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let (phone, laptop) = try await devices(directory, server)
        try phone.execute("DELETE FROM note WHERE id = 'n1'")
        _ = try await phone.client.sync()
        // The laptop edits n1 without having seen the delete: its upload meets it as a conflict,
        // and the server's row (the delete) wins.
        try laptop.execute("UPDATE note SET title = 'edited' WHERE id = 'n1'")
        do {
            _ = try await laptop.client.sync()
            Issue.record("the sync adopted a delete that breaks a foreign key")
        } catch {
            expectBrokenForeignKey(error)
        }
        #expect(try laptop.titles()["n1"] == "edited")
        try laptop.execute("DELETE FROM \"pièce jointe\"")
        let report = try await laptop.client.sync()
        #expect(report.conflicts.count == 1)
        #expect(try await noteIDs(laptop) == ["n2"])
        #expect(try laptop.outboxCount() == 0)
    }
}
