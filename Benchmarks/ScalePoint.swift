import Foundation

/// What the scale series measured on one store at one size.
struct ScalePoint {
    /// The store's name.
    let store: String
    /// Rows in the store while it was measured.
    let rows: Int
    /// New rows uploaded per second, in requests of ``SyncSide/batch``: the median request's rate.
    let uploadRowsPerSecond: Double
    /// An incremental fetch (three new changes), milliseconds: median and 99th percentile.
    let fetch: Percentiles
    /// A check-update, milliseconds.
    let check: Percentiles
    /// A first fetch of one account's ``ScaleSeries/Settings/firstFetchRows`` rows from cursor 0, milliseconds (median).
    let firstFetch: Double

    /// The median and the 99th percentile of some timings.
    struct Percentiles {
        let p50: Double
        let p99: Double

        init(_ milliseconds: [Double]) {
            p50 = Self.percentile(50, of: milliseconds)
            p99 = Self.percentile(99, of: milliseconds)
        }

        /// The nearest-rank percentile.
        static func percentile(_ percent: Int, of values: [Double]) -> Double {
            let sorted = values.sorted()
            guard !sorted.isEmpty else { return .nan }
            let rank = (percent * sorted.count + 99) / 100
            return sorted[max(0, min(sorted.count - 1, rank - 1))]
        }
    }

    /// Each figure as a cost (higher is worse), in the chart's order: µs per uploaded row,
    /// fetch p50, check p50, first fetch.
    var costs: [Double] {
        [1e6 / uploadRowsPerSecond, fetch.p50, check.p50, firstFetch]
    }
}

/// The scale series' terminal table (Markdown, so that it goes into the README as it is).
enum ScaleTable {
    static func render(_ points: [ScalePoint], settings: ScaleSeries.Settings) -> String {
        let header = [
            "store", "rows stored", "upload rows/s", "fetch p50 ms", "fetch p99 ms", "check p50 ms", "check p99 ms",
            "first fetch ms",
        ]
        var lines = [
            "Sync at scale: \(grouped(settings.accounts)) accounts; upload = the median of \(settings.uploadRequests) "
                + "requests of \(SyncSide.batch) new rows; fetch = an incremental fetch of 3 changes and check = a check-update "
                + "(\(settings.samples) each); first fetch = one account's \(grouped(settings.firstFetchRows)) rows "
                + "from cursor 0 in pages of \(SyncSide.batch) (median of 3)",
            "",
            "| " + header.joined(separator: " | ") + " |",
            "|" + header.map { _ in " ---: |" }.joined(),
        ]
        for point in points {
            let cells = [
                point.store, grouped(point.rows), grouped(Int(point.uploadRowsPerSecond.rounded())),
                milliseconds(point.fetch.p50), milliseconds(point.fetch.p99), milliseconds(point.check.p50),
                milliseconds(point.check.p99), milliseconds(point.firstFetch),
            ]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        lines.append("")
        lines += ratios(points)
        return lines.joined(separator: "\n") + "\n"
    }

    /// Per store, the cost of each figure at the largest size against the smallest (target: ≤ 1.5).
    private static func ratios(_ points: [ScalePoint]) -> [String] {
        var lines: [String] = []
        for store in Set(points.map(\.store)).sorted() {
            let series = points.filter { $0.store == store }
            guard let first = series.first, let last = series.last, series.count > 1 else { continue }
            let names = ["upload", "fetch p50", "check p50", "first fetch"]
            let parts = zip(names, zip(last.costs, first.costs)).map { name, pair in
                String(format: "%@ %.2f×", name, pair.0 / pair.1)
            }
            lines.append(
                "\(store), cost at \(grouped(last.rows)) rows / at \(grouped(first.rows)): "
                    + parts.joined(separator: ", "))
        }
        return lines
    }

    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result += "," }
            result.append(digit)
        }
        return (value < 0 ? "-" : "") + result
    }

    private static func milliseconds(_ value: Double) -> String {
        String(format: value < 10 ? "%.2f" : "%.1f", value)
    }
}
