import Foundation

/// The CPU time the whole process (server threads and client) used since it was made: on a
/// shared machine the wall time of a loopback round trip depends on who else runs, the CPU
/// time much less, so both go to standard error.
struct ProcessCPUTime {
    private let start = Self.now()

    private static func now() -> Double {
        var usage = rusage()
        #if os(Linux)
            getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
            getrusage(RUSAGE_SELF, &usage)
        #endif
        let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        return user + system
    }

    func report(_ name: String, rows: Int, elapsed: Duration) {
        let cpu = Self.now() - start
        let wall = elapsed.milliseconds / 1000
        let line = String(
            format: "bench: %@: %d rows, wall %.1f ms (%.0f rows/s), process CPU %.1f ms (%.0f rows per CPU second)\n",
            name, rows, wall * 1000, Double(rows) / wall, cpu * 1000, Double(rows) / max(cpu, 1e-9))
        FileHandle.standardError.write(Data(line.utf8))
    }
}
