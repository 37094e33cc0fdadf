import Foundation
import SerialDB
import SerialDBSyncWire
import SerialDBTestSupport
import Testing

@testable import SerialDBSync

/// An infinite REAL has no JSON form: the row is reported as rejected, the rest of the sync goes on.
@Suite("Infinite REAL values")
struct SyncNonFiniteTests {
    static let reading = InProcessSyncServer.Table(
        name: "reading", schema: "CREATE TABLE reading(id TEXT PRIMARY KEY NOT NULL, r REAL)")

    @Test("a row holding an infinity is rejected in the report while the other rows go up and down")
    func anInfiniteRowIsRejectedAndTheRestSyncs() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [Self.reading, noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let laptop = try Device(.file, in: directory, name: "laptop", server: server)
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        try laptop.insertNote("from laptop", "x")
        _ = try await laptop.client.sync()
        try phone.execute(
            "INSERT INTO reading(id, r) VALUES ('ok', 1.5), ('up', ?), ('down', ?), ('ok2', 2)",
            [Double.infinity, -Double.infinity])
        let report = try await phone.client.sync()
        #expect(report.uploaded == 2)
        #expect(report.downloaded == 1)
        #expect(
            report.rejected.map(\.key).sorted { "\($0)" < "\($1)" } == [["id": .text("down")], ["id": .text("up")]])
        for rejection in report.rejected {
            #expect(rejection.table == "reading" && rejection.operation == .upsert)
            #expect(rejection.message.hasPrefix("not sent: column \"r\" is "))
            #expect(rejection.message.contains("inf"))
        }
        #expect(try phone.outboxCount() == 0)
        #expect(try server.rows(of: "reading", account: "alice").count == 2)
        // The local row is untouched; once finite it goes up with the next sync.
        let kept = try await phone.queue.read { db in
            try db.fetchOne(Double.self, sql: "SELECT r FROM reading WHERE id = 'up'")
        }
        #expect(kept == .infinity)
        try phone.execute("UPDATE reading SET r = 3 WHERE id = 'up'")
        let fixed = try await phone.client.sync()
        #expect(fixed.uploaded == 1 && fixed.rejected.isEmpty)
    }

    @Test("more infinite rows than a page never hold up the finite ones behind them")
    func manyInfiniteRowsDoNotBlock() async throws {
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [Self.reading])
        let phone = try Device(.file, in: directory, name: "phone", server: server, pageSize: 3)
        _ = try await phone.client.sync()
        try await phone.queue.write { db in
            for index in 0..<7 {
                try db.execute(
                    sql: "INSERT INTO reading(id, r) VALUES (?, ?)", arguments: ["inf\(index)", Double.infinity])
            }
            try db.execute(sql: "INSERT INTO reading(id, r) VALUES ('finite', 1)")
        }
        let report = try await phone.client.sync()
        #expect(report.rejected.count == 7)
        #expect(report.uploaded == 1)
    }

    @Test("the JSON writer never writes a number JSON cannot read", arguments: [Double.infinity, -.infinity, .nan])
    func theWriterWritesNullForNonFiniteNumbers(number: Double) throws {
        var writer = JSONWriter()
        writer.raw("[")
        writer.value(.real(number))
        writer.raw(",")
        writer.json(.number(number))
        writer.raw(",")
        writer.number(number)
        writer.raw("]")
        #expect(try JSONValue.parse(writer.bytes) == .array([.null, .null, .null]))
    }
}
