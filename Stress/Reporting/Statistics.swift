import Foundation

/// Small numeric helpers for the figures.
enum Statistics {
    /// The nearest-rank percentile (`fraction` in 0...1) of unsorted values; nil when empty.
    static func percentile(_ values: [Double], _ fraction: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }

    /// Rounds to thousandths, so that the JSON report shows 12.345, not 12.345000000000001.
    static func rounded(_ value: Double) -> Double {
        (value * 1000).rounded() / 1000
    }

    /// Events per second over an interval; 0 for an empty interval.
    static func rate(_ count: Int, over seconds: Double) -> Double {
        seconds > 0 ? rounded(Double(count) / seconds) : 0
    }

    /// "12.3" style milliseconds for the summary.
    static func milliseconds(_ seconds: Double) -> String {
        String(format: "%.1f", seconds * 1000)
    }
}
