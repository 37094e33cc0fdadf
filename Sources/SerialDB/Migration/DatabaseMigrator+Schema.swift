extension DatabaseMigrator {
    /// Adds a declarative step: the database is brought to the schema described by `schema`
    /// (the application's whole set of CREATE TABLE / VIRTUAL TABLE / INDEX / TRIGGER / VIEW
    /// statements),
    /// keeping every row. Unchanged tables are left alone, appended columns use ALTER TABLE
    /// ADD COLUMN, anything else rebuilds the table the way SQLite documents; see
    /// ``Database/planSchemaChange(to:options:)``.
    ///
    /// ```swift
    /// migrator.registerMigration("v2", schema: """
    ///     CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL DEFAULT 0);
    ///     CREATE INDEX player_score ON player(score);
    ///     """)
    /// ```
    ///
    /// A change that would lose data (a column or table that holds data and is absent, a new
    /// NOT NULL column without a default or fill value) fails the step before anything is
    /// touched, with a message naming what and how to allow it.
    public mutating func registerMigration(
        _ identifier: String, schema: String, options: SchemaChangeOptions = SchemaChangeOptions()
    ) {
        register(
            Step(
                identifier: identifier,
                body: { db in
                    let plan = try db.planSchemaChange(to: schema, options: options)
                    try db.applySchemaChange(plan)
                }, declarative: DeclarativeStep(schema: schema, options: options)))
    }
}
