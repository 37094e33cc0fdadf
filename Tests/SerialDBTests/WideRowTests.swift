import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// Reading by column name in rows of every width: a row of up to 16 columns scans its names,
/// a wider one looks them up in a table (see `ColumnLookup`), so both sides of that boundary
/// and well past it are read column by column. A duplicated name resolves to its leftmost
/// column, as in SQL.
@Suite struct WideRowTests {
    static let widths = [1, 2, 15, 16, 17, 18, 20, 33]

    /// Column `c<i>` holds `i * 7 + 1`: a value read from a neighbouring column shows.
    static func value(_ index: Int) -> Int { index * 7 + 1 }

    /// `SELECT 1 AS c0, 8 AS c1, ...` with `width` columns.
    static func selectWide(_ width: Int) -> String {
        "SELECT " + (0..<width).map { "\(value($0)) AS c\($0)" }.joined(separator: ", ")
    }

    /// Any number of `c<i>` columns, decoded through a keyed container: asks for `c0`, `c1`...
    /// while the row contains them.
    struct AllColumns: Decodable {
        var values: [Int] = []

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            while container.contains(Key(stringValue: "c\(values.count)")) {
                values.append(try container.decode(Int.self, forKey: Key(stringValue: "c\(values.count)")))
            }
        }
    }

    /// Twenty synthesized properties, as a real record would have.
    struct Twenty: Decodable, Equatable {
        var c0, c1, c2, c3, c4, c5, c6, c7, c8, c9: Int
        var c10, c11, c12, c13, c14, c15, c16, c17, c18, c19: Int
    }

    /// Seventeen, one past the boundary; the last property is optional.
    struct Seventeen: Decodable, Equatable {
        var c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15: Int
        var c16: Int?
    }

    struct Duplicated: Decodable, Equatable {
        var x: Int
        var last: Int
    }

    @Test(arguments: widths)
    func everyColumnReadsByNameFromARowOfThisWidth(width: Int) throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db throws in
            let expected = (0..<width).map(Self.value)
            try db.forEachRow(sql: Self.selectWide(width)) { row throws in
                #expect(try (0..<width).map { try row.decode(Int.self, column: "c\($0)") } == expected)
                #expect((0..<width).map { row.index(ofColumn: "C\($0)") } == Array(0..<width))
            }
            let copied = try #require(try db.fetchOne(Row.self, sql: Self.selectWide(width)))
            #expect(try (0..<width).map { try copied.decode(Int.self, column: "c\($0)") } == expected)
            #expect((0..<width).map { copied["c\($0)"] } == expected.map { .integer(Int64($0)) })
            let detached = Row(columns: copied.columnNames, values: expected.map { .integer(Int64($0)) })
            #expect(try (0..<width).map { try detached.decode(Int.self, column: "c\($0)") } == expected)
            #expect(try db.fetchAll(AllColumns.self, sql: Self.selectWide(width)).map(\.values) == [expected])
            #expect(try db.fetchOne(AllColumns.self, sql: Self.selectWide(width))?.values == expected)
        }
    }

    @Test func recordsOfSeventeenAndTwentyPropertiesDecodeEveryColumn() throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db throws in
            let twenty = try db.fetchAll(Twenty.self, sql: Self.selectWide(20))
            let values = twenty.first.map { record in
                Mirror(reflecting: record).children.map { $0.value as? Int }
            }
            #expect(values == (0..<20).map(Self.value))
            let seventeen = try #require(try db.fetchOne(Seventeen.self, sql: Self.selectWide(17)))
            #expect(Mirror(reflecting: seventeen).children.map { $0.value as? Int } == (0..<17).map(Self.value))
            #expect(seventeen.c16 == Self.value(16))
        }
    }

    @Test(arguments: [3, 16, 17, 20])
    func aDuplicatedNameResolvesToTheLeftmostColumn(width: Int) throws {
        // `x` twice: at column 1 and at the last column but one, in rows of every width.
        let names = (0..<width).map { $0 == 1 || $0 == width - 2 ? "x" : "c\($0)" }.dropLast() + ["last"]
        let sql =
            "SELECT "
            + names.enumerated().map { "\(Self.value($0.offset)) AS \($0.element)" }
            .joined(separator: ", ")
        let queue = try DatabaseQueue()
        try queue.inDatabase { db throws in
            let row = try #require(try db.fetchOne(Row.self, sql: sql))
            #expect(row.index(ofColumn: "x") == 1)
            #expect(row.index(ofColumn: "X") == 1)
            #expect(try row.decode(Int.self, column: "x") == Self.value(1))
            #expect(try row.decode(Int.self, column: "last") == Self.value(width - 1))
            try db.forEachRow(sql: sql) { row throws in #expect(try row.decode(Int.self, column: "x") == Self.value(1))
            }
            #expect(
                try db.fetchAll(Duplicated.self, sql: sql) == [
                    Duplicated(x: Self.value(1), last: Self.value(width - 1))
                ])
        }
    }
}
