/// The timings of both sides of one workload over all rounds.
struct WorkloadResult {
    let workload: Workload
    var serialDB = Samples()
    var rawC = Samples()

    /// SerialDB's median over C's median: 1.0 is parity, 1.15 is 15 % slower than C.
    var ratio: Double { serialDB.median / rawC.median }

    /// The median of the rounds' own ratios (each round runs both sides back to back). This is
    /// what targets are judged by: a shared machine runs in slow and fast phases that last
    /// seconds, and the two medians of `ratio` can come from different phases (one idle run
    /// gave empty_read 1.96 that way, while its five rounds' ratios were 1.18 to 1.35 but one).
    var pairedRatio: Double {
        Samples.median(of: zip(serialDB.milliseconds, rawC.milliseconds).map { $0 / $1 })
    }

    /// Whether the paired ratio meets the workload's target (`nil` when it has none).
    var meetsTarget: Bool? { workload.target.map { pairedRatio <= $0 } }

    /// Nanoseconds per operation at a median of `milliseconds`.
    func nanosecondsPerOperation(_ milliseconds: Double) -> Double {
        milliseconds * 1e6 / Double(max(workload.operations, 1))
    }

    mutating func append(_ run: SideRun, side: Side) {
        switch side {
        case .serialDB: serialDB.append(run.elapsed)
        case .rawC: rawC.append(run.elapsed)
        }
    }
}
