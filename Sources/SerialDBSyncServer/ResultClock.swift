import Foundation

/// Times as the stores record upload results: whole seconds since 1970.
enum ResultClock {
    /// `date` in whole seconds since 1970.
    static func seconds(_ date: Date) -> Int64 { seconds(date.timeIntervalSince1970) }

    /// `interval` in whole seconds, rounded down and kept within ±10^15.
    static func seconds(_ interval: TimeInterval) -> Int64 {
        interval.isNaN ? 0 : Int64(max(min(interval.rounded(.down), 1e15), -1e15))
    }
}
