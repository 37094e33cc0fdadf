import Foundation
import HarnessSupport

/// Kills the sync server with SIGKILL at random moments of the load and starts it again after
/// a short random downtime.
struct ServerChaos: Sendable {
    let server: SyncServerProcess
    let seed: UInt64
    let timeline: SyncTimeline
    let clock: RunClock

    func run(until end: Double, meanInterval: Double) {
        var random = SeededRandom(seed: seed, stream: 0x5_E7E7)
        while true {
            let wait = Double.random(in: 0.5..<1.5, using: &random) * meanInterval
            let downtime = Double.random(in: 0..<0.3, using: &random)
            guard clock.now + wait < end else { return }
            Thread.sleep(forTimeInterval: wait)
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
