import Foundation
import SerialDB
import SerialDBTestSupport
import Synchronization
import Testing

@testable import SerialDBSync

/// What the client does with downloaded rows whose columns are not exactly the table's: a row
/// with fewer columns updates only those, a row naming a column twice is refused whole.
@Suite("Downloaded rows of other shapes", .timeLimit(.minutes(5)))
struct DownloadedRowShapeTests {
    @Test("a downloaded row lacking columns updates the ones it has and keeps the others")
    func partialRowKeepsOtherColumns() async throws {
        let directory = try TemporaryDirectory()
        let (_, phone, laptop) = try await twoDevicesWithNoteA1(in: directory)
        _ = try await laptop.client.sync()

        try await rewriteServerRow(phone, laptop, id: "a1", to: ["id": .text("a1"), "TITLE": .text("renamed")])
        let report = try await laptop.client.sync()

        #expect(report.downloaded == 1)
        let title = try await laptop.queue.read { db in
            try db.fetchOne(String.self, sql: "SELECT title FROM note WHERE id = 'a1'")
        }
        let body = try await laptop.queue.read { db in
            try db.fetchOne(String.self, sql: "SELECT body FROM note WHERE id = 'a1'")
        }
        #expect(title == "renamed")
        #expect(body == "kept")
    }

    @Test("a downloaded row with every column, one named in another case, writes every column")
    func everyColumnInAnotherCaseIsWrittenWhole() async throws {
        let directory = try TemporaryDirectory()
        let (_, phone, laptop) = try await twoDevicesWithNoteA1(in: directory)
        _ = try await laptop.client.sync()

        // As many names as columns, one not spelled as the column: not the full row's fast path.
        try await rewriteServerRow(
            phone, laptop, id: "a1", to: ["body": .text("new body"), "TITLE": .text("renamed"), "id": .text("a1")])
        let report = try await laptop.client.sync()

        #expect(report.downloaded == 1)
        let values = try await laptop.queue.read { db in
            try db.fetchOne(Row.self, sql: "SELECT title, body FROM note WHERE id = 'a1'").map { [$0[0], $0[1]] }
        }
        #expect(values == [.text("renamed"), .text("new body")])
    }

    @Test("a downloaded row naming one column twice, in two cases, is refused and its page changes nothing")
    func duplicateColumnIsRefused() async throws {
        let directory = try TemporaryDirectory()
        let (_, phone, laptop) = try await twoDevicesWithNoteA1(in: directory)
        try phone.insertNote("a2", "second")
        _ = try await phone.client.sync()
        let cursorBefore = try laptop.cursor()

        try await rewriteServerRow(
            phone, laptop, id: "a1",
            to: ["id": .text("a1"), "title": .text("one"), "TITLE": .text("two"), "body": .null])
        let error = await #expect(throws: SyncError.self) { try await laptop.client.sync() }

        #expect(error?.code == .invalidResponse)
        #expect(error?.message.contains("twice") == true)
        #expect(try laptop.titles().isEmpty)
        #expect(try laptop.cursor() == cursorBefore)
    }

    @Test("rows of one page whose columns come in other orders, and a tombstone between them, are each applied whole")
    func rowsOfSeveralShapesInOnePage() async throws {
        let directory = try TemporaryDirectory()
        let (_, phone, laptop) = try await twoDevicesWithNoteA1(in: directory)
        try phone.insertNote("a2", "second", body: "b2")
        try phone.insertNote("a3", "third")
        _ = try await phone.client.sync()
        try phone.execute("DELETE FROM note WHERE id = 'a1'")
        try phone.insertNote("a4", "fourth", body: "b4")
        _ = try await phone.client.sync()
        // The server writes a row's columns in name order; this page gives two rows theirs in
        // other orders (each its own shape), around the tombstone of a1.
        let reordered = Mutex(false)
        laptop.transport.rewriteNextAnswerBytes.withLock {
            $0 = { bytes in
                let text = String(decoding: bytes, as: UTF8.self)
                    .replacing(
                        #"{"body":"b2","id":"a2","title":"second"}"#, with: #"{"title":"second","id":"a2","body":"b2"}"#
                    )
                    .replacing(
                        #"{"body":null,"id":"a3","title":"third"}"#, with: #"{"id":"a3","body":null,"title":"third"}"#)
                reordered.withLock {
                    $0 = text.contains(#""title":"second","id":"a2""#) && text.contains(#""id":"a3","body":null"#)
                }
                return Array(text.utf8)
            }
        }
        let report = try await laptop.client.sync()
        #expect(reordered.withLock { $0 }, "the page held the two rows in the server's form, and they were reordered")
        #expect(report.downloaded == 3)
        let rows = try await laptop.queue.read { db in
            try db.fetchAll(Row.self, sql: "SELECT id, title, body FROM note ORDER BY id").map {
                [$0[0], $0[1], $0[2]]
            }
        }
        #expect(
            rows == [
                [.text("a2"), .text("second"), .text("b2")], [.text("a3"), .text("third"), .null],
                [.text("a4"), .text("fourth"), .text("b4")],
            ])
    }

    @Test("a downloaded row without its key column is refused and its page changes nothing")
    func rowWithoutItsKeyIsRefused() async throws {
        let directory = try TemporaryDirectory()
        let (_, phone, laptop) = try await twoDevicesWithNoteA1(in: directory)
        try phone.insertNote("a2", "second")
        _ = try await phone.client.sync()
        let cursorBefore = try laptop.cursor()
        try await rewriteServerRow(phone, laptop, id: "a1", to: ["title": .text("keyless"), "body": .null])
        let error = await #expect(throws: SyncError.self) { try await laptop.client.sync() }
        #expect(error?.code == .invalidResponse)
        #expect(error?.message.contains("lacks its key column") == true)
        #expect(try laptop.titles().isEmpty)
        #expect(try laptop.cursor() == cursorBefore)
    }

    /// Two devices of one account with the note table; the phone has uploaded note "a1"
    /// (title "first", body "kept"), which the laptop has not fetched yet.
    private func twoDevicesWithNoteA1(in directory: TemporaryDirectory) async throws -> (
        InProcessSyncServer, Device, Device
    ) {
        let server = try InProcessSyncServer(tables: [noteTable])
        let phone = try Device(.file, in: directory, name: "phone", server: server)
        let laptop = try Device(.file, in: directory, name: "laptop", server: server)
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        try phone.insertNote("a1", "first", body: "kept")
        _ = try await phone.client.sync()
        return (server, phone, laptop)
    }

    /// Makes the laptop's next page carry `row` for `id`, under a new version: the phone
    /// uploads a real edit of `id` to the real server, and the laptop's transport hands the
    /// client that change with `row` in place of the server's (as a server of another
    /// implementation could send it).
    private func rewriteServerRow(
        _ phone: Device, _ laptop: Device, id: String, to row: [String: SyncValue]
    ) async throws {
        try phone.execute("UPDATE note SET title = title || '.' WHERE id = ?", [id])
        _ = try await phone.client.sync()
        laptop.transport.rewriteNextPage.withLock { rewrite in
            rewrite = { page in
                var page = page
                for index in page.changes.indices where page.changes[index].row["id"] == .text(id) {
                    page.changes[index].row = row
                }
                return page
            }
        }
    }
}
