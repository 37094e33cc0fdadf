import Foundation

/// The sync workloads' figures in rows per second, printed under the table: the SQLite store's
/// against issue 11's floors (on a 2-core machine: 20,000 rows/s uploaded, 50,000 rows/s
/// fetched); the PostgreSQL store's and the client's (upload from the outbox, download and
/// apply) as figures alone. Then the client's time over the server's for the same rows, paired
/// round by round, against the client's target (issue 27: within 1.5× of the server's own rate).
enum SyncFloors {
    static let floors = ["sync_post_10k": 20_000.0, "sync_fetch_10k": 50_000.0]

    /// Each client workload, the server workload it is judged against, and the target ratio.
    static let clientTargets = [
        (client: "sync_client_upload_10k", server: "sync_post_10k", target: 1.5),
        (client: "sync_client_download_10k", server: "sync_fetch_10k", target: 1.5),
    ]

    /// One line per sync workload that ran (empty when none did).
    static func render(_ results: [WorkloadResult]) -> String {
        var text = ""
        for result in results {
            let name = result.workload.name
            guard name.hasPrefix("sync_") else { continue }
            let synced = Double(result.workload.operations) / (result.serialDB.median / 1000)
            let local = Double(result.workload.operations) / (result.rawC.median / 1000)
            let side = name.hasPrefix("sync_client_") ? "sync client" : "sync server"
            text += "\(name): \(side) \(Int(synced)) rows/s, raw C locally \(Int(local)) rows/s, "
            if let floor = floors[name] {
                text += "floor \(Int(floor)) rows/s " + (synced >= floor ? "met" : "MISSED") + "\n"
            } else {
                text += "no floor set\n"
            }
        }
        return text + renderClientRatios(results)
    }

    /// One line per client workload that ran with its server workload: the median of the
    /// rounds' own ratios (each round runs both, a few seconds apart), and their spread.
    static func renderClientRatios(_ results: [WorkloadResult]) -> String {
        var text = ""
        for (clientName, serverName, target) in clientTargets {
            guard let client = results.first(where: { $0.workload.name == clientName }),
                let server = results.first(where: { $0.workload.name == serverName })
            else { continue }
            let ratios = zip(client.serialDB.milliseconds, server.serialDB.milliseconds).map { $0 / $1 }
            guard let lowest = ratios.min(), let highest = ratios.max() else { continue }
            let median = Samples.median(of: ratios)
            text += "\(clientName) / \(serverName): paired \(format(median)) (rounds \(format(lowest))-"
            text += "\(format(highest))), target \(format(target)) " + (median <= target ? "met" : "MISSED") + "\n"
        }
        return text
    }

    private static func format(_ ratio: Double) -> String {
        String(format: "%.2f", ratio)
    }
}
