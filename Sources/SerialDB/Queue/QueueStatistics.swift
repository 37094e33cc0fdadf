/// What a queue or pool has run since it opened, from ``DatabaseQueue/statistics()``: how many
/// blocks, and how long they waited for their turn and ran, as percentiles.
///
/// Durations are recorded in buckets a quarter of a power of two wide, so each percentile is
/// exact to within 19 %.
public struct QueueStatistics: Sendable, CustomStringConvertible {
    /// Blocks run.
    public let blocksRun: Int
    /// From each call to the moment its block started.
    public let waited: Percentiles
    /// How long each block ran.
    public let ran: Percentiles

    /// The median, 90th, 99th percentile and maximum of a duration.
    public struct Percentiles: Sendable, Equatable {
        /// Half of the blocks took at most this.
        public let p50: Duration
        /// 90 % of the blocks took at most this.
        public let p90: Duration
        /// 99 % of the blocks took at most this.
        public let p99: Duration
        /// The longest.
        public let max: Duration
    }

    /// A one-line summary.
    public var description: String {
        "\(blocksRun) blocks; waited p50 \(waited.p50) p99 \(waited.p99) max \(waited.max); "
            + "ran p50 \(ran.p50) p99 \(ran.p99) max \(ran.max)"
    }
}
