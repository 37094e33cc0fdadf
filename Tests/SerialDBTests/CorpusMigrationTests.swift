import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// The real schema histories of four open-source apps: every released version is reached from
/// the previous one by a declarative schema step on a database that holds rows in every table,
/// and every value of every shared column survives. The corpus (`Tests/Fixtures/corpus`, with
/// its attribution README) is found relative to this file, so a fresh clone needs nothing else.
@Suite struct CorpusMigrationTests {
    static let corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/corpus")

    /// Consecutive version pairs of every app; newpipe 901 branches off 10.
    static func pairs() -> [(app: String, from: Int, to: Int)] {
        var pairs: [(String, Int, Int)] = []
        for app in ["bitwarden", "ground", "newpipe", "openscale"] {
            let folder = corpus.appendingPathComponent(app)
            let versions = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
                .compactMap { Int($0.replacingOccurrences(of: ".sql", with: "")) }.sorted()
            for (from, to) in zip(versions, versions.dropFirst()) { pairs.append((app, from, to)) }
        }
        return pairs
    }

    static func schema(_ app: String, _ version: Int) throws -> String {
        try String(contentsOf: corpus.appendingPathComponent("\(app)/\(version).sql"), encoding: .utf8)
    }

    /// Renames a developer would declare: the release notes of these versions show a column
    /// replaced by another of the same type at the same place, holding the same data.
    static let knownRenames: [String: [(table: String, old: String, new: String)]] = [
        "openscale 16->17": [("MeasurementType", "key", "identity")]
    ]

    /// Tables whose foreign key points at themselves get their rows too, referring to one
    /// another (issue 25, item 11), and a change to such a table keeps every reference.
    @Test func selfReferencingTablesAreFilledWithRealReferences() throws {
        let queue = try DatabaseQueue()
        let old = """
            CREATE TABLE thread(id TEXT NOT NULL PRIMARY KEY, title TEXT);
            CREATE TABLE message(id TEXT NOT NULL, thread_id TEXT NOT NULL REFERENCES thread(id), reply_to TEXT,
              root TEXT NOT NULL, body TEXT, PRIMARY KEY(id),
              FOREIGN KEY(reply_to) REFERENCES message(id), FOREIGN KEY(root) REFERENCES message(id));
            CREATE TABLE node(n INTEGER PRIMARY KEY, parent INTEGER REFERENCES node);
            """
        try queue.write { db in
            try db.execute(sql: old)
            try CorpusRows.seed(db, rowsPerTable: 30)
        }
        try queue.read { db throws in
            for table in ["message", "node"] {
                #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM \(table)") == 30)
            }
            #expect(
                try db.fetchOne(
                    Int.self, sql: "SELECT count(*) FROM message WHERE reply_to IS NOT NULL AND reply_to <> id")
                    == 29)
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM node WHERE parent IS NOT NULL") == 29)
            #expect(try db.fetchAll(Row.self, sql: "PRAGMA foreign_key_check").isEmpty)
        }
        // A rebuild of the self-referencing table keeps every reference.
        let references = "SELECT id || '>' || coalesce(reply_to, '') || '>' || root FROM message ORDER BY id"
        let before = try queue.read { db in try db.fetchAll(String.self, sql: references) }
        let new = old.replacingOccurrences(of: "body TEXT", with: "body VARCHAR(500)")
        let plan = try queue.inDatabase { db in try db.changeSchemaAsPlanned(to: new) }
        #expect(plan.rebuiltTables == ["message"])
        #expect(try queue.read { db in try db.fetchAll(String.self, sql: references) } == before)
    }

    @Test func theCorpusIsThere() {
        #expect(Self.pairs().count >= 40, "expected the corpus at \(Self.corpus.path)")
    }

    @Test(arguments: pairs().map { "\($0.app) \($0.from)->\($0.to)" })
    func everyReleaseUpgradesFromThePreviousOneKeepingEveryRow(pair: String) throws {
        let parts = pair.split(whereSeparator: { $0 == " " || $0 == "-" || $0 == ">" }).map(String.init)
        let (app, from, to) = (parts[0], Int(parts[1])!, Int(parts[2])!)
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.path("\(app).sqlite"))
        try queue.write { db in
            try db.execute(sql: try Self.schema(app, from))
            try CorpusRows.seed(db, rowsPerTable: 30)
        }
        let newSchema = try Self.schema(app, to)
        let (live, desired) = try queue.inDatabase { db in
            (
                try db.schema(),
                try DatabaseQueue().inDatabase { scratch in
                    try scratch.execute(sql: newSchema)
                    return try scratch.schema()
                }
            )
        }
        var options = try queue.read { db in try CorpusRows.optionsAllowingTheChange(db, from: live, to: desired) }
        for (table, old, new) in Self.knownRenames[pair] ?? [] {
            options.renameColumn(old, to: new, inTable: table)
            options.fillValues[table.lowercased() + "." + new.lowercased()] = nil
            options.allowedDrops.remove(table.lowercased() + "." + old.lowercased())
        }
        // Real data already satisfies the foreign keys the next release declares.
        try queue.write { db in try CorpusRows.satisfyNewForeignKeys(db, from: live, to: desired) }
        let before = try queue.read { db in try CorpusRows.snapshot(db, live, desired) }
        // The dry run predicts the migration: no refusal here, so the migration must succeed.
        let plan = try queue.inDatabase { db in try db.planSchemaChange(to: newSchema, options: options) }
        #expect(!plan.isRefused, "\(pair): \(plan.refusals)")
        var migrator = DatabaseMigrator()
        migrator.registerMigration("from", schema: try Self.schema(app, from))
        migrator.registerMigration("to", schema: newSchema, options: options)
        try queue.migrate(migrator)
        let after = try queue.read { db in try CorpusRows.snapshot(db, live, desired) }
        for (table, rows) in before {
            let expected = rows.map { row in row.map { CorpusRows.expected($0, table: table, options: options) } }
            #expect(
                after[table]?.map { $0.map(\.value) } == expected.map { $0.map(\.value) }, "\(pair): table \(table)")
        }
        try queue.read { db throws in
            #expect(try db.planSchemaChange(to: newSchema).isEmpty, "\(pair): the schema is not the desired one")
            #expect(try db.fetchOne(String.self, sql: "PRAGMA integrity_check") == "ok")
            #expect(try db.fetchAll(Row.self, sql: "PRAGMA foreign_key_check").isEmpty)
        }
    }
}

