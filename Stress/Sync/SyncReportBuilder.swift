/// The sync scenario's report: figures, invariants and the latency chart.
struct SyncReportBuilder {
    let settings: ScenarioSettings
    let accounts: Int
    let timeline: SyncTimeline.Content
    let check: SyncCheck
    let final: FinalSyncs
    let loadSeconds: Double

    func report() -> ScenarioReport {
        var report = ScenarioReport(scenario: .sync)
        let latencies = timeline.syncs.map(\.latencyMs)
        let metrics = SyncMetrics(
            p50: Statistics.percentile(latencies, 0.5).map(Statistics.rounded),
            p99: Statistics.percentile(latencies, 0.99).map(Statistics.rounded))
        report.metrics.writesAcknowledged = check.writes
        report.metrics.lost = check.lost
        report.metrics.duplicated = check.duplicated
        report.metrics.unexpected = check.unexpected
        report.metrics.errors = timeline.errors
        report.metrics.loadMs = Statistics.rounded(loadSeconds * 1000)
        report.metrics.devices = settings.devices
        report.metrics.accounts = accounts
        report.metrics.diverged = check.diverged
        report.metrics.leaked = check.leaked
        report.metrics.cursorMismatches = check.cursorMismatches
        report.metrics.overwritten = check.overwritten
        report.metrics.conflicts = check.conflicts
        report.metrics.rejected = timeline.rejected
        report.metrics.kills = timeline.childKills.count
        report.metrics.killsMidSync = timeline.killsMidSync
        report.metrics.serverRestarts = timeline.serverKills.count
        report.metrics.syncRounds = timeline.syncs.count
        report.metrics.syncsFailed = timeline.failedSyncs
        report.metrics.finalSyncRounds = final.rounds
        report.metrics.syncLatencyP50Ms = metrics.p50
        report.metrics.syncLatencyP99Ms = metrics.p99

        let inChildren = timeline.syncs.filter(\.inChild).count
        report.figures += [
            "\(settings.devices) devices over \(accounts) accounts for "
                + String(format: "%.1f s", loadSeconds) + ", then 2 more per account in a fixed exchange"
                + (settings.syncBreak.map { "; broken: \($0.rawValue)" } ?? ""),
            "\(check.writes) local changes, \(check.conflicts) conflicts reported, \(timeline.rejected) rejected",
            "\(timeline.syncs.count) syncs completed (\(inChildren) in child processes), \(timeline.failedSyncs) failed "
                + "while the server was down; \(timeline.childKills.count) sync children killed with SIGKILL "
                + "(\(timeline.killsMidSync) before their sync finished); "
                + "server killed and restarted \(timeline.serverKills.count) times",
            "sync latency p50 \(metrics.p50.map { "\($0) ms" } ?? "-"), p99 \(metrics.p99.map { "\($0) ms" } ?? "-"); "
                + "final quiet syncs: \(final.rounds) rounds",
        ]
        report.figures += timeline.errorMessages.map { "error: \($0)" }
        report.figures += final.lastErrors.prefix(3).map { "final sync error: \($0)" }
        report.figures += check.examples.map { "problem: \($0)" }

        report.check(
            "the final syncs settle: a round of every device moved nothing", final.settled,
            "\(final.rounds) rounds" + (final.lastErrors.isEmpty ? "" : ", \(final.lastErrors.count) errors"))
        report.check(
            "every device holds exactly its account's rows on the server", check.diverged == 0,
            "\(check.diverged) rows diverged")
        report.check(
            "every local change is on the server or was reported as a conflict", check.lost == 0, "\(check.lost) lost")
        report.check("no row reaches another account", check.leaked == 0, "\(check.leaked) leaked")
        report.check("no change is stored twice", check.duplicated == 0, "\(check.duplicated) duplicated")
        report.check(
            "no row the server never had, no deleted row brought back", check.unexpected == 0,
            "\(check.unexpected) unexpected")
        report.check(
            "no stale update silently overwrote a newer change", check.overwritten == 0,
            "\(check.overwritten) overwritten")
        report.check(
            "every TableVersion cursor equals the server's version", check.cursorMismatches == 0,
            "\(check.cursorMismatches) devices differ")
        report.check("no upload was rejected", timeline.rejected == 0, "\(timeline.rejected) rejected")
        report.check(
            "no write or sync failed unless the server was down, and the server always restarted", timeline.errors == 0,
            "\(timeline.errors) errors")

        var markers = timeline.serverKills.map {
            LatencyChart.Marker(time: $0, label: "server killed, restarted", color: "#d1495b")
        }
        markers += timeline.childKills.map {
            LatencyChart.Marker(time: $0, label: "sync child killed", color: "#9a9a9a")
        }
        report.chart = LatencyChart(
            title: "SerialDB sync latency: \(settings.devices) devices, \(accounts) accounts, "
                + "server restarts and killed syncs (seed \(settings.seed))",
            points: timeline.syncs.map {
                LatencyChart.Point(time: $0.time, latencyMs: $0.latencyMs, heldByUpgrade: $0.inChild)
            },
            markers: markers, measure: "sync", highlightLabel: "sync in a child process")
        return report
    }

    private struct SyncMetrics {
        let p50: Double?
        let p99: Double?
    }
}
