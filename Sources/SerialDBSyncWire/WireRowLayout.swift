/// A table's columns in the order the wire writes a row object's members (by name, as
/// ``SyncValue/write(row:to:)`` sorts them), each member's name already written as JSON.
///
/// A writer of many rows of one table (a client reading its uploads) writes each row from its
/// values in this order, without a dictionary to sort or a name to escape per row, and gets
/// the bytes ``SyncValue/write(row:to:)`` writes for the same row: the outbox keeps those bytes
/// and a retry sends them again, so both paths must agree to the byte.
public struct WireRowLayout: Sendable, Equatable {
    /// The column names, in the order their values are written.
    public let names: [String]
    /// Each name as a member name: the quoted, escaped name and its colon.
    private let members: [String]

    /// The layout of a row with these columns (their order does not matter).
    public init(columns: some Sequence<String>) {
        names = columns.sorted(by: SyncValue.writesBefore)
        members = names.map { name in
            var writer = JSONWriter(capacity: name.utf8.count + 3)
            writer.member(name)
            return writer.string
        }
    }

    /// Writes a row object whose values are `values`, in the order of ``names``.
    ///
    /// - Throws: ``NonFiniteValueError`` for an infinite or NaN double, which JSON cannot carry.
    public func write(values: [SyncValue], to writer: inout JSONWriter) throws(NonFiniteValueError) {
        precondition(values.count == names.count, "one value per column of the layout")
        writer.raw("{")
        for index in values.indices {
            if index > 0 { writer.raw(",") }
            writer.rawJSON(members[index])
            try values[index].write(to: &writer)
        }
        writer.raw("}")
    }
}
