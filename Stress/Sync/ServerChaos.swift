import Foundation
import HarnessSupport

/// Kills the sync server with SIGKILL at random moments while the devices run (at least once)
/// and starts it again after a short random downtime.
struct ServerChaos: Sendable {
    let server: SyncServerProcess
    let seed: UInt64
    let timeline: SyncTimeline
    let clock: RunClock

    func run(meanInterval: Double, while devicesRun: @Sendable () -> Bool) {
        var random = SeededRandom(seed: seed, stream: 0x5_E7E7)
        var restarts = 0
        while true {
            let wait = Double.random(in: 0.5..<1.5, using: &random) * meanInterval
            let downtime = Double.random(in: 0..<0.3, using: &random)
            Thread.sleep(forTimeInterval: wait)
            guard devicesRun() || restarts == 0 else { return }
            restarts += 1
            server.kill()
            timeline.serverKilled(at: clock.now)
            Thread.sleep(forTimeInterval: downtime)
            do {
                try server.start()
            } catch {
                timeline.error("the server did not restart: \(error)")
                return
            }
        }
    }
}
