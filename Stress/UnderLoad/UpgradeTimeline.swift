import HarnessSupport
import SerialDB

/// When each upgrade step started and committed, recorded from the migration's progress
/// callback (on the queue's thread, so the times are exact).
final class UpgradeTimeline: Sendable {
    private struct Event {
        let progress: MigrationProgress.Event
        let step: String
        let time: Double
    }

    private let clock: RunClock
    private let events = Locked<[Event]>([])
    private let copies = Locked<[PreparedCopyOutcome]>([])

    init(clock: RunClock) {
        self.clock = clock
    }

    /// The progress callback to pass to `startMigration`.
    func record(_ progress: MigrationProgress) {
        let now = clock.now
        events.withLock { $0.append(Event(progress: progress.event, step: progress.migration, time: now)) }
        if let copy = progress.preparedCopy { copies.withLock { $0.append(copy) } }
    }

    /// What the steps that committed did with the copies `prepareMigration` made.
    var preparedCopies: [PreparedCopyOutcome] { copies.withLock { $0 } }

    func started(_ step: String) -> Double? {
        events.withLock { events in events.first { $0.progress == .stepStarted && $0.step == step }?.time }
    }

    func committed(_ step: String) -> Double? {
        events.withLock { events in events.first { $0.progress == .stepCommitted && $0.step == step }?.time }
    }

    /// The last step that committed, if any did.
    var lastCommitted: String? {
        events.withLock { events in events.last { $0.progress == .stepCommitted }?.step }
    }

    /// Seconds from a step's start to its commit.
    func duration(of step: String) -> Double? {
        guard let start = started(step), let end = committed(step) else { return nil }
        return end - start
    }
}
