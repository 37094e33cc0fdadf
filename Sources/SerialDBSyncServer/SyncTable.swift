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
    /// Column positions by lowercased name: SQLite names are case-insensitive.
    private let columnIndexByName: [String: Int]
    /// Column positions by declared name, the usual spelling.
    private let columnIndexByExactName: [String: Int]
    /// The declared table in an in-memory database of its own, where rows that leave out
    /// columns are tried so that SQLite evaluates the DEFAULT expressions. Foreign keys are off
    /// there: the parent tables are not in it.
    private let scratch: DatabaseQueue

    /// Parses `schema` by executing it into an in-memory database and reading the table back.
    ///
    /// - Throws: ``SyncServerError/Code/invalidConfiguration`` when the SQL fails, does not
    ///   create a table called `name`, creates other tables, or the table has no PRIMARY KEY.
    public init(name: String, scope: SyncScope, structVersion: Int64, schema: String) throws {
        self.name = name
        self.scope = scope
        self.structVersion = structVersion
        self.schema = schema
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
            guard let table = tables.first(where: { $0.name.lowercased() == name.lowercased() }) else {
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
        columns = writable.map { column in
            SyncColumn(
                name: column.name, affinity: ColumnAffinity(declaredType: column.type, isStrict: definition.isStrict),
                declaredType: column.type, isNotNull: column.isNotNull, hasDefault: column.defaultSQL != nil,
                isKey: column.primaryKeyIndex > 0)
        }
        keyColumnIndexes = writable.indices.filter { writable[$0].primaryKeyIndex > 0 }
            .sorted { writable[$0].primaryKeyIndex < writable[$1].primaryKeyIndex }
        guard !keyColumnIndexes.isEmpty else {
            throw SyncServerError(
                .invalidConfiguration,
                "table \(JSONWriter.quoted(name)) has no PRIMARY KEY; a synced row is found by its key, so declare one")
        }
        columnIndexByExactName = Dictionary(
            writable.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        columnIndexByName = Dictionary(
            writable.enumerated().map { ($1.name.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The names of the primary-key columns, in key order.
    public var keyColumnNames: [String] { keyColumnIndexes.map { columns[$0].name } }

    /// The names of the writable columns, in declared order.
    public var columnNames: [String] { columns.map(\.name) }

    /// A row checked against the declaration: its canonical key, and the row as stored and
    /// served (every column, in declared order, in the wire encoding).
    struct ValidatedRow {
        let key: String
        let keyJSON: String
        let rowJSON: String
    }

    /// A key checked against the declaration: canonical, and as a JSON object (a tombstone's row).
    struct ValidatedKey {
        let key: String
        let keyJSON: String
    }

    /// Checks an uploaded row: no unknown column, every key column, NOT NULL columns without a
    /// default given, every value of a type its column takes. Left-out columns take their
    /// DEFAULT (evaluated by SQLite) or NULL.
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
        if !missingDefaults.isEmpty {
            try fillDefaults(missingDefaults, in: &values)
        }
        var row = JSONWriter(capacity: 64 * columns.count)
        row.raw("{")
        for (index, column) in columns.enumerated() {
            if index > 0 { row.raw(",") }
            row.string(column.name)
            row.raw(":")
            row.value(values[index]!)
        }
        row.raw("}")
        return ValidatedRow(key: try canonicalKey(values), keyJSON: keyObject(values), rowJSON: row.string)
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

    private func convert(
        _ members: [String: JSONValue], into values: inout [DatabaseValue?], what: String
    ) throws(SyncRejection) {
        for (name, json) in members {
            // Exact names first: lowercasing every member name costs an allocation each.
            guard let index = columnIndexByExactName[name] ?? columnIndexByName[name.lowercased()] else {
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

    /// Lets SQLite evaluate the DEFAULT expressions of the left-out columns: the row is
    /// inserted into the scratch copy of the table and read back, then rolled back.
    private func fillDefaults(_ missing: [Int], in values: inout [DatabaseValue?]) throws(SyncRejection) {
        let given = values.indices.filter { values[$0] != nil }
        let insert =
            "INSERT INTO \(name.quotedDatabaseIdentifier)("
            + given.map { columns[$0].name.quotedDatabaseIdentifier }.joined(separator: ", ")
            + ") VALUES (" + given.map { _ in "?" }.joined(separator: ", ") + ") RETURNING "
            + missing.map { columns[$0].name.quotedDatabaseIdentifier }.joined(separator: ", ")
        let arguments = StatementArguments(given.map { values[$0]! })
        let defaults: [DatabaseValue]
        do {
            var read: [DatabaseValue] = []
            // The scratch table stays empty: the savepoint is always rolled back.
            try scratch.inSavepoint { db in
                let row = try db.makeStatement(sql: insert).fetchOne(Row.self, arguments: arguments)
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
