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
        var startup = 0.0
        while true {
            let wait = Double.random(in: 0.5..<1.5, using: &random) * meanInterval
            let downtime = Double.random(in: 0..<0.3, using: &random)
            // Up at least four times as long as it took to start: a slow machine (or
            // ThreadSanitizer) must not keep the server down most of the time.
            Thread.sleep(forTimeInterval: max(wait, 4 * startup))
            guard devicesRun() || restarts == 0 else { return }
            restarts += 1
            server.kill()
            timeline.serverKilled(at: clock.now)
            Thread.sleep(forTimeInterval: downtime)
            let starting = clock.now
            do {
                try server.start()
                startup = clock.now - starting
            } catch {
                timeline.error("the server did not restart: \(error)")
                return
            }
        }
    }
}
