import Foundation

/// The crash scenario's findings over all its kills, and the report they make.
struct CrashTally {
    private var kills = 0
    private var phases: [KillPhase: Int] = [:]
    private var steps: [String: Int] = [:]
    private var integrityFailures = 0
    private var foreignKeyFailures = 0
    private var notAtAStep = 0
    private var progressMismatches = 0
    private var heldSawOldSchema = 0
    private var heldWrites = 0
    private var childErrors = 0
    private var acknowledged = 0
    private(set) var upgradeSeconds: [Double] = []
    private var problems: [String] = []
    private var total = Verification()
    var resets = 0

    /// Records what a child printed and how it ended.
    mutating func recordChild(_ content: ChildTranscript.Content, killed: Bool, status: Int32, errorLog: String) {
        phases[KillPhase.classify(content, killed: killed), default: 0] += 1
        if killed { kills += 1 }
        acknowledged += content.acknowledgements.count
        if let seconds = content.migrationSeconds, content.startedSteps.contains(UpgradePlan.rebuildStep) {
            upgradeSeconds.append(seconds)
        }
        let held = content.acknowledgements.filter(\.afterUpgradeStart)
        heldWrites += held.count
        heldSawOldSchema += held.filter { $0.seenSteps != UpgradePlan.identifiers.count }.count
        // A killed child never fails a write nor prints anything odd.
        let unexplained = content.failures.count + content.oddLines.count + (killed ? 0 : 1)
        if unexplained > 0 {
            childErrors += unexplained
            let first = content.failures.first?.message ?? content.oddLines.first ?? "exit status \(status)"
            note("child: \(first) \(errorLog.prefix(300))")
        }
    }

    /// Records the check of the file after a kill and returns the committed step it is at.
    mutating func recordInspection(
        _ inspection: DatabaseInspection, expected: ExpectedSchemas, content: ChildTranscript.Content,
        epoch: CrashEpoch, seedRows: Int, generation: Int
    ) -> Int? {
        if !inspection.isIntact {
            integrityFailures += 1
            note("kill \(generation): integrity_check says \(inspection.integrity.prefix(3))")
        }
        if inspection.foreignKeyViolations > 0 {
            foreignKeyFailures += 1
            note("kill \(generation): \(inspection.foreignKeyViolations) foreign key violations")
        }
        let step = inspection.committedStep(expected)
        steps[step.map { "step_\($0)" } ?? "in_between", default: 0] += 1
        if let step {
            if !Self.step(step, agreesWith: content, startingAt: epoch.stepAtStart) {
                progressMismatches += 1
                note(
                    "kill \(generation): the file is at step \(step), but the child reported started "
                        + "\(content.startedSteps), committed \(content.committedSteps) from step \(epoch.stepAtStart)")
            }
        } else {
            notAtAStep += 1
            note("kill \(generation): not at a committed step: \(inspection.describeMismatch(expected))")
        }
        let verification = Verifier.verify(
            items: inspection.items, seedRows: seedRows, acknowledgements: epoch.acknowledgements,
            allowedInFlight: epoch.allowedInFlight)
        total.merge(verification)
        for example in verification.examples { note("kill \(generation): \(example)") }
        return step
    }

    /// The scenario's report: figures and invariants.
    func report(settings: ScenarioSettings, populateSeconds: Double) -> ScenarioReport {
        var report = ScenarioReport(scenario: .crash)
        var total = total
        total.acknowledged = acknowledged
        report.metrics.record(total)
        report.metrics.errors = childErrors
        report.metrics.rows = settings.rows
        report.metrics.writerThreads = settings.writers
        report.metrics.writerTasks = settings.tasks
        report.metrics.populateMs = Statistics.rounded(populateSeconds * 1000)
        report.metrics.kills = kills
        report.metrics.killsByPhase = Dictionary(uniqueKeysWithValues: phases.map { ($0.key.rawValue, $0.value) })
        report.metrics.stepAfterKill = steps
        report.metrics.integrityFailures = integrityFailures
        report.metrics.inFlightCommitted = total.inFlightCommitted.count
        report.metrics.migrationMs = Statistics.percentile(upgradeSeconds, 0.5).map { Statistics.rounded($0 * 1000) }

        let duringUpgrade = phases.filter { $0.key.isDuringUpgrade }.values.reduce(0, +)
        let phaseCounts = KillPhase.allCases.compactMap { phase in phases[phase].map { "\(phase.rawValue) \($0)" } }
        let stepCounts = steps.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        report.figures += [
            "\(settings.rows) seed rows; \(settings.writers) writer threads + \(settings.tasks) async tasks per child; "
                + "\(kills) children killed with SIGKILL, \(duringUpgrade) of them during the upgrade",
            "kills by phase: " + phaseCounts.joined(separator: ", "),
            "file after the kill: " + stepCounts.joined(separator: ", ")
                + "; reset to the seeded copy \(resets) times",
            "upgrade in a child (median of the \(upgradeSeconds.count) that finished it): "
                + (report.metrics.migrationMs.map { String(format: "%.1f ms", $0) } ?? "none finished"),
            "writes acknowledged \(total.acknowledged), lost \(total.lost.count); in flight at a kill and committed: "
                + "\(total.inFlightCommitted.count); held by an upgrade: \(heldWrites)",
        ]
        report.figures += problems.map { "problem: \($0)" }

        report.check("every child ran until it was killed", kills == settings.kills, "\(kills) of \(settings.kills)")
        report.check(
            "PRAGMA integrity_check is ok after every kill", integrityFailures == 0,
            "\(integrityFailures) failures in \(kills) kills")
        report.check(
            "PRAGMA foreign_key_check is empty after every kill", foreignKeyFailures == 0,
            "\(foreignKeyFailures) failures")
        report.check(
            "the file is exactly at a committed step after every kill, never in between", notAtAStep == 0,
            "\(notAtAStep) in between")
        report.check(
            "the step agrees with the upgrade progress the child reported", progressMismatches == 0,
            "\(progressMismatches) disagreements")
        report.checkWrites(total, errors: childErrors, what: " after every kill")
        report.check(
            "writes submitted during the upgrade ran after it and saw the new schema", heldSawOldSchema == 0,
            "\(heldSawOldSchema) of \(heldWrites) saw an older schema")
        return report
    }

    private mutating func note(_ problem: String) {
        if problems.count < 8 { problems.append(problem) }
    }

    /// Whether the file's step fits what the child printed: at least the last step it reported
    /// committed, at most the last one it reported started (a kill may land between a commit and
    /// its line, never before a step started).
    private static func step(_ step: Int, agreesWith content: ChildTranscript.Content, startingAt start: Int) -> Bool {
        func number(_ identifier: String?) -> Int {
            identifier.flatMap { UpgradePlan.identifiers.firstIndex(of: $0) }.map { $0 + 1 } ?? start
        }
        let lowest = max(start, number(content.committedSteps.last))
        let highest = max(start, number(content.startedSteps.last))
        return step >= lowest && step <= highest
    }
}
