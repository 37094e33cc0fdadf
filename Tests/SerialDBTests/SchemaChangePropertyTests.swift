import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// Random schema changes over the features of issue 17 (conflict clauses, names that differ
/// only in non-ASCII case, generated columns, views with INSTEAD OF triggers, expression
/// defaults, column and table renames that reuse names) on random rows with duplicates and
/// NULLs: every change either keeps every row and every kept value, or is refused with the
/// database exactly as it was.
@Suite struct SchemaChangePropertyTests {
    struct Column {
        var name: String
        var type: String
        var constraint = ""
        var generated: String?

        var sql: String {
            var text = name.quotedDatabaseIdentifier + (type.isEmpty ? "" : " " + type)
            if let generated { text += " AS (\(generated)) STORED" }
            if !constraint.isEmpty { text += " " + constraint }
            return text
        }
    }

    static let names = ["a", "Ä", "ä", "é", "naïve", "b"]
    static let conflictClauses = ["", " ON CONFLICT REPLACE", " ON CONFLICT IGNORE", " ON CONFLICT ABORT"]

    static func tableSQL(_ name: String, _ columns: [Column]) -> String {
        "CREATE TABLE \(name.quotedDatabaseIdentifier)(id INTEGER PRIMARY KEY, "
            + columns.map(\.sql).joined(separator: ", ") + ")"
    }

    static func viewSQL(_ table: String, _ column: Column) -> String {
        """
        CREATE VIEW v AS SELECT id, \(column.name.quotedDatabaseIdentifier) AS x FROM \(table.quotedDatabaseIdentifier);
        CREATE TRIGGER v_insert INSTEAD OF INSERT ON v BEGIN
        INSERT INTO \(table.quotedDatabaseIdentifier)(id) VALUES (new.id); END;
        """
    }

    static func value(_ random: inout SeededGenerator) -> DatabaseValue {
        switch Int.random(in: 0..<6, using: &random) {
        case 0: return .null
        case 1, 2: return .integer(Int64.random(in: -2...6, using: &random))
        default: return .text(["x", "y", "Ä", "ä", "z"].randomElement(using: &random)!)
        }
    }

