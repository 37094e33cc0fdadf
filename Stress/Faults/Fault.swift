import CSQLiteShims
import HarnessSupport
import SerialDB

/// One injected fault: the `nth` write or sync of the upgrade fails with `code`.
struct Fault: Sendable, CustomStringConvertible {
    enum Kind: String, Sendable {
        case write
        case sync

        /// The fault VFS's kind mask.
        var mask: Int32 { self == .write ? SERIALDB_FAULT_WRITE : SERIALDB_FAULT_SYNC }
    }

    let kind: Kind
    /// 1-based; 0 only counts.
    let nth: Int64
    let code: ResultCode

    var description: String { "\(kind) #\(nth) fails with \(code)" }

    /// Counts the upgrade's operations of one kind without failing any.
    static func counting(_ kind: Kind) -> Fault {
        Fault(kind: kind, nth: 0, code: ResultCode(rawValue: 0))
    }

    /// Which faults to inject, given how many writes and syncs the upgrade does: all of them
    /// when they fit in `maximum`, else an even sample (one drawn at random from each of
    /// `maximum` equal slices, first and last always included), a quarter of them syncs. Write
    /// faults alternate between an I/O error and a full disk.
    static func plan(writes: Int64, syncs: Int64, maximum: Int, random: inout SeededRandom) -> [Fault] {
        let syncCount = writes + syncs <= Int64(maximum) ? Int(syncs) : min(Int(syncs), max(1, maximum / 4))
        let writeCount = min(Int(writes), maximum - syncCount)
        let writeFaults = sample(writeCount, of: writes, &random).enumerated().map { index, nth in
            Fault(
                kind: .write, nth: nth,
                code: index % 2 == 0 ? ResultCode(rawValue: SERIALDB_IOERR_WRITE) : ResultCode.SQLITE_FULL)
        }
        let syncFaults = sample(syncCount, of: syncs, &random).map {
            Fault(kind: .sync, nth: $0, code: ResultCode(rawValue: SERIALDB_IOERR_FSYNC))
        }
        return writeFaults + syncFaults
    }

    private static func sample(_ count: Int, of total: Int64, _ random: inout SeededRandom) -> [Int64] {
        guard count > 0, total > 0 else { return [] }
        if Int64(count) >= total { return Array(1...total) }
        return (0..<Int64(count)).map { slice in
            if slice == 0 { return 1 }
            if slice == Int64(count) - 1 { return total }
            let low = slice * total / Int64(count) + 1
            let high = max(low, (slice + 1) * total / Int64(count))
            return Int64.random(in: low...high, using: &random)
        }
    }
}
