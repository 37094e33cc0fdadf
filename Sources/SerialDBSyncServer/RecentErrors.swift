import Foundation

/// The last internal failures (requests answered 500), newest first, for the status page. Only
/// failures take its lock: a request answered otherwise never touches it.
final class RecentErrors: @unchecked Sendable {
    // Safe to share: `entries` is behind `lock`.
    /// One failure: what the request log says of it (never a token or a row value).
    struct Entry: Sendable {
        let time: Date
        let call: SyncRequestCall
        let account: String?
        let status: Int
        let message: String
    }

    private let lock = NSLock()
    private var entries: [Entry] = []
    /// How many are kept.
    let capacity: Int

    init(capacity: Int = 10) {
        self.capacity = capacity
    }

    /// Keeps `entry`, dropping the oldest beyond the capacity.
    func add(_ entry: Entry) {
        lock.withLock {
            entries.insert(entry, at: 0)
            if entries.count > capacity { entries.removeLast() }
        }
    }

    /// The failures kept, newest first.
    var list: [Entry] { lock.withLock { entries } }
}
