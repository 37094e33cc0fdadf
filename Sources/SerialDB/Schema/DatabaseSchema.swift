/// The schema of a database: its tables, virtual tables, indexes, triggers and views, read
/// from `sqlite_master` and the pragmas. SQLite's own tables (`sqlite_*`), SerialDB's
/// (`serialdb_*`) and the shadow tables of virtual tables are left out.
///
/// The same reader serves the live database and the desired schema (executed into a scratch
/// in-memory database), so both land in one model and SQLite does all the parsing.
public struct DatabaseSchema: Sendable {
    /// Tables, sorted by name.
    public var tables: [TableDefinition]
    /// Virtual tables, sorted by name.
    public var virtualTables: [VirtualTableDefinition] = []
    /// Indexes that have SQL (not the automatic ones of UNIQUE and PRIMARY KEY constraints).
    public var indexes: [SchemaObject]
    /// Triggers.
    public var triggers: [SchemaObject]
    /// Views.
    public var views: [SchemaObject]
    /// Refusals for foreign keys SQLite cannot enforce, found in the scratch database of a
    /// desired schema (``Database/unenforceableForeignKeys(of:)``); empty for a live schema.
    var unenforceableForeignKeys: [String] = []

    /// The table with this name (ASCII letters case-insensitive, as SQLite compares names).
    public func table(named name: String) -> TableDefinition? {
        let lowered = name.sqliteFolded
        return tables.first { $0.name.sqliteFolded == lowered }
    }

    /// The virtual table with this name (ASCII letters case-insensitive).
    public func virtualTable(named name: String) -> VirtualTableDefinition? {
        let lowered = name.sqliteFolded
        return virtualTables.first { $0.name.sqliteFolded == lowered }
    }

    /// Indexes, triggers and views together.
    var objects: [SchemaObject] { indexes + triggers + views }

    /// Whether a name belongs to SQLite or to SerialDB rather than to the application.
    static func isInternal(_ name: String) -> Bool {
        let lowered = name.sqliteFolded
        return lowered.hasPrefix("sqlite_") || lowered.hasPrefix("serialdb_")
    }

    /// Reads the main schema of `db`.
    public init(_ db: Database) throws {
        let listed = try db.fetchAll(
            Row.self, sql: "SELECT name, type, wr, strict FROM pragma_table_list WHERE schema = 'main'")
        self.virtualTables = try VirtualTableDefinition.all(in: db, listed: listed)
        var tables: [TableDefinition] = []
        for row in listed {
            let name: String = try row.decode(at: 0)
            guard try row.decode(String.self, at: 1) == "table", !Self.isInternal(name),
                !virtualTables.contains(where: { $0.ownsShadowTable(named: name) })
            else { continue }
            let sql =
                try db.fetchOne(
                    String.self, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",
                    arguments: [name])
                ?? ""
            tables.append(
                TableDefinition(
                    name: name, sql: sql, columns: try Self.columns(of: name, db),
                    foreignKeys: try Self.foreignKeys(of: name, db), isWithoutRowID: try row.decode(at: 2),
                    isStrict: try row.decode(at: 3), uniqueKeys: try Self.uniqueKeys(of: name, db)))
        }
        self.tables = tables.sorted { $0.name < $1.name }
        let objects = try db.fetchAll(
            Row.self,
            sql: """
                SELECT type, name, tbl_name, sql FROM sqlite_master
                WHERE type IN ('index', 'trigger', 'view') AND sql IS NOT NULL ORDER BY name
                """)
        var indexes: [SchemaObject] = []
        var triggers: [SchemaObject] = []
        var views: [SchemaObject] = []
        for row in objects {
            let object = SchemaObject(
                kind: SchemaObject.Kind(rawValue: try row.decode(at: 0)) ?? .index, name: try row.decode(at: 1),
                tableName: try row.decode(at: 2), sql: try row.decode(at: 3))
            guard !Self.isInternal(object.name), !Self.isInternal(object.tableName) else { continue }
            switch object.kind {
            case .index: indexes.append(object)
            case .trigger: triggers.append(object)
            case .view: views.append(object)
            }
        }
        self.indexes = indexes
        self.triggers = triggers
        self.views = views
    }

    static func columns(of table: String, _ db: Database) throws -> [ColumnDefinition] {
        try db.fetchAll(
            Row.self, sql: "SELECT name, type, \"notnull\", dflt_value, pk, hidden FROM pragma_table_xinfo(?)",
            arguments: [table]
        ).map { row in
            ColumnDefinition(
                name: try row.decode(at: 0), type: try row.decode(at: 1), isNotNull: try row.decode(at: 2),
                defaultSQL: try row.decode(at: 3), primaryKeyIndex: try row.decode(at: 4),
                visibility: ColumnDefinition.Visibility(rawValue: try row.decode(at: 5)) ?? .normal)
        }
    }

    private static func uniqueKeys(of table: String, _ db: Database) throws -> [UniqueKey] {
        let indexes = try db.fetchAll(
            String.self, sql: "SELECT name FROM pragma_index_list(?) WHERE \"unique\" AND NOT partial",
            arguments: [table])
        var keys: [UniqueKey] = []
        for index in indexes {
            let parts = try db.fetchAll(
                Row.self, sql: "SELECT cid, name, coll FROM pragma_index_xinfo(?) WHERE key ORDER BY seqno",
                arguments: [index])
            // cid -1 is the rowid and -2 an expression: such keys are not plain column values.
            guard !parts.isEmpty, try parts.allSatisfy({ try $0.decode(Int.self, at: 0) >= 0 }) else { continue }
            keys.append(
                UniqueKey(
                    columns: try parts.map { try $0.decode(String.self, at: 1) },
                    collations: try parts.map { try $0.decode(String.self, at: 2) }))
        }
        return keys
    }

    private static func foreignKeys(of table: String, _ db: Database) throws -> [ForeignKeyDefinition] {
        let rows = try db.fetchAll(
            Row.self,
            sql:
                "SELECT id, \"table\", \"from\", \"to\", on_update, on_delete FROM pragma_foreign_key_list(?) ORDER BY id, seq",
            arguments: [table])
        var keys: [Int: ForeignKeyDefinition] = [:]
        var order: [Int] = []
        for row in rows {
            let id: Int = try row.decode(at: 0)
            let parentColumn: String? = try row.decode(at: 3)
            if keys[id] == nil {
                order.append(id)
                keys[id] = ForeignKeyDefinition(
                    parentTable: try row.decode(at: 1), columns: [], parentColumns: [],
                    onUpdate: try row.decode(at: 4), onDelete: try row.decode(at: 5))
            }
            keys[id]?.columns.append(try row.decode(at: 2))
            if let parentColumn { keys[id]?.parentColumns.append(parentColumn) }
        }
        return order.compactMap { keys[$0] }
    }
}
