import Foundation
import SerialDB
import SerialDBSyncWire

/// A table the server syncs: its scope, its structure version, and the CREATE TABLE (with its
/// indexes) that clients apply, parsed by SQLite itself to validate uploaded rows.
public final class SyncTable: Sendable {
    /// The table name, as configured.
    public let name: String
    /// Who sees the rows.
    public let scope: SyncScope
    /// Raised by the operator each time the definition changes; clients compare it.
    public let structVersion: Int64
    /// The SQL clients execute: the CREATE TABLE and any CREATE INDEX for it.
    public let schema: String
    /// The writable columns in declared order.
    let columns: [SyncColumn]
    /// Indexes into `columns` of the primary-key columns, in key order.
    let keyColumnIndexes: [Int]
    /// Column positions by ASCII-lowercased name: SQLite names are case-insensitive in ASCII only.
    private let columnIndexByName: [String: Int]
    /// Column positions by declared name, the usual spelling.
    private let columnIndexByExactName: [String: Int]
    /// The UNIQUE constraints other than the primary key, which the store enforces per owner.
    let uniqueConstraints: [SyncUniqueConstraint]
    /// Whether the schema may declare a CHECK constraint (it says CHECK somewhere): then every
    /// row is tried in the scratch table, where SQLite evaluates them.
    private let mayHaveChecks: Bool
    /// The declared table in an in-memory database of its own, where rows that leave out
    /// columns or may break a CHECK are tried, so that SQLite evaluates the DEFAULT expressions
    /// and the CHECK constraints exactly as a device would. Foreign keys are off there: the
    /// parent tables are not in it.
    private let scratch: DatabaseQueue
    /// The table as it was renamed from in an earlier configuration: its stored rows are carried over.
    public let renamedFrom: String?
    /// Renamed columns, new name → old name: stored rows are carried over under the new names.
    public let renamedColumns: [String: String]

