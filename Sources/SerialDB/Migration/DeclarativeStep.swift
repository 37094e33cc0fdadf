/// The schema of a step registered with ``DatabaseMigrator/registerMigration(_:schema:options:)``:
/// what `prepareMigration` plans and copies ahead of the upgrade.
struct DeclarativeStep: Sendable {
    var schema: String
    var options: SchemaChangeOptions
}