/// Rows for any schema: every table gets rows, parents before children, foreign keys pointing
/// at real parent rows, nullable columns NULL in every fourth row.
enum CorpusRows {
    struct Cell {
        var column: String
        var value: String
    }

    static func seed(_ db: Database, rowsPerTable count: Int) throws {
        let schema = try db.schema()
        var pending = schema.tables
        var done: Set<String> = []
        while !pending.isEmpty {
            guard
                let index = pending.firstIndex(where: { table in
                    table.foreignKeys.allSatisfy {
                        done.contains($0.parentTable.lowercased())
                            || $0.parentTable.lowercased() == table.name.lowercased()
                    }
                })
            else { throw SerialDBError(.invalidArguments, "foreign key cycle in corpus schema") }
            let table = pending.remove(at: index)
            try insertRows(db, table, count: count)
            done.insert(table.name.lowercased())
        }
        for table in schema.tables {
            #expect(
                try db.fetchOne(Int.self, sql: "SELECT count(*) FROM \(table.name.quotedDatabaseIdentifier)") == count)
        }
    }

    /// The parent columns a foreign key refers to: the ones it names, or the parent's key.
    static func parentColumns(of key: ForeignKeyDefinition, in schema: DatabaseSchema) -> [String] {
        guard key.parentColumns.isEmpty, let parent = schema.table(named: key.parentTable) else {
            return key.parentColumns
        }
        return parent.columns.filter { $0.primaryKeyIndex > 0 }.sorted { $0.primaryKeyIndex < $1.primaryKeyIndex }
            .map(\.name)
    }

    /// Inserts `count` rows. A column of a foreign key to another table takes the values of
    /// its parent rows in turn; one of a key to the table itself (a message replying to a
    /// message) refers to an earlier row, so self-referencing tables are filled and their
    /// references are real: row 1 to nothing (or to itself where the key is NOT NULL), row n
    /// to row n / 2.
    private static func insertRows(_ db: Database, _ table: TableDefinition, count: Int) throws {
        let schema = try db.schema()
        let columns = table.columns.filter(\.isWritable)
        var parentValues: [String: [DatabaseValue]] = [:]
        var selfReferences: [String: String] = [:]  // column → parent column of the same table
        for key in table.foreignKeys {
            for (column, parentColumn) in zip(key.columns, parentColumns(of: key, in: schema)) {
                if key.parentTable.lowercased() == table.name.lowercased() {
                    selfReferences[column.lowercased()] = parentColumn.lowercased()
                    continue
                }
                let parent = schema.table(named: key.parentTable)
                parentValues[column.lowercased()] = try db.fetchAll(
                    DatabaseValue.self,
                    sql:
                        "SELECT \(parentColumn.quotedDatabaseIdentifier) FROM \(key.parentTable.quotedDatabaseIdentifier)"
                        + " ORDER BY \(parent?.isWithoutRowID == true ? "1" : "rowid")")
            }
        }
        let names = columns.map(\.name.quotedDatabaseIdentifier).joined(separator: ", ")
        let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        let insert = try db.makeStatement(
            sql: "INSERT INTO \(table.name.quotedDatabaseIdentifier)(\(names)) VALUES (\(marks))")
        var inserted: [[String: DatabaseValue]] = []
        for row in 1...count {
            var values: [String: DatabaseValue] = [:]
            for (position, column) in columns.enumerated() where selfReferences[column.name.lowercased()] == nil {
                if let parents = parentValues[column.name.lowercased()], !parents.isEmpty {
                    values[column.name.lowercased()] = parents[(row - 1) % parents.count]
                } else if !column.isNotNull && column.primaryKeyIndex == 0 && row % 4 == 0 {
                    values[column.name.lowercased()] = .null
                } else {
                    values[column.name.lowercased()] = value(type: column.type, row: row, position: position)
                }
            }
            for column in columns {
                guard let parentColumn = selfReferences[column.name.lowercased()] else { continue }
                if row == 1 {
                    values[column.name.lowercased()] = column.isNotNull ? values[parentColumn] ?? .null : .null
                } else {
                    values[column.name.lowercased()] = inserted[row / 2 - 1][parentColumn] ?? .null
                }
            }
            try insert.execute(
                arguments: StatementArguments(columns.map { values[$0.name.lowercased()] ?? .null }))
            inserted.append(values)
        }
    }

    static func value(type: String, row: Int, position: Int) -> DatabaseValue {
        let type = type.uppercased()
        if type.contains("INT") { return .integer(Int64(row)) }
        if type.contains("CHAR") || type.contains("TEXT") || type.contains("CLOB") {
            return .text("v\(row)-\(position)")
        }
        if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") { return .real(Double(row) + 0.5) }
        if type.contains("BLOB") { return .blob(Data([UInt8(row), UInt8(position)])) }
        return .integer(Int64(row))
    }

    /// The options a developer would give for this release: fill values for columns that
    /// become NOT NULL without a default, permission to drop what the release removes.
    static func optionsAllowingTheChange(_ db: Database, from live: DatabaseSchema, to desired: DatabaseSchema) throws
        -> SchemaChangeOptions
    {
        var options = SchemaChangeOptions()
        for table in live.tables {
            guard let target = desired.table(named: table.name) else {
                options.allowDropping(table: table.name)
                continue
            }
            for column in table.columns where target.column(named: column.name) == nil {
                options.allowDropping(column: column.name, inTable: table.name)
            }
            for column in target.columns where column.isNotNull && column.defaultSQL == nil {
                let existing = table.column(named: column.name)
                if existing == nil || existing?.isNotNull == false {
                    options.fill(
                        column: column.name, inTable: target.name, with: value(type: column.type, row: 0, position: 99))
                }
            }
        }
        return options
    }

    /// Points each column that gains a foreign key at an existing parent row.
    static func satisfyNewForeignKeys(_ db: Database, from live: DatabaseSchema, to desired: DatabaseSchema) throws {
        for target in desired.tables {
            guard let table = live.table(named: target.name) else { continue }
            for key in target.foreignKeys where !table.foreignKeys.contains(key) {
                guard live.table(named: key.parentTable) != nil else { continue }
                for (column, parentColumn) in zip(key.columns, key.parentColumns)
                where table.column(named: column) != nil {
                    let parents = try db.fetchAll(
                        DatabaseValue.self,
                        sql:
                            "SELECT \(parentColumn.quotedDatabaseIdentifier) FROM \(key.parentTable.quotedDatabaseIdentifier) ORDER BY rowid"
                    )
                    let rowids = try db.fetchAll(
                        Int64.self, sql: "SELECT rowid FROM \(table.name.quotedDatabaseIdentifier) ORDER BY rowid")
                    for (index, rowid) in rowids.enumerated() where !parents.isEmpty {
                        try db.execute(
                            sql:
                                "UPDATE \(table.name.quotedDatabaseIdentifier) SET \(column.quotedDatabaseIdentifier) = ? WHERE rowid = ?",
                            arguments: [parents[index % parents.count], rowid])
                    }
                }
            }
        }
    }

    /// Every shared column of every table present in both schemas, by rowid, values in a
    /// form that compares numbers by value (a type change may turn 5 into 5.0).
    static func snapshot(_ db: Database, _ live: DatabaseSchema, _ desired: DatabaseSchema) throws -> [String: [[Cell]]]
    {
        var result: [String: [[Cell]]] = [:]
        for table in live.tables {
            guard let target = desired.table(named: table.name), !target.isWithoutRowID, !table.isWithoutRowID else {
                continue
            }
            let shared = table.columns.filter { $0.isWritable && target.column(named: $0.name)?.isWritable == true }
                .map(\.name)
            guard !shared.isEmpty else { continue }
            let rows = try db.fetchAll(
                Row.self,
                sql:
                    "SELECT rowid, \(shared.map(\.quotedDatabaseIdentifier).joined(separator: ", ")) FROM \(table.name.quotedDatabaseIdentifier) ORDER BY rowid"
            )
            result[table.name.lowercased()] = rows.map { row in
                [Cell(column: "rowid", value: render(row[0]))]
                    + shared.enumerated().map { Cell(column: $1, value: render(row[$0 + 1])) }
            }
        }
        return result
    }

    static func expected(_ cell: Cell, table: String, options: SchemaChangeOptions) -> Cell {
        guard cell.value == "null", let fill = options.fillValues[table + "." + cell.column.lowercased()] else {
            return cell
        }
        return Cell(column: cell.column, value: render(fill))
    }

    static func render(_ value: DatabaseValue) -> String {
        switch value {
        case .null: return "null"
        case .integer(let integer): return "n\(Double(integer))"
        case .real(let real): return "n\(real)"
        case .text(let text): return Double(text).map { "n\($0)" } ?? "t" + text
        case .blob(let data): return "b" + data.base64EncodedString()
        }
    }
}
