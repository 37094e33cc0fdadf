import Foundation
import SerialDB
import SerialDBSyncWire
import SerialDBTestSupport
import Testing

@testable import SerialDBSync

/// Definition changes of the server applied with its intent, so that no device is stranded:
/// dropped columns, renamed tables and columns, tables removed from its configuration.
@Suite("Definition changes from the server")
struct SyncDefinitionChangeTests {
    static let item = InProcessSyncServer.Table(
        name: "item", schema: "CREATE TABLE item(id INTEGER PRIMARY KEY, label TEXT)")

    private func columns(_ device: Device, _ table: String) async throws -> [String] {
        try await device.queue.read { db in
            try db.fetchAll(String.self, sql: "SELECT name FROM pragma_table_info(?) ORDER BY cid", arguments: [table])
        }
    }

    @Test("a column the server dropped is dropped here too, and unsent values it held are listed")
    func aDroppedColumnIsDroppedAndItsUnsentValuesListed() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        _ = try await phone.client.sync()
        try phone.insertNote("a", "uploaded", body: "went up")
        _ = try await phone.client.sync()
        try phone.insertNote("b", "unsent", body: "never went up")
        try phone.insertNote("c", "unsent, no body")
        var dropped = noteTable
        dropped.structVersion = 2
        dropped.schema = "CREATE TABLE note(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL)"
        try server.replaceTable(dropped)
        let report = try await phone.client.sync()
        let change = try #require(report.schemaChanges.first)
        #expect(change.isApplied)
        #expect(change.droppedValues.count == 1)
        #expect(change.droppedValues.first?.key == ["id": .text("b")])
        #expect(change.droppedValues.first?.column == "body")
        #expect(change.droppedValues.first?.value == .text("never went up"))
        #expect(try await columns(phone, "note") == ["id", "title"])
        #expect(report.uploaded == 2 && report.rejected.isEmpty)
        #expect(try phone.titles() == ["a": "uploaded", "b": "unsent", "c": "unsent, no body"])
        // A new device gets the rows in the new definition.
        let laptop = try Device(.memory, in: directory, name: "laptop", server: server)
        _ = try await laptop.client.sync()
        #expect(try laptop.titles().count == 3)
    }

    @Test("a table and a column the server renamed are renamed here with their rows and unsent edits")
    func aRenamedTableKeepsItsRowsAndUnsentEdits() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let laptop = try Device(.file, in: directory, name: "laptop", server: server)
        _ = try await phone.client.sync()
        for id in ["a", "b"] { try phone.insertNote(id, "title \(id)") }
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        try laptop.execute("UPDATE note SET title = 'laptop edit' WHERE id = 'a'")
        // Edits whose upload never reached the server: it is retried in the new names.
        try laptop.execute("UPDATE note SET body = 'lost answer' WHERE id = 'b'")
        laptop.transport.failOnce("post-data")
        await #expect(throws: SyncError.self) { _ = try await laptop.client.sync() }
        // And one never sent.
        try laptop.execute("UPDATE note SET title = 'laptop edit 2' WHERE id = 'a'")
        let memo = InProcessSyncServer.Table(
            name: "memo", structVersion: 2,
            schema: "CREATE TABLE memo(id TEXT PRIMARY KEY NOT NULL, heading TEXT NOT NULL, body TEXT)",
            renamedFrom: "note", renamedColumns: ["heading": "title"])
        try server.renameTable("note", to: memo)
        let report = try await laptop.client.sync()
        let change = try #require(report.schemaChanges.first)
        #expect(change.table == "memo" && change.fromStructVersion == 1 && change.isApplied)
        #expect(report.conflicts.isEmpty && report.rejected.isEmpty && report.unsyncedTables.isEmpty)
        #expect(report.uploaded == 3)
        let (tables, headings, versions) = try await laptop.queue.read { db in
            (
                try db.fetchAll(
                    String.self,
                    sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('note', 'memo')"),
                try db.fetchAll(String.self, sql: "SELECT heading FROM memo ORDER BY id"),
                try db.fetchAll(String.self, sql: "SELECT TableName FROM TableVersion")
            )
        }
        #expect(tables == ["memo"])
        #expect(headings == ["laptop edit 2", "title b"])
        #expect(versions == ["memo"])
        let onServer = try server.rows(of: "memo", account: "alice").sorted { "\($0["id"]!)" < "\($1["id"]!)" }
        #expect(onServer.map { $0["heading"] } == [.text("laptop edit 2"), .text("title b")])
        #expect(onServer.map { $0["body"] } == [.null, .text("lost answer")])
        // The phone follows, and both keep syncing under the new name.
        let phoneReport = try await phone.client.sync()
        #expect(phoneReport.schemaChanges.first?.isApplied == true)
        #expect(try await columns(phone, "memo") == ["id", "heading", "body"])
        try phone.execute("UPDATE memo SET heading = 'phone edit' WHERE id = 'b'")
        #expect(try await phone.client.sync().uploaded == 1)
        _ = try await laptop.client.sync()
        let heading = try await laptop.queue.read { db in
            try db.fetchOne(String.self, sql: "SELECT heading FROM memo WHERE id = 'b'")
        }
        #expect(heading == "phone edit")
    }

    @Test("a table the server no longer serves stops syncing: its rows stay, its unsent changes are reported")
    func aRemovedTableStopsSyncing() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [noteTable, Self.item])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        _ = try await phone.client.sync()
        try phone.execute("INSERT INTO item(id, label) VALUES (1, 'synced')")
        _ = try await phone.client.sync()
        try phone.execute("INSERT INTO item(id, label) VALUES (2, 'unsent')")
        try phone.insertNote("n", "a note")
        try server.removeTable("item")
        let report = try await phone.client.sync()
        #expect(report.unsyncedTables == ["item"])
        #expect(report.uploaded == 1)
        let rejection = try #require(report.rejected.first)
        #expect(report.rejected.count == 1)
        #expect(rejection.table == "item" && rejection.key == ["id": .integer(2)])
        #expect(rejection.message.contains("no longer syncs"))
        #expect(try phone.outboxCount() == 0)
        let (labels, registered) = try await phone.queue.read { db in
            (
                try db.fetchAll(String.self, sql: "SELECT label FROM item ORDER BY id"),
                try db.fetchAll(String.self, sql: "SELECT TableName FROM TableVersion")
            )
        }
        #expect(labels == ["synced", "unsent"])
        #expect(registered == ["note"])
        // No longer captured, and later syncs go on with the other tables.
        try phone.execute("INSERT INTO item(id, label) VALUES (3, 'local only')")
        #expect(try phone.outboxCount() == 0)
        try phone.insertNote("m", "another note")
        let next = try await phone.client.sync()
        #expect(next.uploaded == 1 && next.unsyncedTables.isEmpty && next.rejected.isEmpty)
    }

    @Test("the rename fields of a fetch-schema answer are read when present and optional")
    func fetchSchemaReadsRenames() throws {
        func read(_ json: String) throws -> FetchSchemaResponse {
            try FetchSchemaResponse(json: try JSONValue.parse(Array(json.utf8)))
        }
        let plain = try read(#"{"table": "memo", "struct_version": 2, "schema": "CREATE TABLE memo(id PRIMARY KEY)"}"#)
        #expect(plain.renamedFrom == nil && plain.renamedColumns.isEmpty)
        let renamed = try read(
            #"{"table": "memo", "struct_version": 2, "schema": "x", "renamed_from": "note", "renamed_columns": {"heading": "title"}}"#
        )
        #expect(renamed.renamedFrom == "note" && renamed.renamedColumns == ["heading": "title"])
        #expect(throws: WireFormatError.self) {
            _ = try read(#"{"table": "memo", "struct_version": 2, "schema": "x", "renamed_columns": {"heading": 1}}"#)
        }
    }
}
