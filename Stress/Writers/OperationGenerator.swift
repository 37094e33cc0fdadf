import HarnessSupport

/// The deterministic stream of operations of one writer: the seed, and which of its earlier
/// writes succeeded, tell what writer k of generation g submits as its n-th write.
///
/// Half the writes insert a row; the others update a row the writer owns: one it inserted (and
/// saw acknowledged) or a seed row of its partition (`id % writerCount == index`). Partitioning
/// means no two writers of a generation ever write the same row, so the last acknowledged write
/// of each row is well defined and checkable.
struct OperationGenerator: Sendable {
    let author: Int
    private let index: Int
    private let writerCount: Int
    private let seedRows: Int
    private var random: SeededRandom
    private var nextSeq = 1
    private var ownRows: [Int] = []

    init(author: Int, index: Int, writerCount: Int, seedRows: Int, seed: UInt64) {
        self.author = author
        self.index = index
        self.writerCount = writerCount
        self.seedRows = seedRows
        random = SeededRandom(seed: seed, stream: UInt64(author) &+ 0x5EED)
    }

    /// The next operation to submit.
    mutating func next() -> WriteOperation {
        let id = OperationID(author: author, seq: nextSeq)
        nextSeq += 1
        let roll = Int.random(in: 0..<4, using: &random)
        if roll >= 2 || (ownRows.isEmpty && roll == 1) {
            return WriteOperation(id: id, kind: .insert, target: RowKey(author: author, seq: id.seq))
        }
        if roll == 1 {
            let seq = ownRows[Int.random(in: 0..<ownRows.count, using: &random)]
            return WriteOperation(id: id, kind: .update, target: RowKey(author: author, seq: seq))
        }
        guard let seedID = drawSeedRow() else {
            return WriteOperation(id: id, kind: .insert, target: RowKey(author: author, seq: id.seq))
        }
        return WriteOperation(id: id, kind: .update, target: RowKey(author: ItemTable.seedAuthor, seq: seedID))
    }

    /// Records that an insert was acknowledged: later updates may target its row.
    mutating func acknowledged(_ operation: WriteOperation) {
        if operation.kind == .insert { ownRows.append(operation.id.seq) }
    }

    /// A seed row id in this writer's partition (ids `index + writerCount * k` in 1...seedRows),
    /// or nil when the partition is empty.
    private mutating func drawSeedRow() -> Int? {
        let first = index == 0 ? writerCount : index
        guard first <= seedRows else { return nil }
        let slots = (seedRows - first) / writerCount + 1
        return first + writerCount * Int.random(in: 0..<slots, using: &random)
    }
}
