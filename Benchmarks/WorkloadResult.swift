/// The timings of both sides of one workload over all rounds.
struct WorkloadResult {
    let workload: Workload
    var serialDB = Samples()
    var rawC = Samples()

    /// SerialDB's median over C's median: 1.0 is parity, 1.15 is 15 % slower than C.
    var ratio: Double { serialDB.median / rawC.median }

    /// Whether the ratio meets the workload's target (`nil` when it has none).
    var meetsTarget: Bool? { workload.target.map { ratio <= $0 } }

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
