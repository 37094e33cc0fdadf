import Foundation

/// Measures the blocks of one queue or pool when ``Configuration/slowBlockThreshold`` or
/// ``Configuration/recordsStatistics`` asks for it: reports slow blocks and keeps histograms.
/// A queue without either has no `QueueHealth` and reads no clock.
///
/// Safe to share (`@unchecked Sendable`): the histograms are touched only while holding `lock`;
/// the rest is immutable.
final class QueueHealth: @unchecked Sendable {
    /// The threshold in nanoseconds: the hot path compares integers, not `Duration`s (whose
    /// Int128 arithmetic cost more than the clock reads).
    private let thresholdNanoseconds: UInt64?
    private let onSlowBlock: (@Sendable (SlowBlockReport) -> Void)?
    private let recordsStatistics: Bool
    private let label: String
    private let lock = NSLock()
    private var blocksRun = 0
    private var waited = DurationHistogram()
    private var ran = DurationHistogram()

    /// The health of a queue set up by `configuration`, or `nil` when it measures nothing.
    static func make(_ configuration: Configuration, label: String) -> QueueHealth? {
        let reportsSlowBlocks = configuration.slowBlockThreshold != nil && configuration.onSlowBlock != nil
        guard reportsSlowBlocks || configuration.recordsStatistics else { return nil }
        return QueueHealth(configuration, label: label)
    }

    private init(_ configuration: Configuration, label: String) {
        thresholdNanoseconds =
            configuration.onSlowBlock == nil ? nil : configuration.slowBlockThreshold.map(Self.nanoseconds)
        onSlowBlock = configuration.onSlowBlock
        recordsStatistics = configuration.recordsStatistics
        self.label = label
    }

    /// Runs `body`, which calls `started()` when the block begins, and records the call.
    /// Nothing is recorded for a call whose block never started (refused or cancelled).
    func measure<T>(_ site: CallSite, _ body: (_ started: @escaping @Sendable () -> Void) throws -> T) rethrows -> T {
        let submitted = Self.now()
        let start = StartTime()
        defer { recordIfStarted(site, submitted: submitted, start) }
        return try body { start.mark() }
    }

    /// Async twin of ``measure(_:_:)``.
    func measure<T>(
        _ site: CallSite, _ body: (_ started: @escaping @Sendable () -> Void) async throws -> T
    ) async rethrows -> T {
        let submitted = Self.now()
        let start = StartTime()
        defer { recordIfStarted(site, submitted: submitted, start) }
        return try await body { start.mark() }
    }

    private func recordIfStarted(_ site: CallSite, submitted: UInt64, _ start: StartTime) {
        let started = start.nanoseconds
        guard started != 0 else { return }
        let ended = Self.now()
        record(site, waited: started &- submitted, ran: ended &- started)
    }

    private func record(_ site: CallSite, waited: UInt64, ran: UInt64) {
        if recordsStatistics {
            lock.withLock {
                blocksRun += 1
                self.waited.add(waited)
                self.ran.add(ran)
            }
        }
        if let thresholdNanoseconds, let onSlowBlock, waited > thresholdNanoseconds || ran > thresholdNanoseconds {
            onSlowBlock(
                SlowBlockReport(
                    file: site.file.description, line: Int(site.line), function: site.function.description,
                    waited: .nanoseconds(waited), ran: .nanoseconds(ran), label: label))
        }
    }

    /// Nanoseconds on the monotonic clock (`DispatchTime`: one vDSO call, no Int128).
    static func now() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds
    }

    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        guard seconds < Int64(UInt64.max / 1_000_000_000) - 1 else { return UInt64.max }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }

    /// The statistics so far, or `nil` when they are not recorded.
    func statistics() -> QueueStatistics? {
        guard recordsStatistics else { return nil }
        return lock.withLock {
            QueueStatistics(blocksRun: blocksRun, waited: waited.percentiles, ran: ran.percentiles)
        }
    }
}

/// Where a queue method was called from: `#fileID`, `#line`, `#function`, kept as static strings
/// so passing them costs nothing when nothing is measured.
struct CallSite: Sendable {
    let file: StaticString
    let line: UInt
    let function: StaticString
}

/// The moment a block started, set on the thread that runs it and read after it returned.
///
/// Safe to share (`@unchecked Sendable`): `instant` is written once, by the block's thread,
/// before the call it belongs to returns, and read only after that (the serializer's lock or
/// the continuation's resume orders the two).
private final class StartTime: @unchecked Sendable {
    /// 0 until the block starts.
    private(set) var nanoseconds: UInt64 = 0

    func mark() {
        nanoseconds = QueueHealth.now()
    }
}

/// Counts durations in buckets a quarter of a power of two wide, from 1 ns up.
private struct DurationHistogram {
    private var counts = [Int](repeating: 0, count: 64 * 4)
    private var total = 0
    private var longestNanoseconds: UInt64 = 0

    private var longest: Duration { .nanoseconds(longestNanoseconds) }

    mutating func add(_ duration: UInt64) {
        let nanoseconds = max(1, duration)
        let exponent = UInt64.bitWidth - 1 - nanoseconds.leadingZeroBitCount
        // The two bits after the leading one say which quarter of [2^e, 2^(e+1)) it falls in.
        let quarter = exponent >= 2 ? Int((nanoseconds >> UInt64(exponent - 2)) & 3) : 0
        counts[exponent * 4 + quarter] += 1
        total += 1
        longestNanoseconds = max(longestNanoseconds, nanoseconds)
    }

    var percentiles: QueueStatistics.Percentiles {
        QueueStatistics.Percentiles(
            p50: percentile(0.5), p90: percentile(0.9), p99: percentile(0.99), max: longest)
    }

    /// The upper bound of the bucket holding the `fraction` quantile (never above the maximum).
    private func percentile(_ fraction: Double) -> Duration {
        guard total > 0 else { return .zero }
        let rank = Int((Double(total) * fraction).rounded(.up))
        var seen = 0
        for (bucket, count) in counts.enumerated() where count > 0 {
            seen += count
            if seen >= rank {
                let exponent = bucket / 4
                let quarter = bucket % 4
                let upper = exponent >= 2 ? (4 + quarter + 1) << (exponent - 2) : 1 << (exponent + 1)
                return min(.nanoseconds(upper), longest)
            }
        }
        return longest
    }
}
