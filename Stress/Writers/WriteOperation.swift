/// One write a writer submits: insert a new row of its own, or update a row it owns (one it
/// inserted, or a seed row of its partition). Each write is one transaction.
struct WriteOperation: Sendable {
    enum Kind: String, Sendable {
        case insert = "i"
        case update = "u"
    }

    /// Writer keys of one generation are `generation * authorsPerGeneration + index`.
    static let authorsPerGeneration = 1000

    let id: OperationID
    let kind: Kind
    /// The row written: for an insert, `RowKey(author, seq)` of the operation itself.
    let target: RowKey

    /// The writer key of writer `index` in `generation`.
    static func author(generation: Int, index: Int) -> Int {
        generation * authorsPerGeneration + index
    }
}
