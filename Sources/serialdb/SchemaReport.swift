import SerialDB

/// The human-readable listing of `serialdb inspect`.
struct SchemaReport {
    let schema: DatabaseSchema

    init(_ schema: DatabaseSchema) {
        self.schema = schema
    }

    var text: String {
        var lines: [String] = []
        for table in schema.tables {
            var flags: [String] = []
            if table.isWithoutRowID { flags.append("WITHOUT ROWID") }
            if table.isStrict { flags.append("STRICT") }
            if table.hasAutoincrement { flags.append("AUTOINCREMENT") }
            lines.append("table \(table.name)" + (flags.isEmpty ? "" : " (" + flags.joined(separator: ", ") + ")"))
            // A key of several columns is one key: listed once, in key order, not on each column.
            let keyColumns = table.columns.filter { $0.primaryKeyIndex > 0 }.sorted {
                $0.primaryKeyIndex < $1.primaryKeyIndex
            }
            for column in table.columns {
                var text = "  \(column.name) \(column.type.isEmpty ? "(no type)" : column.type)"
                if column.primaryKeyIndex > 0 && keyColumns.count == 1 {
                    text += " PRIMARY KEY" + (table.rowIDAlias == column.name ? " (rowid)" : "")
                }
                if column.isNotNull { text += " NOT NULL" }
                if let defaultSQL = column.defaultSQL { text += " DEFAULT \(defaultSQL)" }
                if column.visibility != .normal { text += " [\(column.visibility)]" }
                lines.append(text)
            }
            if keyColumns.count > 1 {
                lines.append("  PRIMARY KEY (" + keyColumns.map(\.name).joined(separator: ", ") + ")")
            }
            for key in table.foreignKeys {
                lines.append(
                    "  foreign key (\(key.columns.joined(separator: ", "))) → \(key.parentTable)"
                        + "(\(key.parentColumns.joined(separator: ", "))) on delete \(key.onDelete)")
            }
        }
        for table in schema.virtualTables {
            lines.append("virtual table \(table.name) (\(table.summary))")
        }
        for object in schema.indexes + schema.triggers + schema.views {
            lines.append("\(object.kind.rawValue) \(object.name) on \(object.tableName)")
        }
        return lines.joined(separator: "\n")
    }
}
