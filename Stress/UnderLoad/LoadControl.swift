import Synchronization

/// The flags every writer of a scenario reads between writes, and the counter the progress line
/// shows. Atomics: writers poll them on every write, from threads and tasks.
final class LoadControl: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let upgradeStarted = Atomic<Bool>(false)
    private let acknowledgements = Atomic<Int>(0)
    private let pausedWriters = Atomic<Int>(0)

    /// Writers finish their current write and return.
    func stop() { stopped.store(true, ordering: .sequentiallyConsistent) }
    var isStopped: Bool { stopped.load(ordering: .sequentiallyConsistent) }

    /// Set once `startMigration` has returned: writes submitted from then on must run after the
    /// upgrade, so they use the new schema. Also releases writers paused before the upgrade.
    func markUpgradeStarted() { upgradeStarted.store(true, ordering: .sequentiallyConsistent) }
    var hasUpgradeStarted: Bool { upgradeStarted.load(ordering: .sequentiallyConsistent) }

    func countAcknowledgement() { acknowledgements.add(1, ordering: .relaxed) }
    var acknowledgedCount: Int { acknowledgements.load(ordering: .relaxed) }

    /// A writer reached its pause point and waits for the upgrade to start.
    func countPausedWriter() { pausedWriters.add(1, ordering: .sequentiallyConsistent) }
    var pausedWriterCount: Int { pausedWriters.load(ordering: .sequentiallyConsistent) }
}
