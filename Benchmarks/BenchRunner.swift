import HarnessSupport

/// Runs the workloads round by round: in each round every workload runs once per side, the two
/// sides back to back in the same process, each on a new database file.
struct BenchRunner {
    let workloads: [Workload]
    let rounds: Int
    let directory: ScratchDirectory

    /// Runs everything; `progress` receives one line per workload and round.
    /// - Throws: ``BenchError`` when a side fails or produces the wrong result.
    func run(progress: (String) -> Void) throws -> [WorkloadResult] {
        var results = workloads.map { WorkloadResult(workload: $0) }
        for round in 1...rounds {
            // Alternate which side goes first, so that neither always inherits the other's
            // warm caches or pending disk writes.
            let order: [Side] = round % 2 == 1 ? [.serialDB, .rawC] : [.rawC, .serialDB]
            for index in results.indices {
                var line = "round \(round)/\(rounds) \(results[index].workload.name):"
                for side in order {
                    let run = try runOnce(results[index].workload, side: side, round: round)
                    results[index].append(run, side: side)
                    line += " \(side.rawValue) \(ResultTable.format(run.elapsed))"
                }
                progress(line)
            }
        }
        return results
    }

    private func runOnce(_ workload: Workload, side: Side, round: Int) throws -> SideRun {
        let path = directory.path("\(workload.name)-\(side.rawValue)-\(round).sqlite")
        directory.removeDatabase(at: path)
        defer { directory.removeDatabase(at: path) }
        let run = try workload.run(side, path: path)
        guard run.digest == workload.expected else {
            throw BenchError.mismatch(
                workload: workload.name, side: side.rawValue, expected: workload.expected, actual: run.digest)
        }
        return run
    }
}
