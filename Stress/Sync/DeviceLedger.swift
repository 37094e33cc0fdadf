/// What one device did, kept by the harness in memory (the devices write in the harness's own
/// process): every change it committed locally, in order, and every conflict reported to it.
struct DeviceLedger: Sendable {
    /// One committed local change.
    struct Change: Sendable {
        /// The device's own counter, from 1.
        let seq: Int
        /// The row's id.
        let key: String
        /// The value written (unique to this change: `DEVICE-SEQ`); `nil` for a delete.
        let value: String?
    }

    private(set) var changes: [Change] = []
    /// For each key in conflict, the seq of the device's last change when the conflict was
    /// last reported: changes up to it were settled by the conflict.
    private(set) var conflictsThrough: [String: Int] = [:]
    private(set) var conflicts = 0

    /// The seq of the last change recorded, 0 before the first.
    var lastSeq: Int { changes.last?.seq ?? 0 }

    mutating func record(key: String, value: String?) {
        changes.append(Change(seq: lastSeq + 1, key: key, value: value))
    }

    mutating func recordConflict(key: String) {
        conflictsThrough[key] = lastSeq
        conflicts += 1
    }

    /// The last change of each key: the one the server must have, or have reported in
    /// conflict (an earlier change of the key was overwritten here first, and the outbox
    /// sends only a key's latest state).
    var lastChanges: [String: Change] {
        var last: [String: Change] = [:]
        for change in changes { last[change.key] = change }
        return last
    }
}
