import Foundation
import HarnessSupport

/// When the crash scenario kills each child, drawn from the seed.
///
/// Each kill first gets a target phase: 10% during start-up (open, WAL recovery), 20% before
/// the upgrade, 50% during it, 20% after it, shuffled. Then the parent waits for the child's
/// line that opens that phase and kills it at a uniformly drawn point of the phase's expected
/// length (the upgrade's is learned from the children that finished it). Following the child's
/// own lines instead of a clock started at spawn is what makes kills land inside an upgrade of a
/// few milliseconds.
struct KillPlan {
    enum Target: Sendable {
        case startup
        case beforeUpgrade
        case duringUpgrade
        /// `--online`: during `prepareMigration`'s copy.
        case duringCopy
        case afterUpgrade
    }

    private(set) var targets: [Target]
    private var random: SeededRandom

    init(kills: Int, seed: UInt64, online: Bool = false) {
        random = SeededRandom(seed: seed, stream: 0xC7A5)
        let startup = kills / 10
        let before = kills / 5
        let after = kills / 5
        let during = kills - startup - before - after
        targets =
            Array(repeating: Target.startup, count: startup)
            + Array(repeating: .beforeUpgrade, count: before)
            + Array(repeating: .duringUpgrade, count: online ? during / 2 : during)
            + Array(repeating: .duringCopy, count: online ? during - during / 2 : 0)
            + Array(repeating: .afterUpgrade, count: after)
        targets.shuffle(using: &random)
    }

    /// The next point in its phase, in 0..<1.
    mutating func nextFraction() -> Double {
        Double.random(in: 0..<1, using: &random)
    }

    /// Waits until the moment to kill `child` for `target`. Returns at once when the child's
    /// output ended before the phase began (it died by itself; the caller sees it).
    static func wait(
        for target: Target, fraction: Double, child: CrashChildProcess, warmup: Double, upgrade: Double,
        startup: Double, copy: Double = 0, clock: RunClock
    ) {
        let transcript = child.transcript
        let phaseStart: Double?
        let length: Double
        switch target {
        case .startup:
            phaseStart = child.startedAt
            length = startup
        case .beforeUpgrade:
            phaseStart = transcript.waitForPhase("load", timeout: 60)
            length = warmup
        case .duringUpgrade:
            phaseStart = transcript.waitForPhase("migrating", timeout: 60)
            length = upgrade
        case .duringCopy:
            phaseStart = transcript.waitForPhase("copying", timeout: 60)
            length = copy
        case .afterUpgrade:
            phaseStart = transcript.waitForPhase("migrated", timeout: 60)
            length = max(0.05, upgrade / 2)
        }
        guard let phaseStart else { return }
        Thread.sleep(forTimeInterval: max(0, phaseStart + fraction * length - clock.now))
    }
}
