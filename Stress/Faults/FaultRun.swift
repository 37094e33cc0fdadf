import CSQLiteShims
import Foundation
import SerialDB

/// One upgrade through the fault-injecting VFS: a fresh copy of the seeded file, writers that
/// write a fixed number of rows before the upgrade and keep writing during it, the fault armed
/// for exactly the upgrade's own I/O, then the file reopened through the default VFS and checked.
struct FaultRun {
    /// What happened and what was found.
    struct Outcome {
        let operations: Int64
        let injected: Int64
        let migrationError: (any Error)?
        /// The last step this run's upgrade reported committed (nil: none).
        let lastCommitted: String?
        let inspection: DatabaseInspection
        let verification: Verification
        let acknowledgements: [Acknowledgement]
        let failures: [WriteFailure]
        /// After a failed upgrade: whether migrating the reopened file again (no fault) worked.
        let retry: Result<Void, any Error>?
    }

    /// Writes each writer makes before the upgrade, and while it runs.
    private static let writesBefore = 10
    private static let writesDuring = 10

    let settings: ScenarioSettings
    let seededPath: String
    let path: String

    func run(_ fault: Fault, generation: Int) throws -> Outcome {
        try DatabaseFiles.copy(from: seededPath, to: path)
        var configuration = Configuration()
        configuration.vfsName = "serialdb-faults"
        // Checkpoint at every commit of the upgrade (it writes more pages than this), so that faults
        // also land in checkpoints, whatever the table size.
        configuration.prepareDatabase = { db in try db.execute(sql: "PRAGMA wal_autocheckpoint = 16") }
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        let control = LoadControl()
        let log = WriterLog(control: control)
        let pool = WriterPool(
            generation: generation, threads: settings.writers, tasks: settings.tasks, seedRows: settings.rows,
            seed: settings.seed, sink: log,
            budget: Writer.Budget(total: Self.writesBefore + Self.writesDuring, pauseAfter: Self.writesBefore),
            broken: settings.brokenWriter)
        try queue.write { db in try ItemTable.registerAuthors(db, pool.authors) }
        let clock = RunClock()
        // Whatever happens, no fault stays armed for the next run.
        defer { serialdb_faults_disarm() }
        pool.start(target: .queue(queue), control: control, clock: clock)
        do {
            while control.pausedWriterCount < settings.writerCount {
                guard clock.now < 60 else { throw StressError("the writers did not reach the upgrade within 60 s") }
                Thread.sleep(forTimeInterval: 0.001)
            }
            // Every run's upgrade starts from the same state: an empty WAL.
            try queue.inDatabase { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        } catch {
            control.stop()
            pool.join()
            throw error
        }

        var plan = UpgradePlan()
        plan.atUpgradeStepStart = { step in
            if step == UpgradePlan.rebuildStep {
                serialdb_faults_arm(fault.kind.mask, fault.nth, fault.code.rawValue, 0)
            }
        }
        let timeline = UpgradeTimeline(clock: clock)
        let handle = queue.startMigration(plan.migrator()) { progress in
            timeline.record(progress)
            if progress.event == .stepCommitted && progress.migration == UpgradePlan.finalStep {
                serialdb_faults_disarm()
            }
        }
        control.markUpgradeStarted()
        var migrationError: (any Error)?
        do {
            try handle.wait()
        } catch {
            migrationError = error
        }
        pool.join()
        serialdb_faults_disarm()
        let operations = serialdb_faults_operations()
        let injected = serialdb_faults_injected()
        try queue.close()

        let inspection = try DatabaseInspection.inspect(path: path)
        let acknowledgements = log.allAcknowledgements
        let verification = Verifier.verify(
            items: inspection.items, seedRows: settings.rows, acknowledgements: acknowledgements)
        var retry: Result<Void, any Error>?
        if migrationError != nil {
            retry = Result {
                let queue = try DatabaseQueue(path: path)
                defer { try? queue.close() }
                try queue.migrate(UpgradePlan().migrator())
                let integrity = try queue.inDatabase { db in try db.fetchAll(String.self, sql: "PRAGMA integrity_check")
                }
                guard integrity == ["ok"] else { throw StressError("integrity_check after the retry: \(integrity)") }
            }
        }
        return Outcome(
            operations: operations, injected: injected, migrationError: migrationError,
            lastCommitted: timeline.lastCommitted, inspection: inspection, verification: verification,
            acknowledgements: acknowledgements, failures: log.allFailures, retry: retry)
    }
}
