import CSQLiteShims
import Foundation
import HarnessSupport
import SerialDB

/// The upgrade through a VFS that fails its k-th write or sync (an I/O error or a full disk),
/// for every k up to the upgrade's length, or an even sample of them (`--max-faults`).
///
/// Two unfailing runs first count the upgrade's writes and syncs. Each fault run must end in
/// one of two ways: the upgrade fails with `migrationFailed` carrying the injected SQLite error,
/// the file stays at the last step the upgrade reported committed, the held writes are refused
/// with `migrationFailed`, and migrating again afterwards succeeds; or SQLite absorbs the fault
/// (a failed checkpoint is retried later) and the upgrade succeeds. Either way the file is
/// intact and holds every acknowledged write.
struct FaultScenario {
    let settings: ScenarioSettings

    func run() throws -> ScenarioReport {
        let registered = serialdb_faults_register()
        guard registered == 0 else {
            throw StressError("cannot register the fault VFS: SQLite error \(ResultCode(rawValue: registered))")
        }
        let directory = try ScratchDirectory(prefix: "serialdb-stress-faults")
        let progress = ProgressLine(label: "faults")
        progress.start()
        defer { progress.stop() }
        progress.update("populating \(settings.rows) rows")
        let seeded = directory.path("seeded.sqlite")
        let populateSeconds = try DatabaseFiles.createSeeded(at: seeded, rows: settings.rows)
        let expected = try ExpectedSchemas()
        let runner = FaultRun(settings: settings, seededPath: seeded, path: directory.path("faults.sqlite"))

        progress.update("counting the upgrade's writes and syncs")
        var tally = FaultTally()
        for (index, kind) in [Fault.Kind.write, .sync].enumerated() {
            let outcome = try runner.run(.counting(kind), generation: index + 1)
            tally.counts[kind] = outcome.operations
            tally.record(outcome, fault: .counting(kind), expected: expected)
        }
        var random = SeededRandom(seed: settings.seed, stream: 0xFA17)
        let faults = Fault.plan(
            writes: tally.counts[.write] ?? 0, syncs: tally.counts[.sync] ?? 0, maximum: settings.maxFaults,
            random: &random)
        for (index, fault) in faults.enumerated() {
            progress.update("fault \(index + 1)/\(faults.count): \(fault)")
            let outcome = try runner.run(fault, generation: index + 3)
            tally.record(outcome, fault: fault, expected: expected)
        }
        return tally.report(settings: settings, populateSeconds: populateSeconds)
    }
}
