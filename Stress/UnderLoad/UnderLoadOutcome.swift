import Foundation

/// What one migrate-under-load run recorded (times on the run's clock), and the report it
/// makes: the checker's verdict, wait times of the writes the upgrade held, throughput before,
/// during and after it, and the latency chart.
struct UnderLoadOutcome {
    let settings: ScenarioSettings
    let populateSeconds: Double
    let loadStart: Double
    /// Just before `startMigration` was called.
    let upgradeRequested: Double
    /// Just before `startMigration` was called (after `prepareMigration` with `--online`).
    let swapRequested: Double
    /// Just after the upgrade's `wait()` returned.
    let upgradeFinished: Double
    let loadEnd: Double
    let migrationError: (any Error)?
    let timeline: UpgradeTimeline
    let acknowledgements: [Acknowledgement]
    let failures: [WriteFailure]
    let inspection: DatabaseInspection
    let expected: ExpectedSchemas
    /// What the reader threads saw (`--pool` only).
    let reads: PoolReaders.Outcome?

    func report() -> ScenarioReport {
        var report = ScenarioReport(scenario: .migrateUnderLoad)
        let verification = Verifier.verify(
            items: inspection.items, seedRows: settings.rows, acknowledgements: acknowledgements)
        report.metrics.record(verification)
        report.metrics.errors = failures.count
        report.metrics.rows = settings.rows
        report.metrics.writerThreads = settings.writers
        report.metrics.writerTasks = settings.tasks
        report.metrics.loadMs = Statistics.rounded((loadEnd - loadStart) * 1000)
        report.metrics.populateMs = Statistics.rounded(populateSeconds * 1000)
        report.metrics.migrationMs = Statistics.rounded((upgradeFinished - upgradeRequested) * 1000)
        report.metrics.rebuildStepMs = timeline.duration(of: UpgradePlan.rebuildStep).map {
            Statistics.rounded($0 * 1000)
        }
        if settings.online {
            report.metrics.copyMs = Statistics.rounded((swapRequested - upgradeRequested) * 1000)
            report.metrics.swapMs = Statistics.rounded((upgradeFinished - swapRequested) * 1000)
        }

        // Writes submitted after startMigration returned and before the upgrade ended waited for
        // it; with --online, the waits are those of every write submitted during the copy and the swap.
        let gated = acknowledgements.filter { $0.afterUpgradeStart && $0.submitted < upgradeFinished }
        let held =
            settings.online
            ? acknowledgements.filter { $0.submitted >= upgradeRequested && $0.submitted < upgradeFinished } : gated
        let waits = held.map { ($0.returned - $0.submitted) * 1000 }
        report.metrics.writesBlockedByUpgrade = held.count
        report.metrics.waitP50Ms = Statistics.percentile(waits, 0.5).map(Statistics.rounded)
        report.metrics.waitP99Ms = Statistics.percentile(waits, 0.99).map(Statistics.rounded)
        report.metrics.waitMaxMs = waits.max().map(Statistics.rounded)
        let returns = acknowledgements.map(\.returned)
        report.metrics.throughputBeforePerS = Statistics.rate(
            returns.filter { $0 < upgradeRequested }.count, over: upgradeRequested - loadStart)
        report.metrics.throughputDuringPerS = Statistics.rate(
            returns.filter { $0 >= upgradeRequested && $0 <= upgradeFinished }.count,
            over: upgradeFinished - upgradeRequested)
        report.metrics.throughputAfterPerS = Statistics.rate(
            returns.filter { $0 > upgradeFinished }.count, over: loadEnd - upgradeFinished)

        report.chart = LatencyChart(
            title: "SerialDB write latency: \(settings.writers) threads + \(settings.tasks) tasks + "
                + "\(MigrateUnderLoadScenario.arrivalsPerSecond) inserts/s, \(settings.rows) rows rebuilt "
                + "(seed \(settings.seed))",
            points: acknowledgements.map {
                LatencyChart.Point(
                    time: $0.submitted - loadStart, latencyMs: ($0.returned - $0.submitted) * 1000,
                    heldByUpgrade: $0.afterUpgradeStart && $0.submitted < upgradeFinished)
            },
            upgradeStart: upgradeRequested - loadStart, upgradeEnd: upgradeFinished - loadStart)

        describe(&report)
        for failure in failures.prefix(3) { report.figures.append("error: \(failure.message)") }
        for example in verification.examples { report.figures.append("problem: \(example)") }

        report.check(
            "the upgrade succeeded", migrationError == nil, migrationError.map { "\($0)" } ?? "")
        let step = inspection.committedStep(expected)
        report.check(
            "the file is at the final step, with exactly its schema", step == UpgradePlan.identifiers.count,
            step == nil ? inspection.describeMismatch(expected) : "step \(step!)")
        report.check(
            "PRAGMA integrity_check is ok", inspection.isIntact, inspection.integrity.prefix(3).joined(separator: "; "))
        report.check(
            "PRAGMA foreign_key_check is empty", inspection.foreignKeyViolations == 0,
            "\(inspection.foreignKeyViolations) violations")
        report.checkWrites(verification, errors: failures.count)
        let sawOld = acknowledgements.filter { $0.afterUpgradeStart && $0.seenSteps != UpgradePlan.identifiers.count }
        report.check(
            "writes submitted during the upgrade ran after it and saw the new schema",
            !gated.isEmpty && sawOld.isEmpty,
            "\(gated.count) writes held by the upgrade; \(sawOld.count) saw an older schema")
        if settings.online {
            let duringCopy = acknowledgements.filter { $0.submitted >= upgradeRequested && $0.returned < swapRequested }
            let copyWrong = duringCopy.filter { $0.seenSteps != 1 }
            report.check(
                "writes during the copy ran against the old schema, without waiting for the copy",
                !duringCopy.isEmpty && copyWrong.isEmpty,
                "\(duringCopy.count) writes during the copy; \(copyWrong.count) saw another step")
            // A copy found wrong is rebuilt under the gate: the data is right, the copy was not.
            let copies = timeline.preparedCopies
            report.check(
                "the upgrade swapped in the prepared copy, found exact",
                !copies.isEmpty && copies.allSatisfy(\.wasUsed),
                copies.isEmpty
                    ? "no step reported a prepared copy"
                    : copies.map { $0.notUsedBecause ?? "\($0.tables.joined(separator: ", ")) swapped in" }
                        .joined(separator: "; "))
        }
        let early = acknowledgements.filter { $0.returned < upgradeRequested }
        let earlyWrong = early.filter { $0.seenSteps != 1 }
        report.check(
            "writes finished before the upgrade saw the old schema", earlyWrong.isEmpty,
            "\(earlyWrong.count) of \(early.count) saw another step")
        if let reads {
            report.metrics.poolReads = reads.reads
            report.metrics.readsInconsistent = reads.inconsistent
            report.metrics.readsSawOldSchema = reads.sawOldSchema
            report.figures.append(
                "pool reads: \(reads.reads) (\(reads.submittedDuringUpgrade) submitted after the upgrade started), "
                    + "\(reads.errors.count) failed")
            for error in reads.errors.prefix(3) { report.figures.append("read error: \(error)") }
            report.check(
                "every read saw exactly the schema of a committed step", reads.reads > 0 && reads.inconsistent == 0,
                "\(reads.inconsistent) of \(reads.reads) reads saw a schema of no committed step")
            report.check(
                "reads submitted after the upgrade started saw the new schema",
                reads.submittedDuringUpgrade > 0 && reads.sawOldSchema == 0 && reads.errors.isEmpty,
                "\(reads.sawOldSchema) of \(reads.submittedDuringUpgrade) saw an older step; \(reads.errors.count) failed"
            )
        }
        return report
    }

