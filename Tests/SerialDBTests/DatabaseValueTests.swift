import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

@Suite struct DatabaseValueTests {
    @Test(arguments: DatabaseKind.allCases)
    func everyValueTypeRoundTripsThroughAColumn(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        let date = Date(timeIntervalSince1970: 1_700_000_000.123)
        let uuid = UUID()
        let blob = Data([0, 1, 2, 255])
        try queue.inDatabase { db in
            try db.execute(sql: "CREATE TABLE v(i, i64, d, s, b, blob, date, uuid, n)")
            let nothing: String? = nil
            try db.execute(
                sql: "INSERT INTO v VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                arguments: [42, Int64.max, 2.5, "héllo ✓", true, blob, date, uuid, nothing])
            let row = try #require(try db.fetchOne(Row.self, sql: "SELECT * FROM v"))
            #expect(try row.decode(Int.self, column: "i") == 42)
            #expect(try row.decode(Int64.self, column: "i64") == Int64.max)
            #expect(try row.decode(Double.self, column: "d") == 2.5)
            #expect(try row.decode(String.self, column: "s") == "héllo ✓")
            #expect(try row.decode(Bool.self, column: "b") == true)
            #expect(try row.decode(Data.self, column: "blob") == blob)
            let readDate = try row.decode(Date.self, column: "date")
            #expect(abs(readDate.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.001)
            #expect(try row.decode(UUID.self, column: "uuid") == uuid)
            #expect(try row.decode(String?.self, column: "n") == nil)
            #expect(row["n"] == .null)
            #expect(row["date"] == .text("2023-11-14 22:13:20.123"))
        }
    }

    @Test func datesFormatTheWaySQLiteReadsThem() throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db in
            for seconds in [-86_400.5, 0, 951_782_400, 4_102_444_800.999] {
                let date = Date(timeIntervalSince1970: seconds)
                let viaSQLite = try #require(
                    try db.fetchOne(Double.self, sql: "SELECT (julianday(?) - 2440587.5) * 86400", arguments: [date]))
                #expect(abs(viaSQLite - (seconds * 1000).rounded(.down) / 1000) < 0.001)
                let back = try db.fetchOne(Date.self, sql: "SELECT ?", arguments: [date])
                #expect(back == Date(timeIntervalSince1970: (seconds * 1000).rounded(.down) / 1000))
            }
            #expect(
                try db.fetchOne(Date.self, sql: "SELECT '2024-02-29T12:34:56Z'")
                    == Date(timeIntervalSince1970: 1_709_210_096))
            #expect(
                try db.fetchOne(Date.self, sql: "SELECT '2024-02-29'") == Date(timeIntervalSince1970: 1_709_164_800))
        }
    }

    @Test func nullOrWrongKindIsADecodingErrorNamingTheColumn() throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db in
            let row = try #require(try db.fetchOne(Row.self, sql: "SELECT NULL AS empty, 'text' AS word"))
            let nullError = #expect(throws: SerialDBError.self) { try row.decode(Int.self, column: "empty") }
            #expect(nullError?.code == .decodingFailed)
            #expect(nullError?.message.contains("`empty`") == true)
            #expect(nullError?.message.contains("Optional") == true)
            let kindError = #expect(throws: SerialDBError.self) { try row.decode(Int.self, column: "word") }
            #expect(kindError?.message.contains("TEXT") == true)
            #expect(throws: SerialDBError.self) { try row.decode(Int.self, column: "missing") }
        }
    }

    @Test func fetchOneOfAValueIsNilForNoRowAndForNull() throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db in
            try Player.createTable(db)
            #expect(try db.fetchOne(Int.self, sql: "SELECT max(score) FROM player") == nil)
            #expect(try db.fetchOne(Int.self, sql: "SELECT score FROM player") == nil)
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") == 0)
        }
    }
}
