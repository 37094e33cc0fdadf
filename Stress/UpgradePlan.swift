import SerialDB

/// The schema ladder the harness runs: step 1 creates the tables; the upgrade is step 2, which
/// REBUILDS `item` (a NOT NULL and two CHECK constraints: a change ALTER TABLE cannot make, so
/// every row is copied), and step 3, which appends a column (ALTER TABLE ADD COLUMN).
///
/// Steps 2 and 3 are SerialDB's declarative schema steps: each gives the whole schema and the
/// library plans and applies the change (`planSchemaChange` / `applySchemaChange`), so the
/// harness stresses the real rebuild. They stay closure steps so that `atUpgradeStepStart`
/// runs first, and each checks that the plan took the path it is meant to stress.
struct UpgradePlan: Sendable {
    static let identifiers = ["1-create-tables", "2-rebuild-item", "3-add-note"]
    static var baseStep: String { identifiers[0] }
    static var finalStep: String { identifiers[identifiers.count - 1] }
    static var rebuildStep: String { identifiers[1] }

    /// Called at the start of each upgrade step (2 and 3), inside its transaction, before it
    /// changes anything. The fault scenario arms the fault VFS here, so that it counts exactly
    /// the upgrade's own I/O and none of the writers'.
    var atUpgradeStepStart: (@Sendable (String) -> Void)?
    /// Step 2 registered declaratively, as `prepareMigration` needs (`--online`); it then
    /// has no start hook.
    var online = false

    private static let author = ItemTable.authorTable.quotedDatabaseIdentifier
    private static let item = ItemTable.name.quotedDatabaseIdentifier
    private static let index = ItemTable.index.quotedDatabaseIdentifier

    private static let authorTable = "CREATE TABLE \(author)(id INTEGER PRIMARY KEY, label TEXT NOT NULL)"
    private static let itemIndex = "CREATE INDEX \(index) ON \(item)(author, seq)"

    /// Step 1: `payload` may be NULL, nothing is checked.
    private static let schemaV1 = [
        authorTable,
        """
        CREATE TABLE \(item)(
            id INTEGER PRIMARY KEY,
            author INTEGER NOT NULL REFERENCES \(author)(id),
            seq INTEGER NOT NULL,
            payload TEXT,
            last_author INTEGER NOT NULL,
            last_seq INTEGER NOT NULL)
        """,
        itemIndex,
    ].joined(separator: ";\n")

    /// Step 2: the same columns with NOT NULL and CHECK constraints: only a rebuild can do it.
    private static let itemV2Columns = """
        id INTEGER PRIMARY KEY,
            author INTEGER NOT NULL REFERENCES \(author)(id),
            seq INTEGER NOT NULL,
            payload TEXT NOT NULL CHECK (length(payload) > 0),
            last_author INTEGER NOT NULL,
            last_seq INTEGER NOT NULL CHECK (last_seq >= 0)
        """
    private static let schemaV2 = [authorTable, "CREATE TABLE \(item)(\(itemV2Columns))", itemIndex]
        .joined(separator: ";\n")
    /// Step 3: a nullable column appended: ADD COLUMN, whatever the row count.
    private static let schemaV3 = [authorTable, "CREATE TABLE \(item)(\(itemV2Columns), note TEXT)", itemIndex]
        .joined(separator: ";\n")

    /// The migrator with every step.
    func migrator() -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration(Self.identifiers[0], schema: Self.schemaV1)
        let hook = atUpgradeStepStart
        if online {
            migrator.registerMigration(Self.identifiers[1], schema: Self.schemaV2)
        } else {
            migrator.registerMigration(Self.identifiers[1]) { db in
                hook?(Self.identifiers[1])
                try Self.change(db, to: Self.schemaV2, rebuilding: [ItemTable.name])
            }
        }
        migrator.registerMigration(Self.identifiers[2]) { db in
            hook?(Self.identifiers[2])
            try Self.change(db, to: Self.schemaV3, rebuilding: [])
        }
        return migrator
    }

    /// Plans and applies a schema step, refusing a plan that would not stress what it should.
    private static func change(_ db: Database, to schema: String, rebuilding tables: [String]) throws {
        let plan = try db.planSchemaChange(to: schema)
        guard plan.rebuiltTables == tables, !plan.isEmpty else {
            throw StressError("the schema step planned \(plan.rebuiltTables) instead of rebuilding \(tables)")
        }
        try db.applySchemaChange(plan)
    }
}
