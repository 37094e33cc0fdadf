/// What the containers of a ``RowDecoder`` read: the row, its column names, and the column the
/// next key is expected at.
///
/// A class apart from the decoder so that the decoder can keep its keyed container from one
/// row to the next: the container refers to this cursor, not to the decoder that holds the
/// container, so the two form no reference cycle.
final class ColumnCursor {
    let row: Row
    /// The row's column names, fetched once instead of once per property.
    let lookup: ColumnLookup
    /// The statement's handle when the row reads from one (see ``Row/statementHandle``).
    private let statementHandle: OpaquePointer?
    /// The coding path of the decoder, for `DecodingError`s and super decoders.
    let codingPath: [any CodingKey]
    /// The column the next key is expected at. A synthesized `init(from:)` asks for its keys
    /// in declaration order, row after row, so after the first row each key is found with one
    /// comparison instead of a search; reset by ``startRow()``.
    private var predictedIndex = 0

    /// A cursor over `row`, which must be on a row already (its column names are read now).
    init(row: Row, codingPath: [any CodingKey]) {
        self.row = row
        self.lookup = row.lookup
        self.statementHandle = row.statementHandle
        self.codingPath = codingPath
    }

    /// A new row begins: its first key is expected at the first column.
    func startRow() {
        predictedIndex = 0
    }

    /// The index of the named column: the predicted one when it is the column that
    /// ``ColumnLookup/index(of:)`` would find (see ``ColumnLookup/isLeftmost(_:at:)``),
    /// otherwise a search. The next prediction is the column after it, or the column itself
    /// when the caller only peeks (`decodeNil` before a `decode` of the same key).
    func columnIndex(_ name: String, advancing: Bool = true) -> Int? {
        let guess = predictedIndex
        let index: Int
        if lookup.isLeftmost(name, at: guess) {
            index = guess
        } else if let found = lookup.index(of: name) {
            index = found
        } else {
            return nil
        }
        predictedIndex = advancing ? index &+ 1 : index
        return index
    }

    /// The value of the named column. (Taking a String, not the generic key, lets the compiler
    /// specialize it for each value type although the key type is only known at run time.)
    /// Inlined into each typed `decode` of the keyed container, which only forwards to it.
    @inline(__always)
    func decode<T: DatabaseValueConvertible>(_ type: T.Type, column: String) throws -> T {
        guard let index = columnIndex(column) else { throw row.missingColumnError(column) }
        return try value(type, at: index)
    }

    /// The value at `index`, which comes from ``columnIndex(_:advancing:)``.
    @inline(__always)
    func value<T: DatabaseValueConvertible>(_ type: T.Type, at index: Int) throws -> T {
        // The index comes from the statement's current names, so it is in range: read the
        // column straight away, without asking SQLite for the column count again. NULL, a value
        // of another kind, and copied rows take the checked path, which also explains failures.
        if let statementHandle, let value = T.fromStatement(statementHandle, column: Int32(truncatingIfNeeded: index)) {
            return value
        }
        return try row.decode(type, at: index)
    }
}
