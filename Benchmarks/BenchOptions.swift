import ToolArguments

/// The command line of `bench`.
struct BenchOptions {
    /// Interleaved rounds per workload (the medians are taken over them).
    var rounds = 5
    /// Sizes divided by 20 and one round (unless `--rounds` says otherwise): proves in seconds
    /// that every workload runs and verifies, for CI.
    var quick = false
    /// Where to write the JSON report, if anywhere.
    var jsonPath: String?
    /// The workloads to run, in catalog order; `nil` for all.
    var only: Set<String>?
    /// `--scale`: run the scale series instead of the workloads.
    var scale = false
    /// `--scale-10m`: the scale series goes on to 10,000,000 rows.
    var scaleHuge = false
    /// The stores the scale series runs on (`--store`); `nil` for both.
    var scaleStore: SyncSide.Store?
    /// Where the scale series writes its chart.
    var svgPath = "sync-scale.svg"

    /// The size divisor for the workload catalog.
    var divisor: Int { quick ? 20 : 1 }

    static let usage = """
        usage: bench [--rounds N] [--quick] [--only NAME[,NAME...]] [--json FILE]
               bench --scale [--scale-10m] [--quick] [--store sqlite|postgres] [--svg FILE]

        Runs SerialDB and the raw SQLite C API side by side on the same workloads, in one
        process, interleaved round by round, and prints the medians and their ratio.

          --rounds N      rounds per workload, N >= 1 (default 5; 1 with --quick)
          --quick         sizes divided by 20 and one round: checks in seconds that all runs
          --only NAMES    comma-separated workloads to run: \(WorkloadCatalog.names.joined(separator: ", "))
          --json FILE     also write the results as JSON to FILE
          -h, --help      show this help

        --scale grows a sync store to 10,000, 100,000 and 1,000,000 rows over 1,000 accounts
        (--scale-10m: and 10,000,000), on SQLite and on PostgreSQL, and at each size times the
        sync server over HTTP: uploads, incremental fetches, check-updates and one account's
        first fetch. It prints a Markdown table and writes an SVG chart (default sync-scale.svg).

        The *_postgres workloads run the sync server on PostgreSQL: the server at
        SERIALDB_TEST_POSTGRES_URL, else a throwaway one started from /usr/lib/postgresql/15/bin;
        without either they are skipped with a line saying so.

        Exits 0 on success, 1 when a side fails or produces a wrong result, 2 on a bad command line.
        """

    /// Reads the arguments the way every SerialDB tool does (see ``ArgumentReader``).
    /// - Throws: ``UsageError`` naming what is wrong.
    static func parse(_ reader: inout ArgumentReader) throws -> BenchOptions {
        var options = BenchOptions()
        var roundsGiven = false
        while let argument = try reader.next() {
            switch argument {
            case .option("--rounds"):
                options.rounds = try reader.wholeNumber(atLeast: 1)
                roundsGiven = true
            case .option("--quick"): options.quick = true
            case .option("--json"): options.jsonPath = try reader.value()
            case .option("--only"): options.only = try parseNames(try reader.value())
            case .option("--scale"): options.scale = true
            case .option("--scale-10m"):
                options.scale = true
                options.scaleHuge = true
            case .option("--svg"): options.svgPath = try reader.value()
            case .option("--store"):
                switch try reader.value() {
                case "sqlite": options.scaleStore = .sqlite
                case "postgres": options.scaleStore = .postgres
                case let other: throw UsageError("--store takes sqlite or postgres, not `\(other)`")
                }
            default: throw reader.unexpected(argument)
            }
        }
        if options.quick && !roundsGiven {
            options.rounds = 1
        }
        return options
    }

    private static func parseNames(_ text: String) throws -> Set<String> {
        let names = text.split(separator: ",").map { String($0) }
        guard !names.isEmpty else { throw UsageError("--only needs at least one workload name") }
        let known = Set(WorkloadCatalog.names)
        if let unknown = names.first(where: { !known.contains($0) }) {
            throw UsageError(
                "unknown workload `\(unknown)`; known: \(WorkloadCatalog.names.joined(separator: ", "))")
        }
        return Set(names)
    }
}
