import Foundation

/// The tables the writer connection's transactions changed, as the update and commit hooks
/// report them, recorded without hashing or allocating on the hot path.
///
/// The update hook runs once per changed row: a row of the table the previous row was in (the
/// common case) costs one pointer compare. A table new to the transaction is looked up in
/// `tables`, a short list that outlives transactions and keeps, per table, its name (lowercase,
/// built once) and whether an observation reads it (cached for one version of the hub's
/// observations). A transaction records the indices of its tables; a commit moves them to
/// `committed` until the hub publishes them.
///
/// SQLite passes the table's name as a pointer into its schema, which a schema reload frees: a
/// pointer from an earlier transaction is never dereferenced, and an entry matches a pointer
/// only if its own copy of the bytes still spells what the pointer points to. Within one write
/// transaction no other connection can change the schema, and this connection's own schema
/// changes re-run every observation, so the pointer compare per row is enough there.
///
/// A class, used only by the thread that holds the writer serializer's lock (through its
/// ``ObservationHub``): the hooks mutate it in place, never copying its arrays. Unchecked
/// exclusivity on its `var`s, for the same reason and with the same proof as the hub's: one
/// thread at a time, and no method passes a property inout to code that touches it again.
final class ChangedTables {
    /// One table the hooks have seen.
    struct Table {
        /// The pointer SQLite passed for it last (compared, never dereferenced).
        var pointer: UnsafePointer<CChar>
        /// The name's bytes as SQLite spelled it, with the terminating NUL.
        let bytes: [CChar]
        /// The name, lowercase (SQLite folds ASCII only).
        let name: String
        /// The version of the hub's observations `isObserved` was found for; 0 for none.
        var knownVersion: UInt64 = 0
        /// Whether an observation read this table (or was fetching) at `knownVersion`.
        var isObserved = false
    }

    /// Every table seen since the list was last emptied (more than `capacity` and nothing
    /// pending empties it).
    @exclusivity(unchecked)
    private(set) var tables: [Table] = []
    /// Indices into `tables` of the tables the open transaction changed.
    @exclusivity(unchecked)
    private var inTransaction = Indices()
    /// The pointer of the table the previous row was in.
    @exclusivity(unchecked)
    private var lastPointer: UnsafePointer<CChar>?
    /// Indices into `tables` of the tables committed since the hub last published.
    @exclusivity(unchecked)
    private(set) var committed = Indices()

    private static let capacity = 64

    /// A row of `table` changed. One compare when it is the previous row's table.
    @inline(__always)
    func rowChanged(in table: UnsafePointer<CChar>) {
        if table != lastPointer { tableChanged(table) }
    }

    /// The first row of `table` since the previous row's table differed.
    @inline(never)
    private func tableChanged(_ table: UnsafePointer<CChar>) {
        lastPointer = table
        if inTransaction.contains(where: { tables[$0].pointer == table }) { return }
        inTransaction.insert(index(of: table))
    }

    /// The entry for the name `table` points to, made if missing. `table` is valid now.
    private func index(of table: UnsafePointer<CChar>) -> Int {
        if let index = tables.firstIndex(where: { $0.pointer == table && strcmp($0.bytes, table) == 0 }) {
            return index
        }
        if let index = tables.firstIndex(where: { strcmp($0.bytes, table) == 0 }) {
            tables[index].pointer = table
            return index
        }
        let length = strlen(table)
        let bytes = Array(UnsafeBufferPointer(start: table, count: length + 1))
        tables.append(Table(pointer: table, bytes: bytes, name: DatabaseAuthorizer.lowercased(table)))
        return tables.count - 1
    }

    /// The open transaction commits: its tables join `committed`. Returns whether any did.
    func commitTransaction() -> Bool {
        committed.formUnion(inTransaction)
        endTransaction()
        return !committed.isEmpty
    }

    /// The open transaction ended (committed or rolled back): forget its tables.
    func endTransaction() {
        inTransaction.removeAll()
        lastPointer = nil
        if tables.count > Self.capacity && committed.isEmpty {
            tables.removeAll(keepingCapacity: true)
        }
    }

    /// The hub published the committed tables.
    func clearCommitted() {
        committed.removeAll()
    }

    /// Whether the hub's cached answers say no observation at `version` reads a committed table.
    func committedConcernsNobody(atVersion version: UInt64) -> Bool {
        !committed.contains { tables[$0].knownVersion != version || tables[$0].isObserved }
    }

    /// Records whether an observation at `version` reads the table at `index`.
    func setObserved(_ isObserved: Bool, at index: Int, version: UInt64) {
        tables[index].isObserved = isObserved
        tables[index].knownVersion = version
    }

    /// Forgets everything (the hooks are removed).
    func removeAll() {
        tables = []
        inTransaction.removeAll()
        committed.removeAll()
        lastPointer = nil
    }

    /// A set of indices into `tables`, the first kept inline: a transaction usually changes
    /// one table, and then no array is touched.
    struct Indices: Sequence {
        private var first = -1
        private var others: [Int] = []

        var isEmpty: Bool { first < 0 }

        mutating func insert(_ index: Int) {
            if first < 0 {
                first = index
            } else if first != index && !others.contains(index) {
                others.append(index)
            }
        }

        mutating func formUnion(_ other: Indices) {
            for index in other { insert(index) }
        }

        mutating func removeAll() {
            first = -1
            if !others.isEmpty { others.removeAll(keepingCapacity: true) }
        }

        func makeIterator() -> Iterator { Iterator(indices: self) }

        /// The first index, then the others in insertion order.
        struct Iterator: IteratorProtocol {
            let indices: Indices
            var position = -1

            mutating func next() -> Int? {
                defer { position += 1 }
                if position < 0 { return indices.first < 0 ? nil : indices.first }
                return position < indices.others.count ? indices.others[position] : nil
            }
        }
    }
}
