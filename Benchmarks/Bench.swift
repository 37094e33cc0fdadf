import CSQLiteShims
import Foundation
import HarnessSupport
import PostgresHarness
import ToolArguments

/// `bench`: SerialDB against the raw SQLite C API, side by side in one process (issue 6).
///
/// `main` is synchronous on purpose: the timed loops call the blocking queue methods, which in
/// an async context would resolve to their async overloads.
@main
struct Bench {
    static func main() {
        let options = ToolArguments.parse(tool: "bench", usage: BenchOptions.usage) { reader in
            try BenchOptions.parse(&reader)
        }
        do {
            try run(options)
        } catch {
            printError("bench: \(error)")
            exit(ToolArguments.failure)
        }
    }

    /// Runs, prints and reports. The scratch directory is gone when this returns or throws.
    private static func run(_ options: BenchOptions) throws {
        var workloads = WorkloadCatalog.workloads(divisor: options.divisor).filter {
            options.only?.contains($0.name) ?? true
        }
        let needPostgres = workloads.filter { $0.name.hasSuffix("_postgres") }.map(\.name)
        if !needPostgres.isEmpty, case .failure(let error) = ScratchPostgres.server {
            printError("bench: skipping \(needPostgres.joined(separator: ", ")): \(error.message)")
            workloads.removeAll { needPostgres.contains($0.name) }
        }
        let sqliteVersion = String(cString: serialdb_raw_sqlite_version())
        printError(
            "bench: \(workloads.count) workload(s), \(options.rounds) round(s)"
                + (options.quick ? ", quick sizes" : "") + ", SQLite \(sqliteVersion)")
        let directory = try ScratchDirectory(prefix: "serialdb-bench")
        let results = try BenchRunner(workloads: workloads, rounds: options.rounds, directory: directory)
            .run(progress: printError)
        print(ResultTable.render(results, rounds: options.rounds))
        print(SyncFloors.render(results), terminator: "")
        if let path = options.jsonPath {
            let report = BenchReport(
                results: results, rounds: options.rounds, quick: options.quick, sqliteVersion: sqliteVersion)
            try report.write(to: path)
            printError("bench: wrote \(path)")
        }
    }

    /// Progress and errors go to standard error, so standard output holds only the table.
    private static func printError(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
