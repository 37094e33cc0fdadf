import Foundation
import SerialDBTestSupport
import Testing

/// A broken sync server must fail `stress sync` whatever the timing did. The random load only
/// damages rows when two devices of one account happen to meet in the way the break needs
/// (one deletes a row the other holds, both update one row between syncs, one fetches another's
/// changes before their writer does), which a loaded machine can make rare enough to miss: the
/// run then passes with its break unnoticed. With one device per account the load can never
/// meet that way, so only the fixed exchange between two devices that join every account after
/// the load can catch the break, and it must, every time.
@Suite(.serialized, .timeLimit(.minutes(10))) struct SyncStressExchangeTests {
    /// One device per account: the random load alone cannot expose a broken server.
    private static let loneDevices = ["sync", "--devices", "3", "--duration", "1", "--seed", "20261130"]

    @Test func aServerThatForgetsTombstonesIsCaughtWhenNoTwoLoadDevicesShareAnAccount() async throws {
        let run = try await SyncStressRun(Self.loneDevices + ["--break", "forget-tombstones"])
        #expect(run.status == 1, "\(run.output)")
        let scenario = try #require(run.scenario, "\(run.output)")
        #expect((scenario["diverged"] as? Int ?? 0) > 0, "\(run.output)")
        #expect((scenario["unexpected"] as? Int ?? 0) > 0, "\(run.output)")
    }

    @Test func aServerThatHandsOutCursorsOutOfCommitOrderIsCaughtWhenNoTwoLoadDevicesShareAnAccount() async throws {
        let run = try await SyncStressRun(Self.loneDevices + ["--break", "cursor-order"])
        #expect(run.status == 1, "\(run.output)")
        let scenario = try #require(run.scenario, "\(run.output)")
        #expect((scenario["diverged"] as? Int ?? 0) > 0, "\(run.output)")
    }

    @Test func aServerThatLetsTheLastWriterWinIsCaughtWhenNoTwoLoadDevicesShareAnAccount() async throws {
        let run = try await SyncStressRun(Self.loneDevices + ["--break", "last-writer-wins"])
        #expect(run.status == 1, "\(run.output)")
        let scenario = try #require(run.scenario, "\(run.output)")
        #expect((scenario["overwritten"] as? Int ?? 0) > 0, "\(run.output)")
    }

    @Test func aPlainRunWithTheExchangeStillConvergesWithNothingLost() async throws {
        let run = try await SyncStressRun(Self.loneDevices)
        #expect(run.status == 0, "\(run.output)")
        let scenario = try #require(run.scenario, "\(run.output)")
        #expect(scenario["ok"] as? Bool == true)
        for invariant in SyncStressRun.invariants {
            #expect(scenario[invariant] as? Int == 0, "\(invariant): \(run.output)")
        }
    }
}
