import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// A type change whose copy would change stored values (`'0042'` into an INTEGER column
/// becomes `42`) is refused like a data-losing change, naming the column, the values and the
/// rows, unless the caller allows converting that column (issue 25, item 3).
@Suite struct ValueConversionTests {
    private func queue(_ kind: DatabaseKind, in directory: TemporaryDirectory, _ sql: String) throws -> DatabaseQueue {
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in try db.execute(sql: sql) }
        return queue
    }

    private func refusal(_ queue: DatabaseQueue, _ schema: String, _ options: SchemaChangeOptions = .init()) throws
        -> SerialDBError?
    {
        do {
            try queue.inDatabase { db in _ = try db.changeSchemaAsPlanned(to: schema, options: options) }
            return nil
        } catch let error as SerialDBError {
            return error
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func textBecomingIntegerIsRefusedNamingTheAlteredValuesUntilConversionIsAllowed(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try queue(
            kind, in: directory,
            """
            CREATE TABLE product(id INTEGER PRIMARY KEY, code TEXT);
            INSERT INTO product VALUES (1, '0042'), (2, '42'), (3, 'abc'), (4, ' 7'), (5, '1e3'), (6, NULL),
              (7, x'3432'), (8, '12abc'), (9, '-5');
            """)
        let before = try queue.read { db in try DatabaseSnapshot(db) }
        let schema = "CREATE TABLE product(id INTEGER PRIMARY KEY, code INTEGER)"
        let error = try refusal(queue, schema)
        #expect(error?.code == .schemaChangeRefused)
        let message = error?.message ?? ""
        #expect(message.contains("Column product.code changes from TEXT to INTEGER"), "\(message)")
        #expect(message.contains("3 stored value(s)"), "\(message)")
        #expect(message.contains("'0042' → 42, ' 7' → 7, '1e3' → 1000"), "\(message)")
        #expect(message.contains("(rows with rowid 1, 4, 5)"), "\(message)")
        #expect(message.contains("--convert product.code"), "\(message)")
        #expect(try queue.read { db in try DatabaseSnapshot(db) } == before)

        var options = SchemaChangeOptions()
        options.allowConverting(column: "CODE", inTable: "Product")
        #expect(try refusal(queue, schema, options) == nil)
        let values = try queue.read { db in
            try db.fetchAll(DatabaseValue.self, sql: "SELECT code FROM product ORDER BY id")
        }
        #expect(
            values == [
                .integer(42), .integer(42), .text("abc"), .integer(7), .integer(1000), .null, .blob(Data("42".utf8)),
                .text("12abc"), .integer(-5),
            ])
    }

    @Test(arguments: DatabaseKind.allCases)
    func aStrictAnyColumnMadeOrdinaryIsRefusedWhereItsTextWouldBecomeNumbers(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try queue(
            kind, in: directory,
            """
            CREATE TABLE item(id INTEGER PRIMARY KEY, v ANY) STRICT;
            INSERT INTO item VALUES (1, '000123'), (2, 123), (3, 'word');
            """)
        let error = try refusal(queue, "CREATE TABLE item(id INTEGER PRIMARY KEY, v ANY)")
        #expect(error?.message.contains("from ANY (STRICT) to ANY") == true, "\(String(describing: error))")
        #expect(error?.message.contains("1 stored value(s): '000123' → 123 (rows with rowid 1)") == true)
        // Into a TEXT column every value is kept: 123 becomes '123', which reads back as 123.
        #expect(try refusal(queue, "CREATE TABLE item(id INTEGER PRIMARY KEY, v TEXT)") == nil)
        #expect(
            try queue.read { db in try db.fetchAll(DatabaseValue.self, sql: "SELECT v FROM item ORDER BY id") } == [
                .text("000123"), .text("123"), .text("word"),
            ])
    }

    @Test(arguments: DatabaseKind.allCases)
    func valuesAStrictColumnCannotHoldAreRefusedEvenWhenConvertingIsAllowed(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try queue(
            kind, in: directory,
            """
            CREATE TABLE reading(id INTEGER PRIMARY KEY, level TEXT);
            INSERT INTO reading VALUES (1, '5'), (2, '0007'), (3, 'high'), (4, NULL);
            """)
        let before = try queue.read { db in try DatabaseSnapshot(db) }
        let schema = "CREATE TABLE reading(id INTEGER PRIMARY KEY, level INTEGER) STRICT"
        var options = SchemaChangeOptions()
        options.allowConverting(column: "level", inTable: "reading")
        let error = try refusal(queue, schema, options)
        #expect(
            error?.message.contains(
                "1 stored value(s) cannot be stored that way, such as 'high' → 'high' (rows with rowid 3)")
                == true, "\(String(describing: error))")
        #expect(try queue.read { db in try DatabaseSnapshot(db) } == before)
        try queue.write { db in try db.execute(sql: "UPDATE reading SET level = NULL WHERE id = 3") }
        // '0007' would become 7: refused without the option, converted with it.
        #expect(try refusal(queue, schema)?.message.contains("'0007' → 7 (rows with rowid 2)") == true)
        #expect(try refusal(queue, schema, options) == nil)
        #expect(
            try queue.read { db in try db.fetchAll(DatabaseValue.self, sql: "SELECT level FROM reading ORDER BY id") }
                == [.integer(5), .integer(7), .null, .null])
    }

    @Test(arguments: DatabaseKind.allCases)
    func changesThatKeepEveryValueAreNotRefused(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try queue(
            kind, in: directory,
            """
            CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, n INTEGER, r REAL, b BLOB);
            INSERT INTO t VALUES (1, 'Ann', 42, 1.5, x'00ff'), (2, 'bob', -7, 2.0, NULL), (3, '42', NULL, 1e300, x'');
            """)
        // Collation only; integers to text and back; reals to text ('1.5' reads back as 1.5);
        // a blob kept by any affinity.
        for schema in [
            "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT COLLATE NOCASE, n INTEGER, r REAL, b BLOB)",
            "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT COLLATE NOCASE, n TEXT, r TEXT, b INTEGER)",
            "CREATE TABLE t(id INTEGER PRIMARY KEY, name VARCHAR(20), n NUMERIC, r TEXT, b TEXT)",
        ] {
            #expect(try refusal(queue, schema) == nil, "\(schema)")
        }
        #expect(
            try queue.read { db in try db.fetchAll(DatabaseValue.self, sql: "SELECT n FROM t ORDER BY id") } == [
                .integer(42), .integer(-7), .null,
            ])
    }

    @Test(arguments: DatabaseKind.allCases)
    func realsWhoseTextIsNotTheSameNumberAreRefused(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try queue(
            kind, in: directory,
            """
            CREATE TABLE m(id INTEGER PRIMARY KEY, x REAL, big INTEGER, price NUMERIC);
            INSERT INTO m VALUES (1, 0.1 + 0.2, 9007199254740993, '1.50'), (2, 0.5, 3, 'n/a');
            """)
        let toText = try refusal(queue, "CREATE TABLE m(id INTEGER PRIMARY KEY, x TEXT, big INTEGER, price NUMERIC)")
        #expect(toText?.message.contains("m.x changes from REAL to TEXT") == true, "\(String(describing: toText))")
        #expect(toText?.message.contains("(rows with rowid 1)") == true)
        let toReal = try refusal(queue, "CREATE TABLE m(id INTEGER PRIMARY KEY, x REAL, big REAL, price NUMERIC)")
        #expect(toReal?.message.contains("m.big changes from INTEGER to REAL") == true, "\(String(describing: toReal))")
        #expect(toReal?.message.contains("1 stored value(s)") == true)
    }

    /// The refusal is judged by what SQLite's own copy stores: for every pair of column types
    /// (ordinary and STRICT) and a pool of awkward values, the plan refuses exactly when the
    /// copy, once allowed, stores a value that does not read back as the old one.
    @Test func thePredictionMatchesWhatTheCopyStores() throws {
        let values: [DatabaseValue] = [
            .text("0042"), .text("42"), .text(" 42 "), .text("1e3"), .text("3.0"), .text("1.50"), .text("0x10"),
            .text("-0"), .text(""), .text("9223372036854775808"), .text("abc"), .integer(7), .integer(Int64.max),
            .integer(9_007_199_254_740_993), .real(0.1 + 0.2), .real(2.0), .real(1e300), .blob(Data([0x34, 0x32])),
            .null,
        ]
        let types = ["TEXT", "INTEGER", "REAL", "NUMERIC", "BLOB", "", "VARCHAR(9)", "ANY"]
        var checked = 0
        for old in types where !old.isEmpty {
            for new in types {
                for strict in [false, true] where !strict || ["TEXT", "INTEGER", "REAL", "BLOB", "ANY"].contains(new) {
                    for value in values {
                        let queue = try DatabaseQueue()
                        let inserted = try queue.write { db -> DatabaseValue in
                            try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, v \(old))")
                            try db.execute(sql: "INSERT INTO t VALUES (1, ?)", arguments: [value])
                            return try db.fetchOne(DatabaseValue.self, sql: "SELECT v FROM t") ?? .null
                        }
                        let schema = "CREATE TABLE t(id INTEGER PRIMARY KEY, v \(new))" + (strict ? " STRICT" : "")
                        let plan = try queue.inDatabase { db in try db.planSchemaChange(to: schema) }
                        var options = SchemaChangeOptions()
                        options.allowConverting(column: "v", inTable: "t")
                        let context = "\(old) → \(new)\(strict ? " STRICT" : ""): \(inserted)"
                        let stored: DatabaseValue?
                        do {
                            try queue.inDatabase { db in _ = try db.changeSchemaAsPlanned(to: schema, options: options)
                            }
                            stored = try queue.read { db in try db.fetchOne(DatabaseValue.self, sql: "SELECT v FROM t")
                            }
                        } catch let error as SerialDBError where error.code == .schemaChangeRefused {
                            // Only a STRICT column refuses a value the option cannot help.
                            #expect(strict, "\(context): \(error)")
                            stored = nil
                        }
                        if let stored {
                            let altered = try Self.reads(stored, differentlyFrom: inserted)
                            #expect(plan.isRefused == altered, "\(context) stored \(stored) \(plan.refusals)")
                        }
                        checked += 1
                    }
                }
            }
        }
        #expect(checked > 1000)
    }

    /// Whether `new`, read back as the storage class `old` had, is another value.
    static func reads(_ new: DatabaseValue, differentlyFrom old: DatabaseValue) throws -> Bool {
        let type: String
        switch old {
        case .null: return false
        case .integer: type = "INTEGER"
        case .real: type = "REAL"
        case .text: type = "TEXT"
        case .blob: return new != old
        }
        let back = try DatabaseQueue().read { db in
            try db.fetchOne(DatabaseValue.self, sql: "SELECT CAST(? AS \(type))", arguments: [new]) ?? .null
        }
        if case .integer(let integer) = old, case .real(let real) = new, Double(exactly: integer) != real {
            return true
        }
        return back != old
    }
}
