/// What a schema change may do beyond what the new CREATE statements say: renames that keep
/// data, values for new NOT NULL columns, and drops the caller explicitly allows.
///
/// ```swift
/// var options = SchemaChangeOptions()
/// options.renameColumn("nick", to: "nickname", inTable: "player")
/// options.fill(column: "pin", inTable: "user", with: "0000")
/// options.allowDropping(column: "legacy_flags", inTable: "player")
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

    /// No renames, no fills, no drops of data.
    public init() {}

    /// Keeps the data of column `old` under its new name `new`.
    public mutating func renameColumn(_ old: String, to new: String, inTable table: String) {
        columnRenames[table.lowercased(), default: [:]][old.lowercased()] = new
    }

    /// Keeps the data of table `old` under its new name `new`.
    public mutating func renameTable(_ old: String, to new: String) {
        tableRenames[old.lowercased()] = new
    }

    /// Allows dropping a table and its rows.
    public mutating func allowDropping(table: String) {
        allowedDrops.insert(table.lowercased())
    }

    /// Allows dropping a column and its values.
    public mutating func allowDropping(column: String, inTable table: String) {
        allowedDrops.insert(table.lowercased() + "." + column.lowercased())
    }

    /// Gives a NOT NULL column without a default a value for existing rows.
    public mutating func fill(column: String, inTable table: String, with value: some DatabaseValueConvertible) {
        fillValues[table.lowercased() + "." + column.lowercased()] = value.databaseValue
    }

    func fillValue(table: String, column: String) -> DatabaseValue? {
        fillValues[table.lowercased() + "." + column.lowercased()]
    }

    func allowsDropping(table: String, column: String? = nil) -> Bool {
        let key = table.lowercased() + (column.map { "." + $0.lowercased() } ?? "")
        return allowedDrops.contains(key)
    }

    /// Column renames of a table of the new schema: new name (lowercased) → old name.
    func oldColumnNames(inTable table: String) -> [String: String] {
        var reversed: [String: String] = [:]
        for (old, new) in columnRenames[table.lowercased()] ?? [:] {
            reversed[new.lowercased()] = old
        }
        return reversed
    }

    /// The live table a table of the new schema comes from.
    func sourceTableName(for desiredTable: String) -> String {
        tableRenames.first { $0.value.lowercased() == desiredTable.lowercased() }?.key ?? desiredTable
    }
}
