/// An index, trigger or view: compared as a whole statement.
public struct SchemaObject: Sendable, Equatable {
    /// What kind of object.
    public enum Kind: String, Sendable {
        /// CREATE INDEX.
        case index
        /// CREATE TRIGGER.
        case trigger
        /// CREATE VIEW.
        case view
    }

    /// Index, trigger or view.
    public var kind: Kind
    /// Its name.
    public var name: String
    /// The table it belongs to (for a view, its own name).
    public var tableName: String
    /// Its CREATE statement, as stored in `sqlite_master`.
    public var sql: String

    /// Equal when the statements are equal up to case, quoting, whitespace and comments.
    func isSameDefinition(as other: SchemaObject) -> Bool {
        SQLTokenizer.normalized(sql) == SQLTokenizer.normalized(other.sql)
    }
}
