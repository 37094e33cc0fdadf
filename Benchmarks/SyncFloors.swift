/// The sync workloads' figures in rows per second, printed under the table: the SQLite store's
/// against issue 11's floors (on a 2-core machine: 20,000 rows/s uploaded, 50,000 rows/s
/// fetched); the PostgreSQL store's and the client's (upload from the outbox, download and
/// apply) as figures alone.
enum SyncFloors {
    static let floors = ["sync_post_10k": 20_000.0, "sync_fetch_10k": 50_000.0]

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
        return text
    }
}
