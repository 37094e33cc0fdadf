import Foundation
import HarnessSupport
import SerialDBSync

/// One device's random life during the load: local writes, syncs (some in a child process that
/// is killed in the middle), offline spells. Every choice comes from the seed's stream for this
/// device; what the choices meet (which rows exist, whether the server is up) depends on timing.
struct DeviceLoad: Sendable {
    let device: SyncDevice
    let seed: UInt64
    let index: Int
    let server: SyncServerProcess
    let executable: URL
    let timeline: SyncTimeline
    let clock: RunClock

    /// Acts until `end` on the run's clock, at least `minimumActions` times, and until
    /// `minimumSyncs` syncs completed (for a minute more at most): a starved machine makes a
    /// slower run, not one too short to find anything.
    func run(until end: Double, minimumActions: Int, minimumSyncs: Int) {
        var random = SeededRandom(seed: seed, stream: 0x5_9000 + UInt64(index))
        var offlineUntil = 0.0
        var actions = 0
        var synced = 0
        while clock.now < end || actions < minimumActions || (synced < minimumSyncs && clock.now < end + 60) {
            actions += 1
            let roll = Double.random(in: 0..<1, using: &random)
            if roll < 0.55 {
                do {
                    try device.writeRandomly(using: &random)
                } catch {
                    timeline.error("\(device.name): a local write failed: \(error)")
                }
            } else if roll < 0.85 {
                let inChild = Double.random(in: 0..<1, using: &random) < 0.25
                let killAfter =
                    Double.random(in: 0..<1, using: &random) < 0.7 ? Double.random(in: 0..<0.08, using: &random) : nil
                if clock.now >= offlineUntil, sync(inChild: inChild, killAfter: killAfter) {
                    synced += 1
                }
            } else if roll < 0.88 {
                offlineUntil = clock.now + Double.random(in: 0.2..<1.0, using: &random)
            }
            Thread.sleep(forTimeInterval: Double.random(in: 0.002..<0.02, using: &random))
        }
    }

    /// Syncs once; returns whether the sync completed.
    private func sync(inChild: Bool, killAfter: Double?) -> Bool {
        let start = clock.now
        if inChild {
            guard let url = server.url else {
                timeline.syncFailed()
                return false
            }
            do {
                let outcome = try SyncChildRun.run(device, url: url, executable: executable, killAfter: killAfter)
                if outcome.killed { timeline.childKilled(at: clock.now, midSync: !outcome.synced) }
                if outcome.synced {
                    timeline.synced(at: start, seconds: clock.now - start, inChild: true)
                } else if !outcome.killed {
                    timeline.syncFailed()
                }
                if let failure = outcome.failure {
                    timeline.error("\(device.name): a sync in a child process \(failure)")
                }
                return outcome.synced
            } catch {
                timeline.error("\(device.name): cannot run a sync child: \(error)")
                return false
            }
        } else {
            switch device.sync() {
            case .success(let report):
                timeline.synced(at: start, seconds: clock.now - start, inChild: false)
                timeline.rejected(report.rejected.count)
                return true
            case .failure(let error):
                // The server was down or killed mid-request: expected here, and the final syncs
                // must then settle everything. Any other failure is a finding.
                timeline.syncFailed()
                if !(SyncError.Code.network ~= error) {
                    timeline.error("\(device.name): a sync failed: \(error)")
                }
                return false
            }
        }
    }
}
