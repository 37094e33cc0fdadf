import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// Random pairs of table definitions with random rows: after the plan runs, every shared
/// column of every row holds its old value (or the fill value where a NULL became NOT NULL),
/// and the live schema is the desired one (planning again finds nothing to do). A change the
/// rows cannot take is refused by the plan itself, never first by the copy.
@Suite struct TableRebuildPropertyTests {
    struct ColumnSpec {
        var name: String
        var type: String
        var notNull: Bool
        var defaultSQL: String?
    }

    struct TableSpec {
        var columns: [ColumnSpec]
        var primaryKey: [String]
        var integerPrimaryKey: String?
        var withoutRowID: Bool

        var sql: String {
            var items = columns.map { column -> String in
                var text = column.name.quotedDatabaseIdentifier + (column.type.isEmpty ? "" : " " + column.type)
                if column.name == integerPrimaryKey { text += " PRIMARY KEY" }
                if column.notNull { text += " NOT NULL" }
                if let defaultSQL = column.defaultSQL { text += " DEFAULT " + defaultSQL }
                return text
            }
            if integerPrimaryKey == nil && !primaryKey.isEmpty {
                items.append("PRIMARY KEY(" + primaryKey.map(\.quotedDatabaseIdentifier).joined(separator: ", ") + ")")
            }
            return "CREATE TABLE t(" + items.joined(separator: ", ") + ")" + (withoutRowID ? " WITHOUT ROWID" : "")
        }
    }

    static let names = ["a", "b", "c", "d", "e", "f", "g"]
    static let types = ["INTEGER", "TEXT", "REAL", "BLOB", ""]

