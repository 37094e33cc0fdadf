import HarnessSupport

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
    /// `--help` was given.
    var help = false

    /// The size divisor for the workload catalog.
    var divisor: Int { quick ? 20 : 1 }

    static let usage = """
        usage: bench [--rounds N] [--quick] [--only NAME[,NAME...]] [--json FILE]

        Runs SerialDB and the raw SQLite C API side by side on the same workloads, in one
        process, interleaved round by round, and prints the medians and their ratio.

          --rounds N      rounds per workload, N >= 1 (default 5; 1 with --quick)
          --quick         sizes divided by 20 and one round: checks in seconds that all runs
          --only NAMES    comma-separated workloads to run: \(WorkloadCatalog.names.joined(separator: ", "))
          --json FILE     also write the results as JSON to FILE
          -h, --help      show this help

        The *_postgres workloads run the sync server on PostgreSQL: the server at
        SERIALDB_TEST_POSTGRES_URL, else a throwaway one started from /usr/lib/postgresql/15/bin;
        without either they are skipped with a line saying so.

        Exits 0 on success, 1 when a side fails or produces a wrong result, 64 on a bad command line.
        """

    /// Parses the arguments (without the program name). Accepts `--flag value` and `--flag=value`.
    /// - Throws: ``UsageError`` naming what is wrong.
    static func parse(_ arguments: [String]) throws -> BenchOptions {
        var options = BenchOptions()
        var roundsGiven = false
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            var flag = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                flag = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func value() throws -> String {
                if let inlineValue { return inlineValue }
                guard let next = remaining.popFirst(), !next.hasPrefix("--") else {
                    throw UsageError("\(flag) needs a value")
                }
                return next
            }
            if inlineValue != nil && ["--quick", "-h", "--help"].contains(flag) {
                throw UsageError("\(flag) takes no value")
            }
            switch flag {
            case "--rounds":
                let text = try value()
                guard let rounds = Int(text), rounds >= 1 else {
                    throw UsageError("--rounds needs a whole number of at least 1, not `\(text)`")
                }
                options.rounds = rounds
                roundsGiven = true
            case "--quick":
                options.quick = true
            case "--json":
                options.jsonPath = try value()
            case "--only":
                options.only = try parseNames(try value())
            case "-h", "--help":
                options.help = true
            default:
                throw UsageError("unknown argument `\(argument)`")
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
