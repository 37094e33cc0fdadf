/// Identifies a row of the item table independently of its rowid: the author that inserted it
/// and the sequence number of that insert. Seed rows have author ``ItemTable/seedAuthor`` and
/// their id as sequence number.
struct RowKey: Hashable, Sendable {
    let author: Int
    let seq: Int
}
