import SerialDB

/// The fault scenario's findings over all its runs, and the report they make.
struct FaultTally {
    private var runs = 0
    private var injected = 0
    private var outcomes: [String: Int] = [:]
    private var acknowledged = 0
    private var refused = 0
    private var unexplainedErrors = 0
    private var integrityFailures = 0
    private var foreignKeyFailures = 0
    private var wrongStep = 0
    private var unclearErrors = 0
    private var spontaneousFailures = 0
    private var failedRetries = 0
    private var heldSawOldSchema = 0
    private var problems: [String] = []
    private var total = Verification()
    /// The upgrade's writes and syncs, from the counting runs.
    var counts: [Fault.Kind: Int64] = [:]

    /// Records one run (`fault.nth == 0`: a counting run).
    mutating func record(_ outcome: FaultRun.Outcome, fault: Fault, expected: ExpectedSchemas) {
        let label = fault.nth == 0 ? "counting \(fault.kind)s" : "\(fault)"
        if fault.nth > 0 { runs += 1 }
        if outcome.injected > 0 { injected += 1 }
        let outcomeName: String
        if let error = outcome.migrationError {
            outcomeName = "upgrade_failed"
            if outcome.injected == 0 {
                spontaneousFailures += 1
                note("\(label): the upgrade failed with no fault injected: \(error)")
            }
            if !Self.carries(error, fault.code) {
                unclearErrors += 1
                note("\(label): the upgrade failed with \(error)")
            }
            if case .failure(let retryError) = outcome.retry {
                failedRetries += 1
                note("\(label): migrating again failed: \(retryError)")
            }
        } else {
            outcomeName = outcome.injected > 0 ? "absorbed" : (fault.nth == 0 ? "counting" : "not_reached")
        }
        outcomes[outcomeName, default: 0] += 1

        // The file must be exactly at the last step this run's upgrade reported committed.
        let committed = outcome.lastCommitted.flatMap { UpgradePlan.identifiers.firstIndex(of: $0) }.map { $0 + 1 } ?? 1
        let step = outcome.inspection.committedStep(expected)
        if step != committed || (outcome.migrationError == nil && step != UpgradePlan.identifiers.count) {
            wrongStep += 1
            note(
                "\(label): the file is at step \(step.map(String.init) ?? "none") "
                    + "(\(outcome.inspection.describeMismatch(expected))), the upgrade committed step \(committed)")
        }
        if !outcome.inspection.isIntact {
            integrityFailures += 1
            note("\(label): integrity_check says \(outcome.inspection.integrity.prefix(3))")
        }
        if outcome.inspection.foreignKeyViolations > 0 { foreignKeyFailures += 1 }

        acknowledged += outcome.verification.acknowledged
        total.merge(outcome.verification)
        for example in outcome.verification.examples { note("\(label): \(example)") }
        for failure in outcome.failures {
            if failure.refusedByFailedUpgrade && outcome.migrationError != nil {
                refused += 1
            } else {
                unexplainedErrors += 1
                note("\(label): write \(failure.operation.author).\(failure.operation.seq) failed: \(failure.message)")
            }
        }
        heldSawOldSchema +=
            outcome.acknowledgements.filter {
                $0.afterUpgradeStart && $0.seenSteps != UpgradePlan.identifiers.count
            }.count
    }

    /// The scenario's report: figures and invariants.
    func report(settings: ScenarioSettings, populateSeconds: Double) -> ScenarioReport {
        var report = ScenarioReport(scenario: .faults)
        var total = total
        total.acknowledged = acknowledged
        report.metrics.record(total)
        report.metrics.errors = unexplainedErrors
        report.metrics.rows = settings.rows
        report.metrics.writerThreads = settings.writers
        report.metrics.writerTasks = settings.tasks
        report.metrics.populateMs = Statistics.rounded(populateSeconds * 1000)
        report.metrics.faultRuns = runs
        report.metrics.faultsInjected = injected
        report.metrics.faultOutcomes = outcomes
        report.metrics.upgradeWrites = counts[.write].map(Int.init)
        report.metrics.upgradeSyncs = counts[.sync].map(Int.init)
        report.metrics.integrityFailures = integrityFailures
        report.metrics.refusedWrites = refused

        let operations = (counts[.write] ?? 0) + (counts[.sync] ?? 0)
        let outcomeCounts = outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        report.figures += [
            "\(settings.rows) seed rows; \(settings.writers) writer threads + \(settings.tasks) async tasks; "
                + "the upgrade does \(counts[.write] ?? 0) writes and \(counts[.sync] ?? 0) syncs",
            "\(runs) fault runs (\(Int64(runs) < operations ? "sampled" : "every write and sync")), "
                + "\(injected) faults injected; outcomes: " + outcomeCounts.joined(separator: ", "),
            "writes acknowledged \(total.acknowledged), lost \(total.lost.count); held writes refused after a "
                + "failed upgrade: \(refused)",
        ]
        report.figures += problems.map { "problem: \($0)" }

        report.check(
            "every failed upgrade failed because of the injected fault", spontaneousFailures == 0,
            "\(spontaneousFailures) failed without a fault")
        report.check(
            "the error surfaced clearly: migrationFailed carrying the injected SQLite error", unclearErrors == 0,
            "\(unclearErrors) unclear")
        report.check(
            "the file is at the last step the upgrade committed (previous or new), with exactly its schema",
            wrongStep == 0, "\(wrongStep) wrong")
        report.check(
            "PRAGMA integrity_check is ok after every fault", integrityFailures == 0, "\(integrityFailures) failures")
        report.check(
            "PRAGMA foreign_key_check is empty after every fault", foreignKeyFailures == 0,
            "\(foreignKeyFailures) failures")
        report.checkWrites(total, errors: unexplainedErrors)
        report.check(
            "writes submitted during the upgrade ran after it and saw the new schema, or were refused",
            heldSawOldSchema == 0, "\(heldSawOldSchema) saw an older schema")
        report.check(
            "migrating again after a failed upgrade succeeds", failedRetries == 0, "\(failedRetries) retries failed")
        return report
    }

    private mutating func note(_ problem: String) {
        if problems.count < 8 { problems.append(problem) }
    }

    /// Whether `error` is `migrationFailed` whose underlying error is the SQLite error injected
    /// (same primary code: SQLite reports a full disk or an I/O error with its own extended code).
    private static func carries(_ error: any Error, _ code: ResultCode) -> Bool {
        guard let error = error as? SerialDBError, error.code == .migrationFailed,
            let underlying = error.underlying as? DatabaseError
        else { return false }
        return underlying.resultCode == code.primary
    }
}
