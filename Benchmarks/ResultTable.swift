import Foundation

/// The terminal table: per workload the medians of both sides, their ratio, the paired ratio
/// against the target, the spread over the rounds and the cost per operation.
enum ResultTable {
    static func render(_ results: [WorkloadResult], rounds: Int) -> String {
        let header = [
            "workload", "ops", "SerialDB ms", "C ms", "ratio", "paired", "target", "SerialDB min-max", "C min-max",
            "SerialDB ns/op", "C ns/op",
        ]
        let rows = results.map { result -> [String] in
            let target =
                result.workload.target.map { String(format: "<= %.2f ", $0) + (result.meetsTarget! ? "met" : "MISSED") }
                ?? "-"
            return [
                result.workload.name,
                String(result.workload.operations),
                number(result.serialDB.median),
                number(result.rawC.median),
                String(format: "%.3f", result.ratio),
                String(format: "%.3f", result.pairedRatio),
                target,
                number(result.serialDB.minimum) + "-" + number(result.serialDB.maximum),
                number(result.rawC.minimum) + "-" + number(result.rawC.maximum),
                String(format: "%.0f", result.nanosecondsPerOperation(result.serialDB.median)),
                String(format: "%.0f", result.nanosecondsPerOperation(result.rawC.median)),
            ]
        }
        let widths = header.indices.map { column in
            ([header] + rows).map { $0[column].count }.max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return column == 0 ? cell + padding : padding + cell  // names left, figures right
            }.joined(separator: "  ")
        }
        let rule = String(repeating: "-", count: widths.reduce(0, +) + 2 * (widths.count - 1))
        let title =
            "SerialDB vs raw C, medians of \(rounds) interleaved round(s); ratio = SerialDB / C; "
            + "paired = median of the rounds' own ratios, which targets are judged by"
        return ([title, line(header), rule] + rows.map(line)).joined(separator: "\n")
    }

    /// A duration in milliseconds for progress lines.
    static func format(_ duration: Duration) -> String {
        number(duration.milliseconds) + " ms"
    }

    private static func number(_ milliseconds: Double) -> String {
        String(format: milliseconds < 100 ? "%.2f" : "%.1f", milliseconds)
    }
}
