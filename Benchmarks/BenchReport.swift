import Foundation

/// The `--json` report. Keys are written in snake case (`serialdb_ms`, `c_min_ms`, ...); times
/// are in milliseconds, rounded to the microsecond.
struct BenchReport: Encodable {
    /// One workload: medians, ratio, spread, and every round's pair of timings.
    struct Entry: Encodable {
        var name: String
        var serialdbMs: Double
        var cMs: Double
        var ratio: Double
        /// The median of the rounds' own ratios, which the target is judged by.
        var pairedRatio: Double
        var runs: [Run]
        var serialdbMinMs: Double
        var serialdbMaxMs: Double
        var cMinMs: Double
        var cMaxMs: Double
        var operations: Int
        var serialdbNsPerOp: Double
        var cNsPerOp: Double
        var target: Double?
    }

    /// The two timings of one round, in the order they ran.
    struct Run: Encodable {
        var round: Int
        var serialdbMs: Double
        var cMs: Double
    }

    var machine: String
    var date: String
    var sqliteVersion: String
    var rounds: Int
    var quick: Bool
    var workloads: [Entry]

    init(results: [WorkloadResult], rounds: Int, quick: Bool, sqliteVersion: String) {
        machine = MachineDescription.current
        date = ISO8601DateFormatter().string(from: Date())
        self.sqliteVersion = sqliteVersion
        self.rounds = rounds
        self.quick = quick
        workloads = results.map { result in
            let runs = zip(result.serialDB.milliseconds, result.rawC.milliseconds).enumerated().map {
                Run(round: $0.offset + 1, serialdbMs: Self.rounded($0.element.0), cMs: Self.rounded($0.element.1))
            }
            return Entry(
                name: result.workload.name,
                serialdbMs: Self.rounded(result.serialDB.median),
                cMs: Self.rounded(result.rawC.median),
                ratio: (result.ratio * 1000).rounded() / 1000,
                pairedRatio: (result.pairedRatio * 1000).rounded() / 1000,
                runs: runs,
                serialdbMinMs: Self.rounded(result.serialDB.minimum),
                serialdbMaxMs: Self.rounded(result.serialDB.maximum),
                cMinMs: Self.rounded(result.rawC.minimum),
                cMaxMs: Self.rounded(result.rawC.maximum),
                operations: result.workload.operations,
                serialdbNsPerOp: result.nanosecondsPerOperation(result.serialDB.median).rounded(),
                cNsPerOp: result.nanosecondsPerOperation(result.rawC.median).rounded(),
                target: result.workload.target)
        }
    }

    /// Writes the report as pretty-printed JSON.
    func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]  // sorted: stable diffs
        var data = try encoder.encode(self)
        data.append(contentsOf: "\n".utf8)
        try data.write(to: URL(fileURLWithPath: path))
    }

    private static func rounded(_ milliseconds: Double) -> Double {
        (milliseconds * 1000).rounded() / 1000
    }
}