    @Test(arguments: 0..<150)
    func everyRowSurvivesOrTheChangeIsRefusedUntouched(seed: Int) throws {
        var random = SeededGenerator(seed: UInt64(seed) &* 104_729 &+ 3)
        // The old table: plain columns, maybe one STORED generated column.
        let oldNames = Array(Self.names.shuffled(using: &random).prefix(Int.random(in: 2...4, using: &random)))
        var oldColumns = oldNames.map {
            Column(name: $0, type: ["", "TEXT", "INTEGER"].randomElement(using: &random)!)
        }
        if Bool.random(using: &random) {
            oldColumns.append(Column(name: "g", type: "TEXT", generated: "'g' || id"))
        }
        var oldSchema = Self.tableSQL("t", oldColumns)
        if Bool.random(using: &random) { oldSchema += ";\n" + Self.viewSQL("t", oldColumns[0]) }

        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: oldSchema)
            let plain = oldColumns.filter { $0.generated == nil }
            let insert = try db.makeStatement(
                sql: "INSERT INTO t(id, " + plain.map(\.name.quotedDatabaseIdentifier).joined(separator: ", ")
                    + ") VALUES (?" + String(repeating: ", ?", count: plain.count) + ")")
            for id in 1...40 {
                var values: [DatabaseValue] = [.integer(Int64(id))]
                for _ in plain { values.append(Self.value(&random)) }
                try insert.execute(arguments: StatementArguments(values))
            }
        }
        let before = try queue.read { db in try DatabaseSnapshot(db) }
        let oldRows = try queue.read { db in try Self.rowsByID("t", db) }

        // The new table: each old column kept, renamed (maybe onto a name the table then
        // reuses), or dropped; maybe a new constraint, new columns with expression defaults.
        var options = SchemaChangeOptions()
        let newTable = Bool.random(using: &random) ? "t" : "tä"
        if newTable != "t" { options.renameTable("t", to: newTable) }
        var newColumns: [Column] = []
        var sources: [String: String] = [:]  // new column name → old column name
        var taken = Set(oldColumns.map(\.name))
        for column in oldColumns {
            switch Int.random(in: 0..<6, using: &random) {
            case 0:
                options.allowDropping(column: column.name, inTable: newTable)
            case 1:
                let new = column.name + "2"
                options.renameColumn(column.name, to: new, inTable: newTable)
                newColumns.append(Column(name: new, type: column.type))
                sources[new] = column.name
                taken.insert(new)
                if Bool.random(using: &random) {
                    newColumns.append(Column(name: column.name, type: "TEXT", constraint: "DEFAULT 'new'"))
                }
            default:
                var kept = Column(name: column.name, type: column.type)
                switch Int.random(in: 0..<6, using: &random) {
                case 0: kept.constraint = "UNIQUE" + Self.conflictClauses.randomElement(using: &random)!
                case 1: kept.constraint = "NOT NULL" + Self.conflictClauses.randomElement(using: &random)!
                case 2:
                    kept.constraint =
                        "CHECK (\(column.name.quotedDatabaseIdentifier) IS NULL OR \(column.name.quotedDatabaseIdentifier) <> -1)"
                default: break
                }
                newColumns.append(kept)
                sources[column.name] = column.name
            }
        }
        if Bool.random(using: &random) {
            let name = Self.names.first { !taken.contains($0) } ?? "extra"
            newColumns.append(Column(name: name, type: "INTEGER", constraint: "DEFAULT (1 + 1)"))
        }
        if newColumns.isEmpty { newColumns.append(Column(name: "c", type: "TEXT")) }
        var newSchema = Self.tableSQL(newTable, newColumns)
        if Bool.random(using: &random) { newSchema += ";\n" + Self.viewSQL(newTable, newColumns[0]) }
        if newTable != "t" && Bool.random(using: &random) {
            newSchema += ";\nCREATE TABLE t(id INTEGER PRIMARY KEY, fresh TEXT)"
        }

        let context = "seed \(seed)\n\(oldSchema)\n→\n\(newSchema)\n\(options)"
        do {
            try queue.inDatabase { db in _ = try db.changeSchemaAsPlanned(to: newSchema, options: options) }
        } catch let error as SerialDBError where error.code == .schemaChangeRefused {
            #expect(try queue.read { db in try DatabaseSnapshot(db) } == before, "\(context)\n\(error)")
            return
        }
        let newRows = try queue.read { db in try Self.rowsByID(newTable, db) }
        #expect(newRows.count == oldRows.count, "\(context)")
        for (id, oldRow) in oldRows {
            for (new, old) in sources {
                #expect(newRows[id]?[new] == oldRow[old], "\(context)\nrow \(id): column \(new) from \(old)")
            }
        }
        #expect(try queue.read { db in try db.planSchemaChange(to: newSchema).isEmpty }, "\(context)")
    }

    /// Every row of a table by id: column name → value. The columns are named in the query:
    /// a cached `SELECT *` keeps the column names it had before the schema changed.
    static func rowsByID(_ table: String, _ db: Database) throws -> [Int64: [String: DatabaseValue]] {
        let columns = try db.fetchAll(String.self, sql: "SELECT name FROM pragma_table_xinfo(?)", arguments: [table])
        let select = "SELECT " + columns.map(\.quotedDatabaseIdentifier).joined(separator: ", ") + " FROM "
        var rows: [Int64: [String: DatabaseValue]] = [:]
        for row in try db.fetchAll(Row.self, sql: select + table.quotedDatabaseIdentifier) {
            let id: Int64 = try row.decode(column: "id")
            rows[id] = Dictionary(uniqueKeysWithValues: zip(row.columnNames, (0..<row.count).map { row[$0] }))
        }
        return rows
    }
}
