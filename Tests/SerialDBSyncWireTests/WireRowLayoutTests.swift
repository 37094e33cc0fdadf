import Foundation
import Testing

@testable import SerialDBSyncWire

/// ``WireRowLayout`` writes a row from its values in name order, without a dictionary: the
/// bytes must be those ``SyncValue/write(row:to:)`` writes, because the outbox keeps a batch
/// as one writer wrote it and a retry parses and writes it again with the other.
@Suite("Rows written from a layout")
struct WireRowLayoutTests {
    /// Names that sort differently by bytes, by case and by Unicode, with characters JSON
    /// escapes, and values of every kind.
    private static let row: [String: SyncValue] = [
        "id": .integer(.min), "Z": .text("upper"), "a": .real(0.1), "é": .text("ключ \"q\" \\ \n\u{1}\u{0}z 🎈"),
        "o\u{308}": .blob(Data([0, 255, 34])), "quote\"name": .null, "tab\tname": .real(-2.0), "": .integer(0),
        "日本": .blob(Data()), "z": .real(1e300),
    ]

    private func written(_ write: (inout JSONWriter) throws -> Void) rethrows -> String {
        var writer = JSONWriter()
        try write(&writer)
        return writer.string
    }

    @Test("a row from a layout is the row written from its dictionary, byte for byte")
    func layoutWritesTheDictionarysBytes() throws {
        // Subsets too, each its own layout, and the names given in any order.
        var random = SystemRandomNumberGenerator()
        for count in [0, 1, 2, Self.row.count] {
            let names = Array(Self.row.keys.shuffled(using: &random).prefix(count))
            let row = Self.row.filter { names.contains($0.key) }
            let layout = WireRowLayout(columns: names.shuffled(using: &random))
            let values = layout.names.map { row[$0]! }
            let fromLayout = try written { try layout.write(values: values, to: &$0) }
            #expect(fromLayout == (try written { try SyncValue.write(row: row, to: &$0) }))
            #expect(try JSONValue.parse(Array(fromLayout.utf8)).objectValue?.count == count)
        }
    }

    @Test("a mutation written around a layout's row is the mutation written whole, byte for byte")
    func mutationAroundALayoutIsTheWholeMutation() throws {
        let layout = WireRowLayout(columns: Self.row.keys)
        let values = layout.names.map { Self.row[$0]! }
        let mutation = SyncMutation(
            seq: 42, table: "nöte \"x\"", op: .upsert, row: Self.row, key: nil, baseVersion: .max)
        let around = try written { writer in
            try SyncMutation.write(seq: 42, table: "nöte \"x\"", op: .upsert, baseVersion: .max, to: &writer) {
                $0.field(.row)
                try layout.write(values: values, to: &$0)
            }
        }
        #expect(around == (try written { try mutation.write(to: &$0) }))
        #expect(try SyncMutation(json: JSONValue.parse(Array(around.utf8)), context: "test") == mutation)
    }

    @Test("an infinite value is refused, as the dictionary's writer refuses it")
    func infinityIsRefused() {
        let layout = WireRowLayout(columns: ["id", "r"])
        var writer = JSONWriter()
        #expect(throws: NonFiniteValueError.self) {
            try layout.write(values: [.integer(1), .real(-.infinity)], to: &writer)
        }
    }
}
