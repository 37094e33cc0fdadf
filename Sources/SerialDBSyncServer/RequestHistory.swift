import Foundation

/// The requests of the last minutes, for the status page: a thread takes the metrics' request
/// counts every ``interval`` and keeps ``span`` of them; the counts of a window are the counts
/// now less those of the newest sample at least that old. The hot path is not involved: it
/// only adds to the counters the samples read.
final class RequestHistory: @unchecked Sendable {
    // Safe to share: `metrics` is Sendable and immutable; the rest is behind `condition`.
    /// One sample: when, and the counts of every (call, status) then.
    private struct Sample {
        let time: Date
        let counts: [RequestKey: Int]
    }

    /// A call and a status.
    struct RequestKey: Hashable, Comparable {
        let call: SyncRequestCall
        let status: Int

        static func < (left: RequestKey, right: RequestKey) -> Bool {
            (left.call.index, left.status) < (right.call.index, right.status)
        }
    }

    /// How often a sample is taken, in seconds: the windows are exact to within it.
    static let interval: TimeInterval = 10
    /// How far back samples are kept, in seconds.
    static let span: TimeInterval = 15 * 60

    private let metrics: SyncMetrics
    private let condition = NSCondition()
    private var samples: [Sample]
    private var running = true
    private var exited = false

    /// Starts sampling `metrics`; the first sample is the server's start, when every count was 0.
    init(metrics: SyncMetrics) {
        self.metrics = metrics
        samples = [Sample(time: metrics.started, counts: [:])]
        Thread.detachNewThread { [self] in sample() }
    }

    /// The requests answered within the last `seconds` (all of them while the server is
    /// younger than that), by call and status, from `now`.
    func counts(within seconds: TimeInterval, now: SyncMetricsSnapshot) -> [RequestKey: Int] {
        let current = Self.counts(now)
        let cutoff = Date().addingTimeInterval(-seconds)
        let base = condition.withLock { samples.last { $0.time <= cutoff } ?? samples[0] }
        return current.reduce(into: [:]) { result, entry in
            let count = entry.value - (base.counts[entry.key] ?? 0)
            if count > 0 { result[entry.key] = count }
        }
    }

    /// Stops the sampling thread and waits for it to end.
    func stop() {
        condition.withLock {
            running = false
            condition.broadcast()
            while !exited { condition.wait() }
        }
    }

    private static func counts(_ snapshot: SyncMetricsSnapshot) -> [RequestKey: Int] {
        Dictionary(
            snapshot.requestCounts.map { (RequestKey(call: $0.call, status: $0.status), $0.count) },
            uniquingKeysWith: +)
    }

    private func sample() {
        condition.withLock {
            while running {
                _ = condition.wait(until: Date().addingTimeInterval(Self.interval))
                guard running else { break }
                let now = Date()
                samples.append(Sample(time: now, counts: Self.counts(metrics.snapshot())))
                // Keep one sample older than the span, so that the longest window has its base.
                while samples.count > 2 && samples[1].time < now.addingTimeInterval(-Self.span) {
                    samples.removeFirst()
                }
            }
            exited = true
            condition.broadcast()
        }
    }
}
