import Foundation

/// A one-line description of the machine for the report: OS, architecture, CPU model, cores
/// and memory, enough to tell runs on different machines apart.
enum MachineDescription {
    static var current: String {
        let info = ProcessInfo.processInfo
        let memory = Double(info.physicalMemory) / Double(1 << 30)
        return "\(system)-\(architecture), \(cpuModel ?? "unknown CPU"), \(info.activeProcessorCount) cores, "
            + String(format: "%.1f GiB", memory) + ", " + info.operatingSystemVersionString
    }

    private static var system: String {
        #if os(Linux)
            return "linux"
        #elseif os(macOS)
            return "macos"
        #else
            return "unknown"
        #endif
    }

    private static var architecture: String {
        #if arch(x86_64)
            return "x86_64"
        #elseif arch(arm64)
            return "arm64"
        #else
            return "unknown"
        #endif
    }

    /// The first "model name" of /proc/cpuinfo (Linux only).
    private static var cpuModel: String? {
        guard let cpuinfo = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return nil }
        for line in cpuinfo.split(separator: "\n") where line.hasPrefix("model name") {
            return line.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }
}
