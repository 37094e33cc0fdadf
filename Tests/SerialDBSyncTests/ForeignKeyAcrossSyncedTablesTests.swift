import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

@testable import SerialDBSync

/// A known defect, pinned: the server does not check foreign keys between synced tables
/// (its scratch database for row checks holds one table, with foreign keys off), so two
/// devices that delete a parent and insert a child of it at the same time leave the server
/// with a child whose parent is gone. Every device that then downloads the child is refused
/// that page (`brokenForeignKey`), every sync, and the device that inserted it loses it
/// locally to the cascade of the downloaded delete while the server keeps it.
///
/// `withKnownIssue` fails this test once the defect is fixed: then turn the expectations into
/// plain ones (README, "Foreign keys").
@Suite("Foreign keys between synced tables", .timeLimit(.minutes(2)))
struct ForeignKeyAcrossSyncedTablesTests {
    private static let folder = InProcessSyncServer.Table(
        name: "folder", schema: "CREATE TABLE folder(id TEXT PRIMARY KEY NOT NULL, name TEXT)")
    private static let item = InProcessSyncServer.Table(
        name: "item",
        schema:
            "CREATE TABLE item(id TEXT PRIMARY KEY NOT NULL, folder_id TEXT REFERENCES folder(id) ON DELETE CASCADE)")

    private func ids(_ device: Device, _ table: String) throws -> [String] {
        try device.queue.read { db in
            try db.fetchAll(String.self, sql: "SELECT id FROM \(table.quotedDatabaseIdentifier) ORDER BY id")
        }
    }

    @Test("a parent deleted while another device adds a child strands the devices that download the child")
    func aParentDeletedWhileAChildIsAddedStrandsOtherDevices() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [Self.folder, Self.item])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let laptop = try Device(.file, in: directory, name: "laptop", server: server)
        let tablet = try Device(.file, in: directory, name: "tablet", server: server)
        _ = try await phone.client.sync()
        try phone.execute("INSERT INTO folder VALUES ('f1', 'ü 🦊')")
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        // At the same time: the phone deletes the folder, the laptop files an item in it.
        try phone.execute("DELETE FROM folder WHERE id = 'f1'")
        try laptop.execute("INSERT INTO item VALUES ('i1', 'f1')")
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        // What holds today: the laptop's item was uploaded, then cascaded away locally.
        #expect(try ids(laptop, "item") == [])
        await withKnownIssue("the server does not check foreign keys between synced tables") {
            // What must hold once it does: every device can still sync, and all agree.
            for device in [tablet, phone, laptop] {
                _ = try await device.client.sync()
                #expect(try ids(device, "item") == [])
                #expect(try ids(device, "folder") == [])
            }
        }
    }
}
