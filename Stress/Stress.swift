import Foundation
import HarnessSupport
import ToolArguments

/// The stress harness: runs SerialDB's schema upgrade under concurrent writes, under SIGKILL and
/// under injected I/O faults, and checks that every acknowledged write survives exactly once.
/// `stress --help` lists the scenarios and flags.
@main
struct Stress {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        switch arguments.first {
        case CrashChild.subcommand: exit(CrashChild.run(Array(arguments.dropFirst())))
        case SyncServerChild.subcommand: exit(SyncServerChild.run(Array(arguments.dropFirst())))
        case SyncChild.subcommand: exit(SyncChild.run(Array(arguments.dropFirst())))
        default: break
        }
        let options = ToolArguments.parse(tool: "stress", arguments, usage: StressOptions.usage) { reader in
            try StressOptions.parse(&reader)
        }
        if options.scenarios.contains(.sync), let url = options.postgresURL {
            do {
                // A store this build cannot open is a bad command line, refused before anything runs.
                try SyncStoreLocation.postgres(url).open().close()
            } catch let error as UsageError {
                ToolArguments.exitForUsage(tool: "stress", error)
            } catch {
                Console.error("stress: the sync server's store cannot be opened: \(error)")
                exit(1)
            }
        }
        let rerun = (["stress"] + arguments + (options.seedWasGiven ? [] : ["--seed", "\(options.seed)"]))
            .joined(separator: " ")
        Console.line("SerialDB stress harness, seed \(options.seed) (rerun: \(rerun))")

        var reports: [ScenarioReport] = []
        for scenario in options.scenarios {
            let clock = RunClock()
            var report = run(scenario, options.settings(for: scenario))
            report.metrics.durationMs = Statistics.rounded(clock.now * 1000)
            printSummary(report)
            reports.append(report)
        }
        let passed = reports.allSatisfy(\.ok)
        var outputsWritten = true
        if let path = options.jsonPath {
            outputsWritten = write("JSON report", to: path) {
                try RunRecord(
                    seed: options.seed, quick: options.quick, arguments: arguments, ok: passed, scenarios: reports
                )
                .write(to: path)
            }
        }
        if let path = options.svgPath, let chart = reports.compactMap(\.chart).first {
            outputsWritten =
                write("latency chart", to: path) {
                    try Data(chart.render().utf8).write(to: URL(fileURLWithPath: path))
                } && outputsWritten
        }
        Console.line()
        Console.line(passed ? "PASS: every invariant holds (seed \(options.seed))" : "FAIL (seed \(options.seed))")
        exit(passed && outputsWritten ? 0 : 1)
    }

    /// Runs one scenario; a scenario that cannot finish is a failed invariant, not a crash, so
    /// that the summary and the JSON report still come out.
    private static func run(_ scenario: ScenarioName, _ settings: ScenarioSettings) -> ScenarioReport {
        do {
            switch scenario {
            case .migrateUnderLoad: return try MigrateUnderLoadScenario(settings: settings).run()
            case .crash: return try CrashScenario(settings: settings).run()
            case .faults: return try FaultScenario(settings: settings).run()
            case .sync: return try SyncScenario(settings: settings).run()
            }
        } catch {
            var report = ScenarioReport(scenario: scenario)
            report.check("the scenario ran to the end", false, "\(error)")
            return report
        }
    }

    private static func printSummary(_ report: ScenarioReport) {
        Console.line()
        let seconds = String(format: "%.1f s", report.metrics.durationMs / 1000)
        Console.line("\(report.scenario.rawValue): \(report.ok ? "PASS" : "FAIL") in \(seconds)")
        for figure in report.figures { Console.line("  " + figure) }
        for invariant in report.invariants {
            let detail = invariant.detail.isEmpty ? "" : " (\(invariant.detail))"
            Console.line("  \(invariant.passed ? "PASS" : "FAIL")  \(invariant.name)\(detail)")
        }
    }

    private static func write(_ what: String, to path: String, _ body: () throws -> Void) -> Bool {
        do {
            try body()
            Console.line("\(what) written to \(path)")
            return true
        } catch {
            Console.error("stress: cannot write the \(what) to \(path): \(error)")
            return false
        }
    }
}
