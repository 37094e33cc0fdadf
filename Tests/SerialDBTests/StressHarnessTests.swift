import Foundation
import SerialDBTestSupport
import Testing

/// The stress harness proves something only if it can fail: the real `stress` executable, run
/// with a tiny profile, passes; the same run with a deliberately broken writer fails, and its
/// JSON report names the problem.
@Suite(.serialized) struct StressHarnessTests {
    /// Seconds, not minutes: a small table, few writers, a short load.
    private static let tinyProfile = [
        "--rows", "2000", "--writers", "2", "--tasks", "1", "--duration", "0.4", "--seed", "20240601",
    ]

    @Test func aNormalRunExitsZeroWithNoLostOrDuplicatedWrite() async throws {
        let run = try await StressRun(["migrate-under-load"] + Self.tinyProfile)
        #expect(run.status == 0, "\(run.output)")
        let scenario = try #require(run.scenarios.first, "\(run.output)")
        #expect(scenario["ok"] as? Bool == true)
        #expect(scenario["lost"] as? Int == 0)
        #expect(scenario["duplicated"] as? Int == 0)
        #expect(scenario["unexpected"] as? Int == 0)
        #expect((scenario["writes_acknowledged"] as? Int ?? 0) > 0)
        #expect((scenario["writes_blocked_by_upgrade"] as? Int ?? 0) > 0)
    }

    @Test func aPoolRunReadsBesideTheWritesAndEveryReadSeesACommittedSchema() async throws {
        let run = try await StressRun(["migrate-under-load", "--pool"] + Self.tinyProfile)
        #expect(run.status == 0, "\(run.output)")
        let scenario = try #require(run.scenarios.first, "\(run.output)")
        #expect(scenario["ok"] as? Bool == true)
        #expect(scenario["lost"] as? Int == 0)
        #expect((scenario["pool_reads"] as? Int ?? 0) > 0)
        #expect(scenario["reads_inconsistent"] as? Int == 0)
        #expect(scenario["reads_saw_old_schema"] as? Int == 0)
    }

    @Test func anOnlineRunSwapsInTheCopyItPreparedWithNothingLost() async throws {
        let run = try await StressRun(["migrate-under-load", "--online"] + Self.tinyProfile)
        #expect(run.status == 0, "\(run.output)")
        let scenario = try #require(run.scenarios.first, "\(run.output)")
        #expect(scenario["ok"] as? Bool == true)
        #expect(scenario["lost"] as? Int == 0)
        #expect(scenario["duplicated"] as? Int == 0)
        let invariants = scenario["invariants"] as? [[String: Any]] ?? []
        let swapped = invariants.first {
            $0["name"] as? String == "the upgrade swapped in the prepared copy, found exact"
        }
        #expect(swapped?["passed"] as? Bool == true, "\(invariants)")
        #expect(scenario["copy_ms"] is Double && scenario["swap_ms"] is Double, "\(scenario)")
    }

    @Test func aWriterThatAcknowledgesRolledBackWritesFailsTheRunWithLostWrites() async throws {
        let run = try await StressRun(["migrate-under-load"] + Self.tinyProfile + ["--broken-writer", "skip-commit"])
        #expect(run.status != 0, "\(run.output)")
        let scenario = try #require(run.scenarios.first, "\(run.output)")
        #expect(scenario["ok"] as? Bool == false)
        #expect((scenario["lost"] as? Int ?? 0) > 0)
    }

    @Test func aWriterThatInsertsTwiceFailsTheRunWithDuplicates() async throws {
        let run = try await StressRun(["migrate-under-load"] + Self.tinyProfile + ["--broken-writer", "duplicate"])
        #expect(run.status != 0, "\(run.output)")
        let scenario = try #require(run.scenarios.first, "\(run.output)")
        #expect((scenario["duplicated"] as? Int ?? 0) > 0)
    }

    @Test func aWriterThatHidesCommittedWritesFailsTheRunWithUnexpectedWrites() async throws {
        let run = try await StressRun(["migrate-under-load"] + Self.tinyProfile + ["--broken-writer", "forget-ack"])
        #expect(run.status != 0, "\(run.output)")
        let scenario = try #require(run.scenarios.first, "\(run.output)")
        #expect((scenario["unexpected"] as? Int ?? 0) > 0)
    }

    @Test func tinyCrashAndFaultRunsPass() async throws {
        let run = try await StressRun(["crash", "--kills", "4"] + Self.tinyProfile)
        #expect(run.status == 0, "\(run.output)")
        let crash = try #require(run.scenarios.first, "\(run.output)")
        #expect(crash["kills"] as? Int == 4)
        #expect(crash["lost"] as? Int == 0)
        #expect(crash["integrity_failures"] as? Int == 0)

        let faults = try await StressRun(["faults", "--max-faults", "4"] + Self.tinyProfile)
        #expect(faults.status == 0, "\(faults.output)")
        let scenario = try #require(faults.scenarios.first, "\(faults.output)")
        #expect((scenario["faults_injected"] as? Int ?? 0) > 0)
        #expect(scenario["lost"] as? Int == 0)
    }

    @Test func theCrashScenarioCatchesLostWritesToo() async throws {
        let run = try await StressRun(["crash", "--kills", "3", "--broken-writer", "skip-commit"] + Self.tinyProfile)
        #expect(run.status != 0, "\(run.output)")
        let scenario = try #require(run.scenarios.first, "\(run.output)")
        #expect((scenario["lost"] as? Int ?? 0) > 0)
    }

    @Test func aBadFlagIsRefusedPointingToHelp() async throws {
        let run = try await StressRun(["--rows", "many"])
        #expect(run.status == 2)
        #expect(run.output.contains("--rows needs a whole number"))
        #expect(run.output.contains("Run `stress --help` for the usage."))
    }
}

/// One run of the built `stress` executable and its JSON report.
private struct StressRun {
    let status: Int32
    /// Standard output, then standard error.
    let output: String
    /// The report's scenario records (empty when no report was written).
    let scenarios: [[String: Any]]

    init(_ arguments: [String]) async throws {
        let directory = try TemporaryDirectory()
        let report = directory.path("report.json")
        let run = try await ToolRun("stress", arguments + ["--json", report], seconds: 600)
        status = run.status
        output = run.output + run.errors
        if let data = FileManager.default.contents(atPath: report),
            let root = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        {
            scenarios = root["scenarios"] as? [[String: Any]] ?? []
        } else {
            scenarios = []
        }
    }
}
