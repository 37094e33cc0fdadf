/// What a schema change may do beyond what the new CREATE statements say: renames that keep
/// data, values for new NOT NULL columns, and the drops and value conversions the caller
/// explicitly allows.
///
/// ```swift
/// var options = SchemaChangeOptions()
/// options.renameColumn("nick", to: "nickname", inTable: "player")
/// options.fill(column: "pin", inTable: "user", with: "0000")
/// options.allowDropping(column: "legacy_flags", inTable: "player")
/// options.allowConverting(column: "code", inTable: "product")
/// ```
public struct SchemaChangeOptions: Sendable, Equatable {
    /// Column renames per table (keyed by the table's name in the new schema): old → new.
    public var columnRenames: [String: [String: String]] = [:]
    /// Table renames: old name → new name.
    public var tableRenames: [String: String] = [:]
    /// Tables (`"table"`) and columns (`"table.column"`) that may be dropped although they
    /// hold data. Without this, such a change is refused.
    public var allowedDrops: Set<String> = []
    /// Values for columns (`"table.column"`) that become NOT NULL without a default: new
    /// columns take the value on every existing row, existing columns take it where NULL.
    public var fillValues: [String: DatabaseValue] = [:]
    /// Columns (`"table.column"`, names of the new schema) whose stored values may change on
    /// their way into a new type (`'0042'` becoming `42`). Without this, such a change is refused.
    public var allowedConversions: Set<String> = []

    /// No renames, no fills, no drops of data.
    public init() {}

    /// Keeps the data of column `old` under its new name `new`.
    public mutating func renameColumn(_ old: String, to new: String, inTable table: String) {
        columnRenames[table.sqliteFolded, default: [:]][old.sqliteFolded] = new
    }

    /// Keeps the data of table `old` under its new name `new`.
    public mutating func renameTable(_ old: String, to new: String) {
        tableRenames[old.sqliteFolded] = new
    }

    /// Allows dropping a table and its rows.
    public mutating func allowDropping(table: String) {
        allowedDrops.insert(table.sqliteFolded)
    }

    /// Allows dropping a column and its values.
    public mutating func allowDropping(column: String, inTable table: String) {
        allowedDrops.insert(table.sqliteFolded + "." + column.sqliteFolded)
    }

    /// Gives a NOT NULL column without a default a value for existing rows.
    public mutating func fill(column: String, inTable table: String, with value: some DatabaseValueConvertible) {
        fillValues[table.sqliteFolded + "." + column.sqliteFolded] = value.databaseValue
    }

    /// Allows a type change that alters stored values of a column, as SQLite converts them
    /// (`'0042'` into an INTEGER column becomes `42`, `0.1 + 0.2` into a TEXT one `'0.3'`).
    public mutating func allowConverting(column: String, inTable table: String) {
        allowedConversions.insert(table.sqliteFolded + "." + column.sqliteFolded)
    }

    func allowsConverting(table: String, column: String) -> Bool {
        allowedConversions.contains(table.sqliteFolded + "." + column.sqliteFolded)
    }

    func fillValue(table: String, column: String) -> DatabaseValue? {
        fillValues[table.sqliteFolded + "." + column.sqliteFolded]
    }

    func allowsDropping(table: String, column: String? = nil) -> Bool {
        let key = table.sqliteFolded + (column.map { "." + $0.sqliteFolded } ?? "")
        return allowedDrops.contains(key)
    }

    /// Column renames of a table of the new schema: new name (folded) → old name.
    func oldColumnNames(inTable table: String) -> [String: String] {
        var reversed: [String: String] = [:]
        for (old, new) in columnRenames[table.sqliteFolded] ?? [:] {
            reversed[new.sqliteFolded] = old
        }
        return reversed
    }

    /// Old names (folded) of the renamed columns of a table of the new schema: a column of
    /// the new schema with such a name is a new column, never the renamed one's source.
    func renamedAwayColumns(inTable table: String) -> Set<String> {
        Set((columnRenames[table.sqliteFolded] ?? [:]).keys.map(\.sqliteFolded))
    }

    /// The live table a table of the new schema comes from, or nil when its name was renamed
    /// away (the new schema then defines a fresh table under the old name).
    func sourceTableName(for desiredTable: String) -> String? {
        let folded = desiredTable.sqliteFolded
        if let old = tableRenames.first(where: { $0.value.sqliteFolded == folded })?.key { return old }
        if tableRenames.keys.contains(where: { $0.sqliteFolded == folded }) { return nil }
        return desiredTable
    }
}
