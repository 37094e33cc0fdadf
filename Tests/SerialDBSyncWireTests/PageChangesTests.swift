import Foundation
import Testing

@testable import SerialDBSyncWire

/// ``PageChanges``, the layout a client reads a page into: the same changes as the general
/// reader's, each row's column names kept once per shape.
@Suite("A page's changes in columns")
struct PageChangesTests {
    private func changes(_ text: String) throws -> PageChanges {
        let bytes = Array(text.utf8)
        let (_, range) = try #require(FetchDataResponse.readSkippingChanges(bytes))
        return try FetchDataResponse.readChanges(bytes, in: range)
    }

    private func page(_ changes: String) -> String {
        #"{"table":"t","changes":["# + changes + #"],"version":9,"has_more":false,"resync":false,"floor":0}"#
    }

    @Test("rows with the same names in the same order share one shape; a tombstone's key is another")
    func rowsShareTheirShape() throws {
        let text = page(
            #"{"version":1,"deleted":false,"row":{"id":1,"t":"a"}},{"version":2,"deleted":false,"row":{"id":2,"t":"b"}},"#
                + #"{"version":3,"deleted":true,"row":{"id":3}},{"version":4,"deleted":false,"row":{"id":4,"t":"d"}},"#
                + #"{"version":5,"deleted":true,"row":{"id":5}}"#)
        let read = try changes(text)
        #expect(read.shapes == [["id", "t"], ["id"]])
        #expect(read.shapeOfChange == [0, 0, 1, 0, 1])
        #expect(read.versions == [1, 2, 3, 4, 5])
        #expect(read.deleted == [false, false, true, false, true])
        #expect(Array(read.values(of: 3)) == [.integer(4), .text("d")])
        #expect(read.changes == (try FetchDataResponse(jsonBytes: Array(text.utf8)).changes))
    }

    @Test("names in another order are another shape, whose values follow their names")
    func anotherOrderIsAnotherShape() throws {
        let read = try changes(
            page(
                #"{"version":1,"deleted":false,"row":{"a":1,"b":2}},{"version":2,"deleted":false,"row":{"b":3,"a":4}}"#)
        )
        #expect(read.shapes == [["a", "b"], ["b", "a"]])
        #expect(read.row(of: 1) == ["a": .integer(4), "b": .integer(3)])
    }

    @Test("a column named twice keeps both in its shape and its last value in the row")
    func aColumnNamedTwiceKeepsItsLastValue() throws {
        let read = try changes(page(#"{"version":1,"deleted":false,"row":{"id":1,"id":"two"}}"#))
        #expect(read.columns(of: 0) == ["id", "id"])
        #expect(read.row(of: 0) == ["id": .text("two")])
    }

    @Test("rows whose names keep changing get a shape each, and read back whole")
    func everChangingNamesReadWhole() throws {
        // Twelve shapes, more than are searched: a shape seen before may be stored again.
        let rows = (0..<40).map { index in
            #"{"version":\#(index + 1),"deleted":false,"row":{"id":\#(index),"c\#(index % 12)":"v"}}"#
        }
        let text = page(rows.joined(separator: ","))
        let read = try changes(text)
        #expect(read.count == 40)
        #expect(read.changes == (try FetchDataResponse(jsonBytes: Array(text.utf8)).changes))
        #expect(read.shapes.count >= 12)
    }

    @Test("changes laid out in columns read back as the same changes")
    func changesRoundTrip() {
        let changes = [
            SyncChange(version: 1, deleted: false, row: ["id": .text("a"), "n": .integer(1), "b": .blob(Data([1]))]),
            SyncChange(version: 2, deleted: true, row: ["id": .text("b")]),
            SyncChange(version: 3, deleted: false, row: [:]),
            SyncChange(version: 4, deleted: false, row: ["n": .real(2.5), "id": .text("c"), "b": .null]),
        ]
        let laidOut = PageChanges(changes)
        #expect(laidOut.changes == changes)
        #expect(laidOut.shapes == [["b", "id", "n"], ["id"], []])
        #expect(laidOut.shapeOfChange == [0, 1, 2, 0])
    }
}
