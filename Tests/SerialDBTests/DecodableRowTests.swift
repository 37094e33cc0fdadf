import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// `Decodable` records read from rows: properties find their columns by name whatever the
/// column order, optionals read NULL and missing columns as `nil`, and a duplicated name
/// resolves to its leftmost column even where the decoder expected the next key.
@Suite struct DecodableRowTests {
    struct Tag: Codable, Equatable {
        var label: String
    }

    struct Record: Decodable, Equatable {
        var id: Int64
        var name: String?
        var score: Int?
        var ratio: Double?
        var flag: Bool?
        var small: Int32?
        var wide: Int64?
        var real: Float?
        var when: Date?
        var tag: Tag?
        var missing: String?
    }

    static let records = """
        SELECT id, name, score, ratio, flag, small, wide, real, "when", tag FROM r ORDER BY id
        """

    static func seed(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE r(id INTEGER PRIMARY KEY, name TEXT, score INTEGER, ratio REAL, flag INTEGER,
                    small INTEGER, wide INTEGER, real REAL, "when" TEXT, tag TEXT);
                INSERT INTO r VALUES (1, 'ann', 10, 0.5, 1, 7, 9000000000, 1.5, '2024-02-29 12:00:00.000',
                    '{"label":"red"}');
                INSERT INTO r(id) VALUES (2);
                INSERT INTO r VALUES (3, 'cy', 30, 2.5, 0, -7, -9000000000, -1.5, NULL, NULL);
                """)
    }

    @Test(arguments: DatabaseKind.allCases)
    func optionalsReadValuesNullsAndMissingColumnsRowAfterRow(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        let records = try queue.inDatabase { db in
            try Self.seed(db)
            return try db.fetchAll(Record.self, sql: Self.records)
        }
        #expect(
            records == [
                Record(
                    id: 1, name: "ann", score: 10, ratio: 0.5, flag: true, small: 7, wide: 9_000_000_000, real: 1.5,
                    when: Date(timeIntervalSince1970: 1_709_208_000), tag: Tag(label: "red"), missing: nil),
                Record(
                    id: 2, name: nil, score: nil, ratio: nil, flag: nil, small: nil, wide: nil, real: nil, when: nil,
                    tag: nil, missing: nil),
                Record(
                    id: 3, name: "cy", score: 30, ratio: 2.5, flag: false, small: -7, wide: -9_000_000_000, real: -1.5,
                    when: nil, tag: nil, missing: nil),
            ])
    }

    @Test func columnsInAnotherOrderThanThePropertiesDecodeByName() throws {
        let queue = try DatabaseQueue()
        let records = try queue.inDatabase { db in
            try Self.seed(db)
            return try db.fetchAll(
                Record.self,
                sql: "SELECT tag, \"when\", real, wide, small, flag, ratio, score, name, id FROM r ORDER BY id")
        }
        #expect(records.map(\.id) == [1, 2, 3])
        #expect(records.map(\.name) == ["ann", nil, "cy"])
        #expect(records.map(\.score) == [10, nil, 30])
        #expect(records.map(\.tag) == [Tag(label: "red"), nil, nil])
    }

    @Test func anOptionalOfTheWrongKindIsADecodingError() throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db throws in
            let error = #expect(throws: SerialDBError.self) {
                try db.fetchAll(Record.self, sql: "SELECT 1 AS id, 'ten' AS score")
            }
            #expect(error?.code == .decodingFailed)
            #expect(error?.message.contains("`score`") == true)
        }
    }

    struct TwoOfX: Decodable, Equatable {
        var a: Int
        var x: Int
    }

    @Test func aDuplicateRightAfterThePreviousKeyStillResolvesToTheLeftmostColumn() throws {
        // After `a` (column 1) the decoder expects `x` at column 2, but the leftmost `x` is column 0.
        let queue = try DatabaseQueue()
        let records = try queue.inDatabase { db in
            try db.fetchAll(TwoOfX.self, sql: "SELECT 1 AS x, 2 AS a, 3 AS x UNION ALL SELECT 4, 5, 6")
        }
        #expect(records == [TwoOfX(a: 2, x: 1), TwoOfX(a: 5, x: 4)])
    }

    /// A hand-written `init(from:)` that asks `decodeNil` before each `decode`.
    struct Checked: Decodable, Equatable {
        var values: [Int?]

        enum CodingKeys: String, CodingKey { case a, b, c }

        init(values: [Int?]) { self.values = values }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            values = try [CodingKeys.a, .b, .c].map { key in
                try container.decodeNil(forKey: key) ? nil : try container.decode(Int.self, forKey: key)
            }
        }
    }

    @Test func decodeNilBeforeDecodeReadsEachColumn() throws {
        let queue = try DatabaseQueue()
        let records = try queue.inDatabase { db in
            try db.fetchAll(Checked.self, sql: "SELECT 1 AS a, NULL AS b, 3 AS c UNION ALL SELECT NULL, 5, NULL")
        }
        #expect(records == [Checked(values: [1, nil, 3]), Checked(values: [nil, 5, nil])])
    }
}
