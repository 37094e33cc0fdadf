/// The timings of one side of one workload over the rounds, in milliseconds.
struct Samples {
    private(set) var milliseconds: [Double] = []

    mutating func append(_ duration: Duration) {
        milliseconds.append(duration.milliseconds)
    }

    /// The middle value (the mean of the two middle values for an even count).
    var median: Double { Self.median(of: milliseconds) }

    /// The middle value of `values` (the mean of the two middle values for an even count).
    static func median(of values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    var minimum: Double { milliseconds.min() ?? .nan }
    var maximum: Double { milliseconds.max() ?? .nan }
}
