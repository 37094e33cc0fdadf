import Foundation
import SerialDBTestSupport

/// One run of the built `stress` executable and the sync scenario's record in its JSON report.
struct SyncStressRun {
    /// The report's damage counts, each 0 in a run that passes.
    static let invariants = [
        "diverged", "lost", "leaked", "duplicated", "unexpected", "overwritten", "cursor_mismatches",
    ]

    let status: Int32
    /// Standard output and error.
    let output: String
    let scenario: [String: Any]?

    init(_ arguments: [String]) async throws {
        let directory = try TemporaryDirectory()
        let report = directory.path("report.json")
        // A run that hangs is killed: five minutes leaves room for ThreadSanitizer's slowdown.
        let run = try await ToolRun("stress", arguments + ["--json", report], seconds: 300)
        status = run.status
        output = run.output + run.errors
        let root = FileManager.default.contents(atPath: report).flatMap {
            try? JSONSerialization.jsonObject(with: $0) as? [String: Any]
        }
        scenario = (root?["scenarios"] as? [[String: Any]])?.first
    }
}
