import Foundation

/// What a ``SyncServer`` counts: requests by call and status, their durations, the rows they
/// moved, store failures and open connections. Recording a request costs a few relaxed atomic
/// additions and takes no lock, so the counting is exact and the hot path does not wait on it.
/// The admin listener serves it as Prometheus text (``SyncMetricsSnapshot/prometheusText(currentVersion:)``).
///
/// ```swift
/// let snapshot = server.metrics.snapshot()
/// snapshot.requests(.postData, status: 200)   // post-data requests answered 200
/// snapshot.rowsUploaded                        // mutations answered applied
/// ```
public final class SyncMetrics: Sendable {
    /// The upper bounds, in seconds, of the request duration histogram's buckets (below +Inf).
    public static let durationBounds: [Double] = [
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]
    /// The statuses counted one by one; any other is counted as the nearest end.
    static let statuses = 100...599

    private enum Total: Int, CaseIterable {
        case rowsUploaded, rowsServed, conflicts, rejections, duplicates, storeErrors, openConnections
    }

    private static let bucketCount = durationBounds.count + 1
    private static let boundNanoseconds = durationBounds.map { Int64(($0 * 1e9).rounded()) }

    /// (call, status) → requests.
    private let requests = AtomicCounters(count: SyncRequestCall.allCases.count * statuses.count)
    /// (call, bucket) → requests whose duration fell in that bucket (not cumulative).
    private let buckets = AtomicCounters(count: SyncRequestCall.allCases.count * bucketCount)
    /// call → the sum of the durations, in nanoseconds.
    private let nanoseconds = AtomicCounters(count: SyncRequestCall.allCases.count)
    private let totals = AtomicCounters(count: Total.allCases.count)
    /// When counting began: the server's start.
    public let started = Date()

    /// Counts from zero.
    public init() {}

    /// Counts one answered request.
    public func record(call: SyncRequestCall, status: Int, duration: Duration, rows: SyncRowCounts, storeFailed: Bool) {
        let statusIndex =
            min(max(status, Self.statuses.lowerBound), Self.statuses.upperBound) - Self.statuses.lowerBound
        requests.add(1, at: call.index * Self.statuses.count + statusIndex)
        let elapsed = duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
        let bucket = Self.boundNanoseconds.firstIndex { elapsed <= $0 } ?? Self.durationBounds.count
        buckets.add(1, at: call.index * Self.bucketCount + bucket)
        nanoseconds.add(Int(clamping: elapsed), at: call.index)
        if rows != SyncRowCounts() {
            add(rows.applied, .rowsUploaded)
            add(rows.served, .rowsServed)
            add(rows.conflicts, .conflicts)
            add(rows.rejected, .rejections)
            add(rows.duplicates, .duplicates)
        }
        if storeFailed { add(1, .storeErrors) }
    }

    /// A connection to the public listener opened.
    public func connectionOpened() { add(1, .openConnections) }

    /// A connection to the public listener closed.
    public func connectionClosed() { add(-1, .openConnections) }

    private func add(_ amount: Int, _ total: Total) {
        if amount != 0 { totals.add(amount, at: total.rawValue) }
    }

    /// The counts now. Each counter is read atomically, not all of them at one instant: a
    /// request recorded meanwhile may show in some and not yet in others.
    public func snapshot() -> SyncMetricsSnapshot {
        var requestCounts: [SyncMetricsSnapshot.RequestCount] = []
        var histograms: [SyncMetricsSnapshot.Histogram] = []
        for call in SyncRequestCall.allCases {
            for (offset, status) in Self.statuses.enumerated() {
                let count = requests[call.index * Self.statuses.count + offset]
                if count != 0 { requestCounts.append(.init(call: call, status: status, count: count)) }
            }
            let counts = (0..<Self.bucketCount).map { buckets[call.index * Self.bucketCount + $0] }
            histograms.append(
                .init(call: call, bucketCounts: counts, sumSeconds: Double(nanoseconds[call.index]) / 1e9))
        }
        return SyncMetricsSnapshot(
            uptime: Date().timeIntervalSince(started), requestCounts: requestCounts, durations: histograms,
            rowsUploaded: totals[Total.rowsUploaded.rawValue], rowsServed: totals[Total.rowsServed.rawValue],
            conflicts: totals[Total.conflicts.rawValue], rejections: totals[Total.rejections.rawValue],
            duplicates: totals[Total.duplicates.rawValue], storeErrors: totals[Total.storeErrors.rawValue],
            openConnections: totals[Total.openConnections.rawValue])
    }
}

/// The counts of ``SyncMetrics`` at one moment.
public struct SyncMetricsSnapshot: Sendable, Equatable {
    /// Requests of one call answered with one status.
    public struct RequestCount: Sendable, Equatable {
        /// The call.
        public var call: SyncRequestCall
        /// The HTTP status.
        public var status: Int
        /// How many.
        public var count: Int
    }

    /// The durations of one call's requests.
    public struct Histogram: Sendable, Equatable {
        /// The call.
        public var call: SyncRequestCall
        /// Requests per bucket of ``SyncMetrics/durationBounds``, the last one above them all
        /// (not cumulative).
        public var bucketCounts: [Int]
        /// The durations added up, in seconds.
        public var sumSeconds: Double
        /// The requests counted.
        public var count: Int { bucketCounts.reduce(0, +) }
    }

    /// Seconds since the server started.
    public var uptime: TimeInterval
    /// Every (call, status) with requests, by call then status.
    public var requestCounts: [RequestCount]
    /// One histogram per call, in the order of `SyncRequestCall.allCases`.
    public var durations: [Histogram]
    /// Mutations answered `applied`.
    public var rowsUploaded: Int
    /// Changes served by fetch-data.
    public var rowsServed: Int
    /// Mutations answered `conflict`.
    public var conflicts: Int
    /// Mutations answered `rejected`.
    public var rejections: Int
    /// Mutations answered `duplicate`.
    public var duplicates: Int
    /// Requests answered 500 because the store failed.
    public var storeErrors: Int
    /// Connections to the public listener open now.
    public var openConnections: Int

    /// The requests of `call` answered with `status`.
    public func requests(_ call: SyncRequestCall, status: Int) -> Int {
        requestCounts.first { $0.call == call && $0.status == status }?.count ?? 0
    }
}