    private func describe(_ report: inout ScenarioReport) {
        let metrics = report.metrics
        func ms(_ value: Double?) -> String { value.map { String(format: "%.1f ms", $0) } ?? "n/a" }
        report.figures += [
            "\(settings.rows) seed rows (inserted in \(Statistics.milliseconds(populateSeconds)) ms); "
                + "\(settings.writers) writer threads + \(settings.tasks) async tasks "
                + "+ \(MigrateUnderLoadScenario.arrivalsPerSecond) open-loop inserts/s; "
                + String(format: "%.1f s of load", (metrics.loadMs ?? 0) / 1000),
            (settings.online
                ? "online: copy \(ms(metrics.copyMs)) (prepareMigration, writes go on), swap \(ms(metrics.swapMs)); "
                : "")
                + "upgrade: \(ms(metrics.migrationMs)) from \(settings.online ? "prepareMigration" : "startMigration") to done; rebuild step \(ms(metrics.rebuildStepMs)), "
                + "add-column step \(ms(timeline.duration(of: UpgradePlan.finalStep).map { $0 * 1000 }))",
            "writes held by the upgrade: \(metrics.writesBlockedByUpgrade ?? 0); wait p50 \(ms(metrics.waitP50Ms)), "
                + "p99 \(ms(metrics.waitP99Ms)), max \(ms(metrics.waitMaxMs))",
            String(
                format: "throughput (acknowledged writes/s): before %.0f, during %.0f, after %.0f",
                metrics.throughputBeforePerS ?? 0, metrics.throughputDuringPerS ?? 0, metrics.throughputAfterPerS ?? 0),
            "writes acknowledged \(metrics.writesAcknowledged), found \(metrics.writesFound), failed \(metrics.errors)",
        ]
    }
}
