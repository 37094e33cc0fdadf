/// The sync workloads' figures in rows per second against issue 11's floors (on a 2-core
/// machine: 20,000 rows/s uploaded, 50,000 rows/s fetched), printed under the table. The
/// PostgreSQL store's figures are printed beside them, without a floor.
enum SyncFloors {
    static let floors = ["sync_post_10k": 20_000.0, "sync_fetch_10k": 50_000.0]

    /// One line per sync workload that ran (empty when none did).
    static func render(_ results: [WorkloadResult]) -> String {
        var text = ""
        for result in results {
            guard result.workload.name.hasPrefix("sync_") else { continue }
            let server = Double(result.workload.operations) / (result.serialDB.median / 1000)
            let local = Double(result.workload.operations) / (result.rawC.median / 1000)
            text += "\(result.workload.name): sync server \(Int(server)) rows/s, raw C locally \(Int(local)) rows/s, "
            if let floor = floors[result.workload.name] {
                text += "floor \(Int(floor)) rows/s " + (server >= floor ? "met" : "MISSED") + "\n"
            } else {
                text += "no floor set\n"
            }
        }
        return text
    }
}
