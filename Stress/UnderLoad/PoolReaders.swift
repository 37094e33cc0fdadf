import Foundation
import HarnessSupport
import SerialDB

/// Reader threads of `migrate-under-load --pool`: they read through the pool while the writers
/// write and the upgrade runs, and check that every read saw exactly the schema of a committed
/// step, and that reads submitted after `startMigration` saw the new one.
final class PoolReaders: Sendable {
    /// What the readers saw.
    struct Outcome: Sendable {
        var reads = 0
        /// Reads that saw a schema matching no committed step: a half-upgraded file.
        var inconsistent = 0
        /// Reads submitted after the upgrade started (and so held by it).
        var submittedDuringUpgrade = 0
        /// Of those, reads that saw an older step.
        var sawOldSchema = 0
        var errors: [String] = []
    }

    private let threads: Int
    private let expected: ExpectedSchemas
    private let outcome = Locked(Outcome())
    private let finished = DispatchGroup()

    init(threads: Int, expected: ExpectedSchemas) {
        self.threads = threads
        self.expected = expected
    }

    /// Starts the reader threads; they stop when the control says stop.
    func start(pool: DatabasePool, control: LoadControl) {
        for _ in 0..<threads {
            finished.enter()
            Thread { [self] in
                while !control.isStopped {
                    read(pool, control: control)
                }
                finished.leave()
            }.start()
        }
    }

    /// Waits for the reader threads and returns what they saw.
    func join() -> Outcome {
        finished.wait()
        return outcome.withLock { $0 }
    }

    private func read(_ pool: DatabasePool, control: LoadControl) {
        let afterUpgradeStart = control.hasUpgradeStarted
        do {
            let (step, schema) = try pool.read { db in
                (
                    try db.fetchOne(Int.self, sql: "SELECT count(*) FROM serialdb_migrations") ?? 0,
                    try SchemaSnapshot.read(db)
                )
            }
            let consistent = step >= 1 && step <= expected.snapshots.count && expected.snapshots[step - 1] == schema
            outcome.withLock { outcome in
                outcome.reads += 1
                if !consistent { outcome.inconsistent += 1 }
                if afterUpgradeStart {
                    outcome.submittedDuringUpgrade += 1
                    if step != UpgradePlan.identifiers.count { outcome.sawOldSchema += 1 }
                }
            }
        } catch {
            outcome.withLock { outcome in
                if outcome.errors.count < 5 { outcome.errors.append("\(error)") }
            }
            Thread.sleep(forTimeInterval: 0.001)
        }
    }
}
