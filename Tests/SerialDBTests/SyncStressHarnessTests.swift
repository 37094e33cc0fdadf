import Foundation
import PostgresHarness
import SerialDBTestSupport
import Testing

/// `stress sync` proves something only if it can fail: a plain run converges through killed
/// syncs and server restarts, and each broken client or server (`--break`, built into the
/// harness, never the library) makes the run fail with the count that names its damage.
@Suite(.serialized, .timeLimit(.minutes(10))) struct SyncStressHarnessTests {
    /// Seconds, not minutes: two devices per account (so that one can miss what another did),
    /// two seconds of load.
    private static let smallProfile = ["sync", "--devices", "6", "--duration", "2", "--seed", "20261130"]

    @Test func aQuickSyncRunConvergesWithNothingLostThroughKilledSyncsAndServerRestarts() async throws {
        let run = try await SyncStressRun(["sync", "--quick", "--seed", "20261130"])
        #expect(run.status == 0, "\(run.output)")
        let scenario = try #require(run.scenario, "\(run.output)")
        #expect(scenario["scenario"] as? String == "sync")
        #expect(scenario["ok"] as? Bool == true)
        for invariant in SyncStressRun.invariants {
            #expect(scenario[invariant] as? Int == 0, "\(invariant): \(run.output)")
        }
        #expect((scenario["writes_acknowledged"] as? Int ?? 0) > 0)
        #expect((scenario["sync_rounds"] as? Int ?? 0) > 0)
        #expect((scenario["kills"] as? Int ?? 0) > 0)
        #expect((scenario["server_restarts"] as? Int ?? 0) > 0)
        #expect(scenario["sync_latency_p50_ms"] is Double)
        #expect(scenario["sync_latency_p99_ms"] is Double)
    }

    @Test func aClientThatSkipsTheOutboxFailsTheRunWithLostChanges() async throws {
        let run = try await SyncStressRun(Self.smallProfile + ["--break", "skip-outbox"])
        #expect(run.status == 1, "\(run.output)")
        let scenario = try #require(run.scenario, "\(run.output)")
        #expect(scenario["ok"] as? Bool == false)
        #expect((scenario["lost"] as? Int ?? 0) > 0, "\(run.output)")
    }

    @Test func aServerThatForgetsTombstonesFailsTheRunWithDeletedRowsBroughtBack() async throws {
        let run = try await SyncStressRun(Self.smallProfile + ["--break", "forget-tombstones"])
        #expect(run.status == 1, "\(run.output)")
        let scenario = try #require(run.scenario, "\(run.output)")
        #expect((scenario["diverged"] as? Int ?? 0) > 0, "\(run.output)")
        #expect((scenario["unexpected"] as? Int ?? 0) > 0, "\(run.output)")
    }

    @Test func aServerThatHandsOutCursorsOutOfCommitOrderFailsTheRunWithDivergedDevices() async throws {
        let run = try await SyncStressRun(Self.smallProfile + ["--break", "cursor-order"])
        #expect(run.status == 1, "\(run.output)")
        let scenario = try #require(run.scenario, "\(run.output)")
        #expect((scenario["diverged"] as? Int ?? 0) > 0, "\(run.output)")
    }

    @Test func aServerThatLetsTheLastWriterWinFailsTheRunWithSilentlyOverwrittenChanges() async throws {
        // An overwrite needs two devices of an account updating one row between their syncs:
        // the fixed exchange after the load makes one per account, and four devices per
        // account for a second more make several more at random (5 to 21 in runs on a loaded
        // machine and under ThreadSanitizer).
        let run = try await SyncStressRun(
            ["sync", "--devices", "12", "--duration", "3", "--seed", "20261130", "--break", "last-writer-wins"])
        #expect(run.status == 1, "\(run.output)")
        let scenario = try #require(run.scenario, "\(run.output)")
        #expect((scenario["overwritten"] as? Int ?? 0) > 0, "\(run.output)")
    }

    @Test func aQuickSyncRunOnPostgreSQLConvergesToo() async throws {
        let url: String
        switch ScratchPostgres.server {
        case .success: url = try ScratchPostgres.makeDatabase()
        case .failure(let error):
            if ScratchPostgres.isCI { throw error }
            print("SyncStressHarnessTests: the PostgreSQL run is skipped: \(error.message)")
            try Test.cancel("skipped: \(error.message)")
        }
        let run = try await SyncStressRun(["sync", "--quick", "--seed", "20261130", "--postgres", url])
        #expect(run.status == 0, "\(run.output)")
        let scenario = try #require(run.scenario, "\(run.output)")
        #expect(scenario["ok"] as? Bool == true)
        for invariant in SyncStressRun.invariants {
            #expect(scenario[invariant] as? Int == 0, "\(invariant): \(run.output)")
        }
        #expect((scenario["server_restarts"] as? Int ?? 0) > 0)
    }

    @Test func aPostgreSQLThatCannotBeReachedFailsTheRunWithOneClearLine() async throws {
        // Port 1 on loopback: nothing listens there, so libpq is refused at once.
        let run = try await ToolRun("stress", ["sync", "--quick", "--postgres", "postgresql://127.0.0.1:1/serialdb"])
        #expect(run.status != 0)
        #expect(run.errors.contains("PostgreSQL"), "\(run.errors)")
    }
}
