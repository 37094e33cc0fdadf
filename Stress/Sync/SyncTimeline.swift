import HarnessSupport

/// What happened during a sync run, on the run's clock, recorded from every device thread and
/// the server's chaos thread: each sync's latency, the kills and the restarts.
final class SyncTimeline: Sendable {
    struct Sync: Sendable {
        /// Seconds since the load started, when the sync started.
        let time: Double
        let latencyMs: Double
        let inChild: Bool
    }

    struct Content: Sendable {
        var syncs: [Sync] = []
        var failedSyncs = 0
        var childKills: [Double] = []
        /// Kills that landed before the child's sync finished.
        var killsMidSync = 0
        var serverKills: [Double] = []
        var rejected = 0
        /// Failures that nothing in the scenario explains (a local write that threw, a
        /// server that did not come back), with the first few messages.
        var errors = 0
        var errorMessages: [String] = []
    }

    private let content = Locked(Content())

    var snapshot: Content { content.withLock { $0 } }

    func synced(at time: Double, seconds: Double, inChild: Bool) {
        content.withLock { $0.syncs.append(Sync(time: time, latencyMs: seconds * 1000, inChild: inChild)) }
    }

    func syncFailed() {
        content.withLock { $0.failedSyncs += 1 }
    }

    func rejected(_ count: Int) {
        content.withLock { $0.rejected += count }
    }

    func childKilled(at time: Double, midSync: Bool) {
        content.withLock { content in
            content.childKills.append(time)
            if midSync { content.killsMidSync += 1 }
        }
    }

    func serverKilled(at time: Double) {
        content.withLock { $0.serverKills.append(time) }
    }

    func error(_ message: String) {
        content.withLock { content in
            content.errors += 1
            if content.errorMessages.count < 5 { content.errorMessages.append(message) }
        }
    }
}
