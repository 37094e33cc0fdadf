import Foundation
import HarnessSupport
import SerialDB

/// The main job: writer threads and async tasks insert and update rows through one queue while
/// `startMigration` rebuilds their table, then the file is checked against every acknowledged
/// write. With `--pool` they write through a `DatabasePool`, and reader threads read beside them.
struct MigrateUnderLoadScenario {
    /// Rate of the open-loop inserts (``ArrivalStream``) besides the writers.
    static let arrivalsPerSecond = 500

    let settings: ScenarioSettings

    func run() throws -> ScenarioReport {
        let directory = try ScratchDirectory(prefix: "serialdb-stress-under-load")
        let path = directory.path("under-load.sqlite")
        let control = LoadControl()
        let log = WriterLog(control: control)
        let liveProgress = ProgressLine(label: "migrate-under-load") {
            "\(control.acknowledgedCount) writes acknowledged"
        }
        liveProgress.start()
        defer { liveProgress.stop() }
        liveProgress.update("populating \(settings.rows) rows")
        let populateSeconds = try DatabaseFiles.createSeeded(at: path, rows: settings.rows)

        let clock = RunClock()
        let expected = try ExpectedSchemas()
        let target: LoadTarget =
            settings.usesPool ? .pool(try DatabasePool(path: path)) : .queue(try DatabaseQueue(path: path))
        let readers = PoolReaders(threads: 2, expected: expected)
        let pool = WriterPool(
            generation: 0, threads: settings.writers, tasks: settings.tasks, seedRows: settings.rows,
            seed: settings.seed, sink: log, budget: Writer.Budget(), broken: settings.brokenWriter)
        // Its author comes after the partition of the seed rows: it never updates them.
        let arrivals = ArrivalStream(
            author: WriteOperation.author(generation: 0, index: settings.writerCount),
            perSecond: Self.arrivalsPerSecond, sink: log)
        try target.write { db in try ItemTable.registerAuthors(db, pool.authors + [arrivals.author]) }

        let loadStart = clock.now
        pool.start(target: target, control: control, clock: clock)
        arrivals.start(target: target, control: control, clock: clock)
        if case .pool(let databasePool) = target {
            readers.start(pool: databasePool, control: control)
        }
        liveProgress.update("load before the upgrade")
        Thread.sleep(forTimeInterval: settings.duration / 2)
        let timeline = UpgradeTimeline(clock: clock)
        let upgradeRequested = clock.now
        let migrator = UpgradePlan(online: settings.online).migrator()
        var prepareError: (any Error)?
        if settings.online {
            liveProgress.update("copying the table: writes go on")
            do {
                _ = try target.prepareMigrationBlocking(migrator)
            } catch {
                prepareError = error
            }
        }
        let swapRequested = clock.now
        let handle = target.startMigration(migrator) { timeline.record($0) }
        control.markUpgradeStarted()
        liveProgress.update("upgrade running: writes held")
        var migrationError: (any Error)?
        do {
            try handle.wait()
        } catch {
            migrationError = error
        }
        let upgradeFinished = clock.now
        liveProgress.update("load after the upgrade")
        Thread.sleep(forTimeInterval: settings.duration / 2)
        control.stop()
        pool.join()
        arrivals.join()
        let readOutcome = settings.usesPool ? readers.join() : nil
        let loadEnd = clock.now
        try target.close()
        liveProgress.update("checking the file")
        let inspection = try DatabaseInspection.inspect(path: path)

        return UnderLoadOutcome(
            settings: settings, populateSeconds: populateSeconds, loadStart: loadStart,
            upgradeRequested: upgradeRequested, swapRequested: swapRequested, upgradeFinished: upgradeFinished,
            loadEnd: loadEnd, migrationError: prepareError ?? migrationError, timeline: timeline,
            acknowledgements: log.allAcknowledgements,
            failures: log.allFailures, inspection: inspection, expected: expected, reads: readOutcome
        ).report()
    }
}
