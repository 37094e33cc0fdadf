import Testing

@testable import SerialDB

/// The gate's decisions on their own, as the reader pool (tickets) and the serializer (after
/// every finished upgrade) ask for them.
@Suite struct UpgradeGateTests {
    private let closed = SerialDBError(.closed, "test gate closed")

    private func failure(_ step: String) -> SerialDBError {
        SerialDBError(.migrationFailed, "step \(step) failed")
    }

    /// The decision, spelled so that `#expect` shows it.
    private func said(_ gate: UpgradeGate, _ ticket: UpgradeGate.Ticket) -> String {
        switch gate.decision(for: ticket) {
        case .run: return "run"
        case .wait: return "wait"
        case .refused: return "refused: \(gate.refusal.message)"
        }
    }

    private func refusal(_ gate: UpgradeGate) -> String? {
        gate.refusesWorkAfterEveryFinishedUpgrade ? gate.refusal.message : nil
    }

    @Test func anOpenGateRunsEveryTicket() {
        var gate = UpgradeGate(closedError: closed)
        let first = gate.takeTicket()
        let second = gate.takeTicket()
        #expect(first < second)
        #expect(said(gate, first) == "run")
        #expect(said(gate, second) == "run")
        #expect(refusal(gate) == nil)
    }

    @Test func workSubmittedAfterAPendingUpgradeWaitsAndWorkSubmittedBeforeRuns() {
        var gate = UpgradeGate(closedError: closed)
        let before = gate.takeTicket()
        let upgrade = gate.upgradeSubmitted()
        let after = gate.takeTicket()
        #expect(said(gate, before) == "run")
        #expect(said(gate, after) == "wait")
        gate.upgradeFinished(upgrade, error: nil)
        #expect(said(gate, before) == "run")
        #expect(said(gate, after) == "run")
    }

    @Test func workAfterTwoPendingUpgradesWaitsForBoth() {
        var gate = UpgradeGate(closedError: closed)
        let first = gate.upgradeSubmitted()
        let between = gate.takeTicket()
        let second = gate.upgradeSubmitted()
        let after = gate.takeTicket()
        #expect(said(gate, between) == "wait")
        #expect(said(gate, after) == "wait")
        gate.upgradeFinished(first, error: nil)
        #expect(said(gate, between) == "run")
        #expect(said(gate, after) == "wait")
        gate.upgradeFinished(second, error: nil)
        #expect(said(gate, after) == "run")
    }

    @Test func aReadSubmittedBeforeAFailedUpgradeStillRunsAndALaterOneIsRefused() {
        var gate = UpgradeGate(closedError: closed)
        let before = gate.takeTicket()
        let upgrade = gate.upgradeSubmitted()
        let after = gate.takeTicket()
        gate.upgradeFinished(upgrade, error: failure("1"))
        #expect(said(gate, before) == "run")
        #expect(said(gate, after) == "refused: step 1 failed")
        #expect(refusal(gate) == "step 1 failed")
    }

    @Test func aFailedUpgradeFollowedByASuccessfulOneOpensTheGateAgain() {
        var gate = UpgradeGate(closedError: closed)
        let failed = gate.upgradeSubmitted()
        gate.upgradeFinished(failed, error: failure("1"))
        let refusedRead = gate.takeTicket()
        #expect(said(gate, refusedRead) == "refused: step 1 failed")
        let retry = gate.upgradeSubmitted()
        let afterRetry = gate.takeTicket()
        // Held by the retry, not refused by the failure: it may yet succeed.
        #expect(said(gate, afterRetry) == "wait")
        gate.upgradeFinished(retry, error: nil)
        #expect(said(gate, afterRetry) == "run")
        #expect(said(gate, refusedRead) == "run")
        #expect(refusal(gate) == nil)
    }

    @Test func aSecondFailureKeepsRefusingWhatTheFirstRefusedWithTheLatestError() {
        var gate = UpgradeGate(closedError: closed)
        let beforeBoth = gate.takeTicket()
        let first = gate.upgradeSubmitted()
        gate.upgradeFinished(first, error: failure("1"))
        let between = gate.takeTicket()
        #expect(said(gate, between) == "refused: step 1 failed")
        let second = gate.upgradeSubmitted()
        gate.upgradeFinished(second, error: failure("2"))
        let after = gate.takeTicket()
        // Submitted after the first failure, and no upgrade has succeeded since: still refused,
        // however late it asks (an async read takes its ticket before it reaches the gate).
        #expect(said(gate, between) == "refused: step 2 failed")
        #expect(said(gate, after) == "refused: step 2 failed")
        #expect(said(gate, beforeBoth) == "run")
        #expect(refusal(gate) == "step 2 failed")
    }

    @Test func anOlderUpgradeSucceedingAfterANewerOneFailedLeavesTheFailure() {
        var gate = UpgradeGate(closedError: closed)
        let older = gate.upgradeSubmitted()
        let newer = gate.upgradeSubmitted()
        let after = gate.takeTicket()
        gate.upgradeFinished(newer, error: failure("newer"))
        #expect(said(gate, after) == "wait")
        gate.upgradeFinished(older, error: nil)
        #expect(said(gate, after) == "refused: step newer failed")
        #expect(refusal(gate) == "step newer failed")
    }

    @Test func closingWhileAnUpgradeIsPendingRefusesEveryoneAndTheUpgradeCannotReopen() {
        var gate = UpgradeGate(closedError: closed)
        let before = gate.takeTicket()
        let upgrade = gate.upgradeSubmitted()
        let after = gate.takeTicket()
        gate.close()
        #expect(gate.isClosed)
        // Refused, not held: a read waiting for the upgrade must wake to the close.
        #expect(said(gate, after) == "refused: test gate closed")
        #expect(said(gate, before) == "refused: test gate closed")
        gate.upgradeFinished(upgrade, error: nil)
        #expect(said(gate, after) == "refused: test gate closed")
        #expect(refusal(gate) == "test gate closed")
        let retry = gate.upgradeSubmitted()
        gate.upgradeFinished(retry, error: failure("late"))
        #expect(refusal(gate) == "test gate closed")
        #expect(said(gate, gate.takeTicket()) == "refused: test gate closed")
    }

    @Test func theSerializersViewFollowsTheLastFinishedUpgrade() {
        var gate = UpgradeGate(closedError: closed)
        let first = gate.upgradeSubmitted()
        gate.upgradeFinished(first, error: failure("1"))
        #expect(refusal(gate) == "step 1 failed")
        let second = gate.upgradeSubmitted()
        gate.upgradeFinished(second, error: nil)
        #expect(refusal(gate) == nil)
        gate.close()
        #expect(refusal(gate) == "test gate closed")
    }
}
