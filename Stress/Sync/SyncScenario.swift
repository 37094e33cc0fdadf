import Foundation
import HarnessSupport
import SerialDBSyncServer

/// Devices over three accounts write, go offline and sync at random against one sync server
/// in a child process; some syncs run in child processes killed in the middle; the server is
/// killed and restarted at random moments. Then two new devices join each account and play a
/// fixed exchange (``SyncExchange``), so that a broken server is caught whatever the timing
/// did. After a final quiet round of syncs, every device must hold exactly its account's rows
/// on the server, and nothing may be lost, leaked, duplicated or brought back (see
/// ``SyncCheck``).
struct SyncScenario {
    let settings: ScenarioSettings

    /// Account ids: a name and this run's id, so that a store that outlives the run (a
    /// PostgreSQL database) never mixes the rows of two runs. The seed's choices do not
    /// depend on them.
    let accounts: [String] = {
        let run = UUID().uuidString.prefix(8).lowercased()
        return ["alice", "bob", "carol"].map { "\($0)-\(run)" }
    }()
    /// The final syncs go round the devices until a round moves nothing; more rounds than this
    /// means they do not settle.
    static let maximumFinalRounds = 20
    /// Each device acts at least this often, however long it takes.
    static let minimumActions = 60
    /// And completes at least this many syncs (unless the server stays unreachable).
    static let minimumSyncs = 5

    func run() throws -> ScenarioReport {
        let directory = try ScratchDirectory(prefix: "serialdb-stress-sync")
        let progress = ProgressLine(label: "sync")
        progress.start()
        defer { progress.stop() }
        let store = settings.postgresURL.map(SyncStoreLocation.postgres) ?? .file(directory.path("server.sqlite"))
        let configPath = directory.path("sync.json")
        try writeConfiguration(to: configPath)
        let auditPath = directory.path("audit.log")
        let executable = try CrashChildProcess.executable()
        let server = SyncServerProcess(
            executable: executable,
            arguments: SyncServerChild.arguments(
                config: configPath, store: store, audit: auditPath, syncBreak: settings.syncBreak),
            directory: directory)
        try server.start()
        defer { server.kill() }

        progress.update("opening \(settings.devices) devices")
        let devices = try (0..<settings.devices).map { index in
            let account = accounts[index % accounts.count]
            return try SyncDevice(
                name: "d\(index)", account: account, token: "t-\(account)",
                directory: directory.url.appendingPathComponent("device-\(index)"), server: server,
                skipsOutbox: settings.syncBreak == .skipOutbox && index == 0)
        }
        // The first sync creates the table on each device.
        for device in devices {
            if case .failure(let error) = device.sync() {
                throw StressError("the first sync of \(device.name) failed: \(error)")
            }
        }

        let clock = RunClock()
        let timeline = SyncTimeline()
        let end = settings.duration
        progress.update("load: \(settings.devices) devices, server restarts")
        var threads: [Thread] = []
        let finished = DispatchSemaphore(value: 0)
        let devicesRunning = Locked(devices.count)
        for (index, device) in devices.enumerated() {
            let load = DeviceLoad(
                device: device, seed: settings.seed, index: index, server: server, executable: executable,
                timeline: timeline, clock: clock)
            threads.append(
                Thread {
                    load.run(until: end, minimumActions: Self.minimumActions, minimumSyncs: Self.minimumSyncs)
                    devicesRunning.withLock { $0 -= 1 }
                    finished.signal()
                })
        }
        let chaos = ServerChaos(server: server, seed: settings.seed, timeline: timeline, clock: clock)
        threads.append(
            Thread {
                chaos.run(meanInterval: max(0.25, settings.duration / 8)) { devicesRunning.withLock { $0 > 0 } }
                finished.signal()
            })
        for thread in threads { thread.start() }
        for _ in threads { finished.wait() }
        let loadSeconds = clock.now
        if server.url == nil {
            do { try server.start() } catch {
                timeline.error("the server did not restart for the final syncs: \(error)")
            }
        }

        progress.update("devices joining after the load")
        let joined = try joinDevices(numberedFrom: devices.count, directory: directory, server: server)
        for (index, account) in accounts.enumerated() {
            let exchange = SyncExchange(first: joined[2 * index], second: joined[2 * index + 1], timeline: timeline)
            do { try exchange.run() } catch { timeline.error("the fixed exchange of \(account): \(error)") }
        }

        progress.update("final syncs")
        let final = finalSyncs(devices + joined, timeline: timeline)

        // The server's rows are read through the store itself, after the server stopped: the
        // same function opens it (so any store works, PostgreSQL included), fetches every
        // change from 0 for each account (live rows and tombstones) and the versions a
        // check-update would hand out. Reading after the stop means nothing changes meanwhile.
        progress.update("checking")
        server.kill()
        let serverState = try ServerState.read(from: store, accounts: accounts)
        let audit = try SyncAudit(path: auditPath)
        let snapshots = try (devices + joined).map { try $0.snapshot() }
        let check = SyncCheck(server: serverState, audit: audit, devices: snapshots)
        return SyncReportBuilder(
            settings: settings, accounts: accounts.count, timeline: timeline.snapshot, check: check, final: final,
            loadSeconds: loadSeconds
        ).report()
    }

    /// Two new devices for each account, in account order, for ``SyncExchange``: they join
    /// after the load, so what they do is not left to timing.
    private func joinDevices(numberedFrom first: Int, directory: ScratchDirectory, server: SyncServerProcess) throws
        -> [SyncDevice]
    {
        try accounts.indices.flatMap { accountIndex in
            try (0..<2).map { offset in
                let index = first + 2 * accountIndex + offset
                let account = accounts[accountIndex]
                return try SyncDevice(
                    name: "d\(index)", account: account, token: "t-\(account)",
                    directory: directory.url.appendingPathComponent("device-\(index)"), server: server,
                    skipsOutbox: false)
            }
        }
    }

    /// Every device syncs, round after round, until a round in which nothing moved.
    private func finalSyncs(_ devices: [SyncDevice], timeline: SyncTimeline) -> FinalSyncs {
        var final = FinalSyncs()
        while final.rounds < Self.maximumFinalRounds {
            final.rounds += 1
            var moved = false
            final.lastErrors = []
            for device in devices {
                switch device.sync() {
                case .success(let report):
                    timeline.rejected(report.rejected.count)
                    if report.uploaded + report.downloaded + report.conflicts.count + report.rejected.count > 0 {
                        moved = true
                    }
                case .failure(let error):
                    moved = true
                    final.lastErrors.append("\(device.name): \(error)")
                }
            }
            if !moved {
                final.settled = true
                break
            }
        }
        return final
    }

    private func writeConfiguration(to path: String) throws {
        let configuration: [String: Any] = [
            "tables": [
                ["name": SyncDevice.table, "scope": "account", "struct_version": 1, "schema": SyncDevice.schema]
            ],
            "tokens": accounts.map { ["token": "t-\($0)", "account": $0] },
        ]
        try JSONSerialization.data(withJSONObject: configuration).write(to: URL(fileURLWithPath: path))
    }
}

/// How the final quiet syncs went.
struct FinalSyncs: Sendable {
    var rounds = 0
    /// A round moved nothing.
    var settled = false
    /// The errors of the last round.
    var lastErrors: [String] = []
}
