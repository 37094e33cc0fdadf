import Foundation

extension SyncMetricsSnapshot {
    /// The content type of ``prometheusText(currentVersion:)``: Prometheus text format 0.0.4,
    /// exactly as the format names it (its text is UTF-8 by definition, and this one is ASCII).
    public static let prometheusContentType = "text/plain; version=0.0.4"

    /// The counts in Prometheus text format 0.0.4, every name prefixed `serialdb_sync_`, every
    /// counter ending in `_total`: requests by call and status, a duration histogram per call,
    /// rows uploaded and served, conflicts, rejections, duplicates, store errors, open
    /// connections, and `current_version` when `currentVersion` is given (the store answered).
    public func prometheusText(currentVersion: Int64?) -> String {
        var text = ""
        func family(_ name: String, _ type: String, _ help: String) {
            text += "# HELP serialdb_sync_\(name) \(help)\n# TYPE serialdb_sync_\(name) \(type)\n"
        }
        func sample(_ name: String, _ labels: String = "", value: String) {
            text += "serialdb_sync_\(name)\(labels.isEmpty ? "" : "{\(labels)}") \(value)\n"
        }
        family("requests_total", "counter", "Requests answered, by call and HTTP status.")
        for count in requestCounts {
            sample(
                "requests_total", "call=\"\(count.call.rawValue)\",status=\"\(count.status)\"",
                value: String(count.count))
        }
        family("request_duration_seconds", "histogram", "From a request's headers to its answer, by call.")
        for histogram in durations {
            let call = "call=\"\(histogram.call.rawValue)\""
            var cumulative = 0
            for (index, count) in histogram.bucketCounts.enumerated() {
                cumulative += count
                let bound = index < SyncMetrics.durationBounds.count ? "\(SyncMetrics.durationBounds[index])" : "+Inf"
                sample("request_duration_seconds_bucket", "\(call),le=\"\(bound)\"", value: String(cumulative))
            }
            sample("request_duration_seconds_sum", call, value: "\(histogram.sumSeconds)")
            sample("request_duration_seconds_count", call, value: String(cumulative))
        }
        let totals: [(String, String, Int)] = [
            ("rows_uploaded_total", "Mutations answered applied.", rowsUploaded),
            ("rows_served_total", "Changes sent by fetch-data.", rowsServed),
            ("conflicts_total", "Mutations answered conflict (stale base_version).", conflicts),
            ("rejections_total", "Mutations answered rejected (the row breaks its table's definition).", rejections),
            ("duplicates_total", "Mutations answered duplicate (an expired result's seq).", duplicates),
            ("store_errors_total", "Requests answered 500 because the store failed.", storeErrors),
        ]
        for (name, help, value) in totals {
            family(name, "counter", help)
            sample(name, value: String(value))
        }
        family("open_connections", "gauge", "Connections to the public listener open now.")
        sample("open_connections", value: String(openConnections))
        if let currentVersion {
            family("current_version", "gauge", "The server-wide version counter: the highest version given.")
            sample("current_version", value: String(currentVersion))
        }
        return text
    }
}
