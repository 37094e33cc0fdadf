import Foundation
import HarnessSupport
import SerialDB

/// A child process runs the upgrade under load and is killed with SIGKILL at a random moment,
/// many times; after each kill the file is reopened and checked.
///
/// One file serves the whole run, so that kills find it in every state a real app would:
/// a child starts where the previous one died (it recovers the WAL, rolls back a half-done
/// upgrade, finds step 2 committed and only step 3 left...), and every write acknowledged
/// since the file was last reset is checked again after every later kill. The parent checks a
/// copy of the file as the kill left it, so its own open does not do the child's recovery. Once a kill lands after the upgrade
/// committed, the file is reset to a copy of the seeded step-1 database made at the start, so
/// that later kills still hit the upgrade.
///
/// Kill points are drawn from the seed by ``KillPlan``: half of them aimed at the upgrade.
struct CrashScenario {
    let settings: ScenarioSettings

    func run() throws -> ScenarioReport {
        let directory = try ScratchDirectory(prefix: "serialdb-stress-crash")
        let seeded = directory.path("seeded.sqlite")
        let path = directory.path("crash.sqlite")
        let checkedCopy = directory.path("checked.sqlite")
        let progress = ProgressLine(label: "crash")
        progress.start()
        defer { progress.stop() }
        progress.update("populating \(settings.rows) rows")
        let populateSeconds = try DatabaseFiles.createSeeded(at: seeded, rows: settings.rows)
        try DatabaseFiles.copy(from: seeded, to: path)
        let expected = try ExpectedSchemas()
        let executable = try CrashChildProcess.executable()
        let clock = RunClock()

        var plan = KillPlan(kills: settings.kills, seed: settings.seed, online: settings.online)
        // First guess: copying the rows costs about what inserting them did. Then the median of
        // what the children measured.
        var upgradeEstimate = max(0.01, populateSeconds)
        var startupEstimate = 0.05
        var copyEstimate = max(0.05, populateSeconds * 3)
        var copySeconds: [Double] = []
        var tally = CrashTally()
        var epoch = CrashEpoch()
        for (generation, target) in zip(1..., plan.targets) {
            let warmup = max(0.1, upgradeEstimate / 2)
            let fraction = plan.nextFraction()
            progress.update("kill \(generation)/\(settings.kills)")
            let errorLog = directory.path("child-\(generation).stderr")
            let child = try CrashChildProcess(
                executable: executable,
                arguments: CrashChild.arguments(path: path, generation: generation, settings: settings, warmup: warmup),
                errorLog: errorLog, clock: clock)
            KillPlan.wait(
                for: target, fraction: fraction, child: child, warmup: warmup, upgrade: upgradeEstimate,
                startup: startupEstimate, copy: copyEstimate, clock: clock)
            child.kill()
            let end = child.waitForEnd()
            let content = child.transcript.snapshot
            tally.recordChild(
                content, killed: end.killed, status: end.status,
                errorLog: (try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? "")
            epoch.add(content, generation: generation, writerCount: settings.writerCount)
            if let loaded = content.arrivals["load"] {
                startupEstimate = 0.7 * startupEstimate + 0.3 * (loaded - child.startedAt)
            }
            upgradeEstimate = Statistics.percentile(tally.upgradeSeconds, 0.5) ?? upgradeEstimate
            if let seconds = content.copySeconds { copySeconds.append(seconds) }
            copyEstimate = Statistics.percentile(copySeconds, 0.5) ?? copyEstimate

            // The file as an app restarting after the crash finds it: checked on a copy, so that
            // the next child opens the original as the kill left it and recovers it itself.
            progress.update("kill \(generation)/\(settings.kills): checking the file")
            try DatabaseFiles.copyAsLeft(from: path, to: checkedCopy)
            let inspection = try DatabaseInspection.inspect(path: checkedCopy)
            let step = tally.recordInspection(
                inspection, expected: expected, content: content, epoch: epoch, seedRows: settings.rows,
                generation: generation)
            if let step, step < UpgradePlan.identifiers.count, inspection.isIntact {
                epoch.stepAtStart = step
            } else {
                // Past the upgrade (or broken): later kills start from the seeded file again.
                try DatabaseFiles.copy(from: seeded, to: path)
                epoch = CrashEpoch()
                tally.resets += 1
            }
        }
        return tally.report(settings: settings, populateSeconds: populateSeconds)
    }
}

/// What the crash scenario knows about its file since the file was last reset to the seeded
/// copy: every write acknowledged since, the one write per writer that may have been in flight
/// at its kill, and the step the next child starts from.
struct CrashEpoch {
    private(set) var acknowledgements: [Acknowledgement] = []
    /// For each writer of the children since the reset: the sequence number after the last one
    /// it reported, which its kill may have caught committed but unacknowledged.
    private(set) var allowedInFlight: [Int: Int] = [:]
    var stepAtStart = 1

    /// Adds what a killed child reported.
    mutating func add(_ content: ChildTranscript.Content, generation: Int, writerCount: Int) {
        acknowledgements += content.acknowledgements
        for index in 0..<writerCount {
            let author = WriteOperation.author(generation: generation, index: index)
            allowedInFlight[author] = (content.lastReportedSeq[author] ?? 0) + 1
        }
    }
}
