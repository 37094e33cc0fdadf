import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// `StatementArguments([DatabaseValue])` binds each value by its case, without boxing it: the
/// path every row the sync client downloads takes. It must store exactly what the boxed path
/// stores, for every storage class and every awkward value.
@Suite struct DatabaseValueArgumentsTests {
    /// Values that have broken bindings before: NUL bytes inside TEXT and BLOB, empty TEXT and
    /// BLOB (not NULL), non-ASCII, Int64's extremes, REAL's odd values, a value over a megabyte.
    private static let awkward: [DatabaseValue] = [
        .null,
        .integer(.min), .integer(.max), .integer(0), .integer(-1),
        .real(-0.0), .real(.infinity), .real(-.infinity), .real(.leastNonzeroMagnitude), .real(.nan),
        .text(""), .text("a\u{0}b\u{0}"), .text("héllo ✓ 🙂 日本"), .text(String(repeating: "x€", count: 600_000)),
        .blob(Data()), .blob(Data([0, 0, 1, 0, 255])), .blob(Data(repeating: 0xAB, count: 1_300_000)),
        .null,  // after a value: the slot's earlier binding must not stay
    ]

    @Test(arguments: DatabaseKind.allCases)
    func everyAwkwardValueIsStoredAsTheBoxedPathStoresIt(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, v, w)")
            try db.execute(sql: "CREATE TABLE boxed(id INTEGER PRIMARY KEY, v, w)")
            // One cached statement for every row, as a page's upserts use it: a value must not
            // leak into the next row's binding.
            let insert = try db.cachedStatement(sql: "INSERT INTO t(id, v, w) VALUES (?, ?, ?)")
            let boxedInsert = try db.cachedStatement(sql: "INSERT INTO boxed(id, v, w) VALUES (?, ?, ?)")
            for (id, value) in Self.awkward.enumerated() {
                try insert.execute(arguments: StatementArguments([.integer(Int64(id)), value, value]))
                let boxed: [(any DatabaseValueConvertible)?] = [id, value, value]
                try boxedInsert.execute(arguments: StatementArguments(boxed))
            }
        }
        try queue.read { db in
            for (id, value) in Self.awkward.enumerated() {
                // A Row, not fetchOne(DatabaseValue.self), which reads NULL as no value.
                let read = try db.fetchOne(Row.self, sql: "SELECT v FROM t WHERE id = ?", arguments: [id])?[0]
                let boxed = try db.fetchOne(Row.self, sql: "SELECT v FROM boxed WHERE id = ?", arguments: [id])?[0]
                let sameTwice = try db.fetchOne(
                    Bool.self, sql: "SELECT v IS w FROM t WHERE id = ?", arguments: [id])
                #expect(read == boxed, "value \(id)")
                #expect(sameTwice == true, "value \(id)")
                switch value {
                case .real(let real) where real.isNaN:
                    #expect(read == .null, "SQLite stores NaN as NULL")
                default:
                    #expect(read == value, "value \(id)")
                }
            }
            let lengths = try db.fetchAll(
                Int.self, sql: "SELECT length(CAST(v AS BLOB)) FROM t WHERE typeof(v) IN ('text', 'blob') ORDER BY id")
            #expect(lengths == [0, 4, 22, 2_400_000, 0, 5, 1_300_000])
        }
    }

    @Test func aReusedStatementGivenTooFewOrTooManyValuesRefusesAndWritesNothing() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, v)")
            let insert = try db.cachedStatement(sql: "INSERT INTO t(id, v) VALUES (?, ?)")
            try insert.execute(arguments: StatementArguments([.integer(1), .text("first")]))
            // Without the count check, parameter 2 would keep "first" from the row before.
            for wrong in [[DatabaseValue.integer(2)], [.integer(2), .text("a"), .text("b")]] {
                let error = #expect(throws: SerialDBError.self) {
                    try insert.execute(arguments: StatementArguments(wrong))
                }
                #expect(error?.code == .invalidArguments)
                #expect(error?.message.contains("expects 2 argument(s) but \(wrong.count) were given") == true)
            }
            #expect(try db.fetchAll(DatabaseValue.self, sql: "SELECT v FROM t ORDER BY id") == [.text("first")])
        }
    }

    @Test func valuesSpreadOverTheStatementsOfOneScriptInOrder() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, v)")
            try db.execute(
                sql: "INSERT INTO t VALUES (?, ?); INSERT INTO t VALUES (?, ?)",
                arguments: StatementArguments([.integer(1), .text("a\u{0}"), .integer(2), .blob(Data([0]))]))
            #expect(
                try db.fetchAll(DatabaseValue.self, sql: "SELECT v FROM t ORDER BY id") == [
                    .text("a\u{0}"), .blob(Data([0])),
                ])
            let error = #expect(throws: SerialDBError.self) {
                try db.execute(
                    sql: "INSERT INTO t VALUES (?, ?); SELECT 1",
                    arguments: StatementArguments([.integer(3), .null, .integer(4)]))
            }
            #expect(error?.message.contains("1 argument(s) left over") == true)
        }
    }

    @Test func fetchingWithDatabaseValueArgumentsFindsTheRowsTheyName() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t(a, b, PRIMARY KEY(a, b))")
            try db.execute(
                sql: "INSERT INTO t VALUES (?, ?), (?, ?)",
                arguments: [Int64.min, "x\u{0}y", Int64.max, Data([0, 1])])
            let found = try db.fetchAll(
                Int.self, sql: "SELECT count(*) FROM t WHERE a = ? AND b = ?",
                arguments: StatementArguments([.integer(.min), .text("x\u{0}y")]))
            #expect(found == [1])
            let cut = try db.fetchOne(
                Int.self, sql: "SELECT count(*) FROM t WHERE a = ? AND b = ?",
                arguments: StatementArguments([.integer(.min), .text("x")]))
            #expect(cut == 0)
            let blob = try db.fetchOne(
                Int.self, sql: "SELECT count(*) FROM t WHERE a = ? AND b = ?",
                arguments: StatementArguments([.integer(.max), .blob(Data([0, 1]))]))
            #expect(blob == 1)
        }
    }
}