    static func randomTable(_ random: inout SeededGenerator) -> TableSpec {
        let count = Int.random(in: 2...5, using: &random)
        let chosen = Array(names.shuffled(using: &random).prefix(count))
        var columns = chosen.map { name in
            ColumnSpec(
                name: name, type: types.randomElement(using: &random)!, notNull: Bool.random(using: &random),
                defaultSQL: Bool.random(using: &random) ? "0" : nil)
        }
        var spec = TableSpec(columns: columns, primaryKey: [], integerPrimaryKey: nil, withoutRowID: false)
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            columns[0].type = "INTEGER"
            spec.columns = columns
            spec.integerPrimaryKey = columns[0].name
        case 1:
            spec.primaryKey = [columns[0].name]
            spec.withoutRowID = Bool.random(using: &random)
            spec.columns[0].notNull = true
        default:
            break
        }
        return spec
    }

    /// A value for a column; every value in a column is unique, so any column can become a key.
    static func value(for column: ColumnSpec, row: Int, _ random: inout SeededGenerator) -> DatabaseValue {
        if !column.notNull && Int.random(in: 0..<5, using: &random) == 0 { return .null }
        switch column.type {
        case "INTEGER": return .integer(Int64(row))
        case "TEXT": return .text("v\(row)-\(Int.random(in: 0...9, using: &random))")
        case "REAL": return .real(Double(row) + 0.25)
        case "BLOB": return .blob(Data([UInt8(row % 256), UInt8(row / 256)]))
        default: return Bool.random(using: &random) ? .integer(Int64(row)) : .text("x\(row)")
        }
    }

    @Test(arguments: 0..<200)
    func randomSchemaChangesKeepEverySharedValue(seed: Int) throws {
        var random = SeededGenerator(seed: UInt64(seed) &* 7919 &+ 17)
        let old = Self.randomTable(&random)
        var new = Self.randomTable(&random)
        if seed % 5 == 0 { new = old }  // sometimes nothing changes
        let queue = try DatabaseQueue()
        let rowCount = Int.random(in: 0...40, using: &random)
        try queue.write { db in
            try db.execute(sql: old.sql)
            let columns = old.columns.map(\.name.quotedDatabaseIdentifier).joined(separator: ", ")
            let marks = Array(repeating: "?", count: old.columns.count).joined(separator: ", ")
            for row in 1...max(rowCount, 1) where rowCount > 0 {
                let values = old.columns.map { column -> (any DatabaseValueConvertible)? in
                    column.name == old.integerPrimaryKey
                        ? DatabaseValue.integer(Int64(row)) : Self.value(for: column, row: row, &random)
                }
                try db.execute(
                    sql: "INSERT INTO t(\(columns)) VALUES (\(marks))", arguments: StatementArguments(values))
            }
        }
        let shared = new.columns.map(\.name).filter { name in old.columns.contains { $0.name == name } }
        var options = SchemaChangeOptions()
        for column in old.columns where !shared.contains(column.name) {
            options.allowDropping(column: column.name, inTable: "t")
        }
        let fill = DatabaseValue.text("filled")
        for column in new.columns where column.notNull && column.name != new.integerPrimaryKey {
            options.fill(column: column.name, inTable: "t", with: fill)
        }
        let projection = shared.isEmpty ? "1" : shared.map(\.quotedDatabaseIdentifier).joined(separator: ", ")
        let before = try queue.read { db in try db.fetchAll(Row.self, sql: "SELECT \(projection) FROM t") }
        let context = "seed \(seed)\nold: \(old.sql)\nnew: \(new.sql)"
        let plan = try queue.inDatabase { db in try db.planSchemaChange(to: new.sql, options: options) }
        if plan.isRefused {
            // A new primary key over values that cannot be keys (text in an INTEGER PRIMARY
            // KEY) cannot hold the rows: the plan says so, applying it is refused, and the
            // table is untouched.
            #expect(
                new.primaryKey != old.primaryKey || new.integerPrimaryKey != old.integerPrimaryKey,
                "\(context)\n\(plan.refusals)")
            #expect(throws: SerialDBError.self, "\(context)") {
                try queue.inDatabase { db in try db.applySchemaChange(plan) }
            }
            let after = try queue.read { db in try db.fetchAll(Row.self, sql: "SELECT \(projection) FROM t") }
            #expect(rowsKey(after) == rowsKey(before), "\(context)")
            return
        }
        // A plan without refusals applies: the plan predicts every refusal.
        try queue.inDatabase { db in try db.applySchemaChange(plan) }
        let after = try queue.read { db in try db.fetchAll(Row.self, sql: "SELECT \(projection) FROM t") }
        #expect(after.count == before.count, "\(context)")
        // NULL in a column that becomes the INTEGER PRIMARY KEY turns into a fresh rowid:
        // compare the other columns, and check the keys are distinct.
        let freshKey = shared.firstIndex(of: new.integerPrimaryKey ?? "").flatMap { index in
            before.contains { $0[index].isNull } ? index : nil
        }
        let expected = before.map { row in
            shared.enumerated().compactMap { index, name -> DatabaseValue? in
                if index == freshKey { return nil }
                let value = row[index]
                let column = new.columns.first { $0.name == name }!
                return value.isNull && column.notNull ? fill : value
            }
        }
        let actual = after.map { row in (0..<shared.count).filter { $0 != freshKey }.map { row[$0] } }
        #expect(valuesKey(actual) == valuesKey(expected), "\(context)")
        if let freshKey {
            #expect(Set(after.map { $0[freshKey] }).count == after.count, "\(context)")
        }
        let again = try queue.inDatabase { db in try db.planSchemaChange(to: new.sql, options: options) }
        #expect(again.isEmpty, "\(context)\nsecond plan: \(again.sql)")
    }

    /// Rows as a sorted multiset of value tuples, comparing numbers by value (a column whose
    /// type changed may turn 5 into 5.0 by SQLite's affinity rules).
    private func rowsKey(_ rows: [Row]) -> [String] {
        valuesKey(rows.map { row in (0..<row.count).map { row[$0] } })
    }

    private func valuesKey(_ rows: [[DatabaseValue]]) -> [String] {
        rows.map { row in
            row.map { value -> String in
                switch value {
                case .integer(let value): return "n\(Double(value))"
                case .real(let value): return "n\(value)"
                case .text(let value): return Double(value).map { "n\($0)" } ?? "t\(value)"
                case .blob(let data): return "b\(data.base64EncodedString())"
                case .null: return "null"
                }
            }.joined(separator: "|")
        }.sorted()
    }
}
