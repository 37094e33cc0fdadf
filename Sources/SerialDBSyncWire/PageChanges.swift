/// The changes of a fetch-data page laid out for a client that applies them: the versions,
/// delete flags and row values in flat arrays, and each row's column names stored once for
/// all the rows that carry the same names in the same order (every row of a page, as servers
/// write them; a tombstone's key is a second shape). Reading a page this way and applying it
/// costs no dictionary per row; ``changes`` gives the same changes as ``SyncChange`` values.
package struct PageChanges: Sendable, Equatable {
    /// Each change's server version.
    package private(set) var versions: [Int64] = []
    /// Each change's delete flag (its row is then the key alone).
    package private(set) var deleted: [Bool] = []
    /// The distinct column-name lists of the rows, in order of first use. A row that names a
    /// column twice keeps both here; ``changes`` keeps the last value, as a JSON object does.
    package private(set) var shapes: [[String]] = []
    /// Each change's index in ``shapes``.
    package private(set) var shapeOfChange: [Int] = []
    /// Where each change's values start in ``values``, and one more entry: where they end.
    private var valueStarts: [Int] = [0]
    /// Every row's values, row after row, each row's in the order of its shape.
    package private(set) var values: [SyncValue] = []

    /// No changes.
    package init() {}

    /// The changes of `changes`, each row's columns in name order.
    package init(_ changes: [SyncChange]) {
        reserve(changes.count, values: changes.reduce(0) { $0 + $1.row.count })
        var names: [String] = []
        for change in changes {
            names.removeAll(keepingCapacity: true)
            for (name, value) in change.row.sorted(by: { $0.key < $1.key }) {
                names.append(name)
                values.append(value)
            }
            endRow(version: change.version, deleted: change.deleted, names: names)
        }
    }

    /// The number of changes.
    package var count: Int { versions.count }

    /// The values of change `index`, in the order of ``columns(of:)``.
    package func values(of index: Int) -> ArraySlice<SyncValue> {
        values[valueStarts[index]..<valueStarts[index + 1]]
    }

    /// The column names of change `index`'s row.
    package func columns(of index: Int) -> [String] {
        shapes[shapeOfChange[index]]
    }

    /// The row of change `index` as a dictionary (a column named twice keeps its last value).
    package func row(of index: Int) -> [String: SyncValue] {
        Dictionary(zip(columns(of: index), values(of: index)), uniquingKeysWith: { _, last in last })
    }

    /// The changes as ``SyncChange`` values.
    package var changes: [SyncChange] {
        versions.indices.map { SyncChange(version: versions[$0], deleted: deleted[$0], row: row(of: $0)) }
    }

    /// How many shapes a row that is not shaped as the row before is compared with.
    private static let shapesSearched = 8

    /// Makes room for `changes` more changes and `values` more values.
    private mutating func reserve(_ changes: Int, values count: Int) {
        versions.reserveCapacity(versions.count + changes)
        deleted.reserveCapacity(deleted.count + changes)
        shapeOfChange.reserveCapacity(shapeOfChange.count + changes)
        valueStarts.reserveCapacity(valueStarts.count + changes)
        values.reserveCapacity(values.count + count)
    }

    /// Adds one value to the row being read.
    package mutating func appendValue(_ value: SyncValue) {
        values.append(value)
    }

    /// Ends the row being read, whose values were appended since the row before ended, as a
    /// change: `names` are its column names, one per value, in order. A row whose names are
    /// those of the row before, or of one of the first few shapes (a page that alternates rows
    /// and tombstones), shares that shape; a page of ever new names costs a shape per row, no
    /// search through all of them.
    package mutating func endRow(version: Int64, deleted isDeleted: Bool, names: [String]) {
        precondition(names.count == values.count - valueStarts[valueStarts.count - 1], "one name per value of the row")
        versions.append(version)
        deleted.append(isDeleted)
        if let last = shapeOfChange.last, shapes[last] == names {
            shapeOfChange.append(last)
        } else if let known = shapes.prefix(Self.shapesSearched).firstIndex(of: names) {
            shapeOfChange.append(known)
        } else {
            shapes.append(names)
            shapeOfChange.append(shapes.count - 1)
        }
        valueStarts.append(values.count)
    }
}
