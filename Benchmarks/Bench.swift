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
        if options.scale { return try runScale(options) }
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

    /// The scale series on each store (PostgreSQL skipped, with a line saying why, without one).
    private static func runScale(_ options: BenchOptions) throws {
        var settings = options.quick ? ScaleSeries.Settings.quick : ScaleSeries.Settings()
        if options.scaleHuge { settings.sizes.append(settings.sizes.last! * 10) }
        var stores: [SyncSide.Store] = options.scaleStore.map { [$0] } ?? [.sqlite, .postgres]
        if stores.contains(.postgres), case .failure(let error) = ScratchPostgres.server {
            printError("bench: skipping the PostgreSQL store: \(error.message)")
            stores.removeAll { $0 == .postgres }
        }
        let directory = try ScratchDirectory(prefix: "serialdb-bench-scale")
        var points: [ScalePoint] = []
        for store in stores {
            points += try ScaleSeries.run(
                store, settings: settings, directory: directory.url.path, progress: printError)
        }
        print(ScaleTable.render(points, settings: settings), terminator: "")
        try Data(ScaleChart.render(points, settings: settings).utf8).write(to: URL(fileURLWithPath: options.svgPath))
        printError("bench: wrote \(options.svgPath)")
    }

    /// Progress and errors go to standard error, so standard output holds only the table.
    private static func printError(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
