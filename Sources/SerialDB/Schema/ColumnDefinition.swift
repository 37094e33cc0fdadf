/// A column as SQLite reports it (`PRAGMA table_xinfo`).
/// See <https://www.sqlite.org/pragma.html#pragma_table_xinfo>.
public struct ColumnDefinition: Sendable, Equatable {
    /// Hidden and generated columns, from the `hidden` field of `table_xinfo`.
    public enum Visibility: Int, Sendable {
        /// An ordinary column.
        case normal = 0
        /// A hidden column of a virtual table.
        case hidden = 1
        /// A VIRTUAL generated column.
        case generatedVirtual = 2
        /// A STORED generated column.
        case generatedStored = 3
    }

    /// The column name.
    public var name: String
    /// The declared type, as written (`INTEGER`, `VARCHAR(20)`, or empty).
    public var type: String
    /// Whether the column is NOT NULL.
    public var isNotNull: Bool
    /// The DEFAULT expression as SQL text, or `nil`.
    public var defaultSQL: String?
    /// 1-based position in the primary key, or 0 when not part of it.
    public var primaryKeyIndex: Int
    /// Hidden or generated.
    public var visibility: Visibility

    /// Whether rows can store a value into it (generated and hidden columns cannot be written).
    public var isWritable: Bool { visibility == .normal }
}

/// A foreign key of a table (`PRAGMA foreign_key_list`), possibly over several columns.
/// See <https://www.sqlite.org/pragma.html#pragma_foreign_key_list>.
public struct ForeignKeyDefinition: Sendable, Equatable {
    /// The referenced (parent) table.
    public var parentTable: String
    /// The referencing columns of this table.
    public var columns: [String]
    /// The referenced columns of the parent; empty means its primary key.
    public var parentColumns: [String]
    /// ON UPDATE action.
    public var onUpdate: String
    /// ON DELETE action.
    public var onDelete: String
}
