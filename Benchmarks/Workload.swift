/// One benchmark: the same work done by SerialDB and by the raw C API, and what a correct run
/// of either side produces.
struct Workload {
    /// The name used by `--only`, the table and the JSON report.
    let name: String
    /// Units of work per run (rows, transactions or round trips), for the per-operation figures.
    let operations: Int
    /// What a correct run of either side produces; any other result stops the benchmark.
    let expected: Digest
    /// The target for the SerialDB / C ratio of medians, if it sets one.
    let target: Double?
    /// Runs the SerialDB side on a database file that does not exist yet.
    let serialDB: (_ path: String) throws -> SideRun
    /// Runs the C side on a database file that does not exist yet.
    let rawC: (_ path: String) throws -> SideRun

    /// The function that runs `side`.
    func run(_ side: Side, path: String) throws -> SideRun {
        switch side {
        case .serialDB: return try serialDB(path)
        case .rawC: return try rawC(path)
        }
    }
}
