/// Columns whose values no two rows may share (NULLs aside), under their collations.
struct UniqueKey: Sendable, Equatable {
    /// Column names, in key order.
    var columns: [String]
    /// The collation of each column (`BINARY`, `NOCASE`...).
    var collations: [String]

    /// The same columns under the same collations, names compared as SQLite does.
    func isSame(as other: UniqueKey) -> Bool {
        columns.map(\.sqliteFolded) == other.columns.map(\.sqliteFolded)
            && collations.map(\.sqliteFolded) == other.collations.map(\.sqliteFolded)
    }
}