    /// Parses `schema` by executing it into an in-memory database and reading the table back.
    ///
    /// - Parameters:
    ///   - name: the table's name, as clients see it.
    ///   - scope: whose rows it holds: each account's own, or one set every account reads.
    ///   - structVersion: the definition's version; a higher one is a definition change.
    ///   - schema: the CREATE TABLE statement, with the table's CREATE INDEX statements.
    ///   - renamedFrom: the table's name in the previous configuration, when it was renamed.
    ///   - renamedColumns: new column name → its name in the previous configuration.
    /// - Throws: ``SyncServerError/Code/invalidConfiguration`` when the SQL fails, does not
    ///   create a table called `name`, creates other tables, the table has no PRIMARY KEY, a
    ///   primary-key column has a collation other than BINARY, a UNIQUE index is partial or
    ///   on an expression, a DEFAULT evaluates to infinity or NaN, or a rename names a column
    ///   that is not (or is still) declared.
    public init(
        name: String, scope: SyncScope, structVersion: Int64, schema: String, renamedFrom: String? = nil,
        renamedColumns: [String: String] = [:]
    ) throws {
        self.name = name
        self.scope = scope
        self.structVersion = structVersion
        self.schema = schema
        self.renamedFrom = renamedFrom
        self.renamedColumns = renamedColumns
        var configuration = Configuration()
        configuration.foreignKeysEnabled = false
        configuration.label = "sync schema of \(name)"
        scratch = try DatabaseQueue(configuration: configuration)
        let definition: TableDefinition = try scratch.inDatabase { db in
            do {
                try db.execute(sql: schema)
            } catch {
                throw SyncServerError(
                    .invalidConfiguration, "the schema of table \(JSONWriter.quoted(name)) does not run: \(error)")
            }
            let tables = try DatabaseSchema(db).tables
            guard let table = tables.first(where: { $0.name.asciiLowercased == name.asciiLowercased }) else {
                throw SyncServerError(
                    .invalidConfiguration,
                    "the schema of table \(JSONWriter.quoted(name)) does not create a table of that name")
            }
            guard tables.count == 1 else {
                throw SyncServerError(
                    .invalidConfiguration,
                    "the schema of table \(JSONWriter.quoted(name)) creates other tables too; "
                        + "give each table its own entry")
            }
            return table
        }
        let writable = definition.columns.filter(\.isWritable)
        let columns = writable.map { column in
            SyncColumn(
                name: column.name, affinity: ColumnAffinity(declaredType: column.type, isStrict: definition.isStrict),
                declaredType: column.type, isNotNull: column.isNotNull, hasDefault: column.defaultSQL != nil,
                isKey: column.primaryKeyIndex > 0)
        }
        self.columns = columns
        let keyColumnIndexes = writable.indices.filter { writable[$0].primaryKeyIndex > 0 }
            .sorted { writable[$0].primaryKeyIndex < writable[$1].primaryKeyIndex }
        self.keyColumnIndexes = keyColumnIndexes
        guard !keyColumnIndexes.isEmpty else {
            throw SyncServerError(
                .invalidConfiguration,
                "table \(JSONWriter.quoted(name)) has no PRIMARY KEY; a synced row is found by its key, so declare one")
        }
        columnIndexByExactName = Dictionary(
            writable.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        columnIndexByName = Dictionary(
            writable.enumerated().map { ($1.name.asciiLowercased, $0) }, uniquingKeysWith: { first, _ in first })
        let tableName = definition.name
        uniqueConstraints = try scratch.inDatabase { db in
            try Self.checkDefaultsAreFinite(writable, of: name, strict: definition.isStrict, in: db)
            return try SyncUniqueConstraint.declared(
                in: db, table: tableName, columns: columns, keyColumnIndexes: keyColumnIndexes)
        }
        mayHaveChecks = definition.sql.asciiLowercased.contains("check")
        for (new, old) in renamedColumns {
            guard columnIndexByName[new.asciiLowercased] != nil, columnIndexByName[old.asciiLowercased] == nil else {
                throw SyncServerError(
                    .invalidConfiguration,
                    "table \(JSONWriter.quoted(name)) renames column \(JSONWriter.quoted(old)) to "
                        + "\(JSONWriter.quoted(new)): \"renamed_columns\" maps a declared column to a name the table "
                        + "no longer declares")
            }
        }
    }

    /// Evaluates every DEFAULT as a row would take it (in a column of the same type) and refuses
    /// one that gives infinity or NaN: JSON cannot carry it, so no device could receive the row.
    private static func checkDefaultsAreFinite(
        _ columns: [ColumnDefinition], of table: String, strict: Bool, in db: Database
    ) throws {
        for column in columns {
            guard let defaultSQL = column.defaultSQL else { continue }
            // The type and the expression are SQLite's own reading of the configured schema.
            let type = strict && column.type.isEmpty ? "ANY" : column.type
            let value: DatabaseValue?
            do {
                try db.execute(
                    sql: "CREATE TEMP TABLE serialdb_default_probe(v \(type) DEFAULT (\(defaultSQL)))"
                        + (strict ? " STRICT" : ""))
                defer { try? db.execute(sql: "DROP TABLE temp.serialdb_default_probe") }
                try db.execute(sql: "INSERT INTO temp.serialdb_default_probe DEFAULT VALUES")
                value = try db.fetchOne(Row.self, sql: "SELECT v FROM temp.serialdb_default_probe")?[0]
            } catch {
                throw SyncServerError(
                    .invalidConfiguration,
                    "the DEFAULT of column \(JSONWriter.quoted(column.name)) of table \(JSONWriter.quoted(table)) "
                        + "cannot be evaluated on its own: \(error)")
            }
            if case .real(let double)? = value, !double.isFinite {
                throw SyncServerError(
                    .invalidConfiguration,
                    "the DEFAULT of column \(JSONWriter.quoted(column.name)) of table \(JSONWriter.quoted(table)) "
                        + "is \(double), which JSON cannot carry; give it a finite default")
            }
        }
    }

    /// The names of the primary-key columns, in key order.
    public var keyColumnNames: [String] { keyColumnIndexes.map { columns[$0].name } }

    /// The names of the writable columns, in declared order.
    public var columnNames: [String] { columns.map(\.name) }

    /// A row checked against the declaration: its canonical key, the row as stored and served
    /// (every column, in declared order, in the wire encoding), and its values under each
    /// UNIQUE constraint.
    struct ValidatedRow {
        let key: String
        let keyJSON: String
        let rowJSON: String
        let uniqueValues: [SyncUniqueValue]
    }

    /// A key checked against the declaration: canonical, and as a JSON object (a tombstone's row).
    struct ValidatedKey {
        let key: String
        let keyJSON: String
    }

    /// Checks an uploaded row as SQLite on a device would: no unknown column, every key
    /// column, NOT NULL columns without a default given, every value of a type its column
    /// takes, no infinity or NaN, and the CHECK constraints hold. Left-out columns take their
    /// DEFAULT (evaluated by SQLite) or NULL. UNIQUE constraints span the owner's rows: the
    /// store checks the returned `uniqueValues`.
    func validate(row members: [String: JSONValue]) throws(SyncRejection) -> ValidatedRow {
        var values = [DatabaseValue?](repeating: nil, count: columns.count)
        try convert(members, into: &values, what: "row")
        var missingDefaults: [Int] = []
        for (index, column) in columns.enumerated() where values[index] == nil {
            if column.isKey {
                throw SyncRejection("the row has no value for key column \(JSONWriter.quoted(column.name))")
            } else if column.hasDefault {
                missingDefaults.append(index)
            } else if column.isNotNull {
                throw SyncRejection("column \(JSONWriter.quoted(column.name)) is NOT NULL and has no default")
            } else {
                values[index] = .null
            }
        }
        if !missingDefaults.isEmpty || mayHaveChecks {
            try tryInScratch(missingDefaults, in: &values)
        }
        var row = JSONWriter(capacity: 64 * columns.count)
        row.raw("{")
        for (index, column) in columns.enumerated() {
            if index > 0 { row.raw(",") }
            row.string(column.name)
            row.raw(":")
            let value = values[index]!
            if case .real(let double) = value, !double.isFinite {
                throw SyncRejection(
                    "column \(JSONWriter.quoted(column.name)) would hold \(double), which JSON cannot carry")
            }
            row.value(value)
        }
        row.raw("}")
        return ValidatedRow(
            key: try canonicalKey(values), keyJSON: keyObject(values), rowJSON: row.string,
            uniqueValues: uniqueConstraints.compactMap { constraint in
                constraint.value(of: values).map { SyncUniqueValue(value: $0, constraint: constraint.label) }
            })
    }

    /// Checks a key given for a delete: exactly the primary-key columns, each of its type.
    func validate(key members: [String: JSONValue]) throws(SyncRejection) -> ValidatedKey {
        var values = [DatabaseValue?](repeating: nil, count: columns.count)
        try convert(members, into: &values, what: "key")
        for (index, column) in columns.enumerated() {
            if column.isKey && values[index] == nil {
                throw SyncRejection("the key has no value for key column \(JSONWriter.quoted(column.name))")
            } else if !column.isKey && values[index] != nil {
                throw SyncRejection("the key names column \(JSONWriter.quoted(column.name)), which is not a key column")
            }
        }
        return ValidatedKey(key: try canonicalKey(values), keyJSON: keyObject(values))
    }

    /// The key columns as a JSON object: a tombstone's row.
    private func keyObject(_ values: [DatabaseValue?]) -> String {
        var object = JSONWriter(capacity: 32 * keyColumnIndexes.count)
        object.raw("{")
        for (position, index) in keyColumnIndexes.enumerated() {
            if position > 0 { object.raw(",") }
            object.string(columns[index].name)
            object.raw(":")
            object.value(values[index] ?? .null)
        }
        object.raw("}")
        return object.string
    }

    /// Whether the table declares a writable column of this name (SQLite's ASCII-only case folding).
    func hasColumn(named name: String) -> Bool {
        columnIndex(named: name) != nil
    }

    /// The position of the column SQLite would take `name` for: equal bytes once `A`–`Z` are
    /// folded. The dictionaries find candidates; the bytes decide, because Swift compares
    /// strings by canonical equivalence (the Kelvin sign equals `K` there, never in SQLite).
    private func columnIndex(named name: String) -> Int? {
        // Exact names first: lowercasing every member name costs an allocation each.
        if let index = columnIndexByExactName[name], columns[index].name.utf8.elementsEqual(name.utf8) {
            return index
        }
        let folded = name.asciiLowercased
        if let index = columnIndexByName[folded], columns[index].name.asciiLowercased.utf8.elementsEqual(folded.utf8) {
            return index
        }
        return nil
    }

    private func convert(
        _ members: [String: JSONValue], into values: inout [DatabaseValue?], what: String
    ) throws(SyncRejection) {
        for (name, json) in members {
            guard let index = columnIndex(named: name) else {
                throw SyncRejection(
                    "the \(what) names column \(JSONWriter.quoted(name)), which table "
                        + "\(JSONWriter.quoted(self.name)) does not have")
            }
            guard values[index] == nil else {
                throw SyncRejection("the \(what) gives column \(JSONWriter.quoted(columns[index].name)) twice")
            }
            values[index] = try columns[index].value(from: json).get()
        }
    }

    /// The key in one canonical text for every type, BLOB included: the JSON array of the key
    /// values in key order, each already converted by its column's affinity, so that `1` and
    /// `1.0` in an INTEGER key are one key.
    private func canonicalKey(_ values: [DatabaseValue?]) throws(SyncRejection) -> String {
        var key = JSONWriter(capacity: 32)
        key.raw("[")
        for (position, index) in keyColumnIndexes.enumerated() {
            guard let value = values[index], !value.isNull else {
                throw SyncRejection("key column \(JSONWriter.quoted(columns[index].name)) is null")
            }
            if position > 0 { key.raw(",") }
            key.value(value)
        }
        key.raw("]")
        return key.string
    }

    /// Lets SQLite evaluate the DEFAULT expressions of the left-out columns and the CHECK
    /// constraints: the row is inserted into the scratch copy of the table (the defaults read
    /// back), then rolled back.
    private func tryInScratch(_ missing: [Int], in values: inout [DatabaseValue?]) throws(SyncRejection) {
        let given = values.indices.filter { values[$0] != nil }
        var insert =
            "INSERT INTO \(name.quotedDatabaseIdentifier)("
            + given.map { columns[$0].name.quotedDatabaseIdentifier }.joined(separator: ", ")
            + ") VALUES (" + given.map { _ in "?" }.joined(separator: ", ") + ")"
        if !missing.isEmpty {
            insert += " RETURNING " + missing.map { columns[$0].name.quotedDatabaseIdentifier }.joined(separator: ", ")
        }
        let arguments = StatementArguments(given.map { values[$0]! })
        let defaults: [DatabaseValue]
        do {
            var read: [DatabaseValue] = []
            // The scratch table stays empty: the savepoint is always rolled back.
            try scratch.inSavepoint { db in
                let row = try db.cachedStatement(sql: insert).fetchOne(Row.self, arguments: arguments)
                read = (0..<missing.count).map { row?[$0] ?? .null }
                return .rollback
            }
            defaults = read
        } catch let error as DatabaseError {
            throw SyncRejection("the row does not fit table \(JSONWriter.quoted(name)): \(error.message)")
        } catch {
            throw SyncRejection("the row does not fit table \(JSONWriter.quoted(name)): \(error)")
        }
        for (position, index) in missing.enumerated() {
            let value = defaults[position]
            if value.isNull && columns[index].isNotNull {
                throw SyncRejection("column \(JSONWriter.quoted(columns[index].name)) is NOT NULL")
            }
            values[index] = value
        }
    }
}
