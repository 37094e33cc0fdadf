import HarnessSupport
import ToolArguments

/// The parsed command line.
struct StressOptions: Sendable {
    var scenarios: [ScenarioName] = [.migrateUnderLoad]
    var rows: Int?
    var writers: Int?
    var tasks: Int?
    var duration: Double?
    var kills: Int?
    var maxFaults: Int?
    var seed: UInt64 = UInt64.random(in: 1...999_999_999)
    var seedWasGiven = false
    var quick = false
    var jsonPath: String?
    var svgPath: String?
    var brokenWriter: BrokenWriterMode?
    var usesPool = false
    var online = false
    var devices: Int?
    var postgresURL: String?
    var syncBreak: SyncBreak?

    /// Reads the arguments after the program name the way every SerialDB tool does (see
    /// ``ArgumentReader``).
    ///
    /// - Throws: ``UsageError`` naming the bad argument.
    static func parse(_ reader: inout ArgumentReader) throws -> StressOptions {
        var options = StressOptions()
        var scenarioGiven = false
        while let argument = try reader.next() {
            switch argument {
            case .option("--rows"): options.rows = try reader.wholeNumber(atLeast: 0)
            case .option("--writers"): options.writers = try reader.wholeNumber(atLeast: 1)
            case .option("--tasks"): options.tasks = try reader.wholeNumber(atLeast: 0)
            case .option("--kills"): options.kills = try reader.wholeNumber(atLeast: 1)
            case .option("--max-faults"): options.maxFaults = try reader.wholeNumber(atLeast: 1)
            case .option("--devices"): options.devices = try reader.wholeNumber(atLeast: 3)
            case .option("--postgres"): options.postgresURL = try reader.value()
            case .option("--break"):
                let modes = SyncBreak.allCases.map(\.rawValue).joined(separator: ", ")
                let mode: SyncBreak = try reader.value("one of \(modes)") { SyncBreak(rawValue: $0) }
                options.syncBreak = mode
            case .option("--duration"):
                let seconds: Double = try reader.value("a positive number of seconds") { text in
                    Double(text).flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
                }
                options.duration = seconds
            case .option("--seed"):
                options.seed = try reader.value("a non-negative whole number") { UInt64($0) }
                options.seedWasGiven = true
            case .option("--quick"): options.quick = true
            case .option("--pool"): options.usesPool = true
            case .option("--online"): options.online = true
            case .option("--json"): options.jsonPath = try reader.value()
            case .option("--svg"): options.svgPath = try reader.value()
            case .option("--broken-writer"):
                let modes = BrokenWriterMode.allCases.map(\.rawValue).joined(separator: ", ")
                let mode: BrokenWriterMode = try reader.value("one of \(modes)") { BrokenWriterMode(rawValue: $0) }
                options.brokenWriter = mode
            case .operand(let word):
                guard !scenarioGiven else {
                    throw UsageError("unexpected argument `\(word)`: one scenario at a time")
                }
                scenarioGiven = true
                if word == "all" {
                    options.scenarios = ScenarioName.allCases
                } else if let scenario = ScenarioName(rawValue: word) {
                    options.scenarios = [scenario]
                } else {
                    let names = (ScenarioName.allCases.map(\.rawValue) + ["all"]).joined(separator: ", ")
                    throw UsageError("unknown scenario `\(word)` (scenarios: \(names))")
                }
            default: throw reader.unexpected(argument)
            }
        }
        if options.svgPath != nil && !options.scenarios.contains(.migrateUnderLoad)
            && !options.scenarios.contains(.sync)
        {
            throw UsageError("--svg draws the migrate-under-load or the sync scenario: run one of them (or all)")
        }
        return options
    }

    /// The settings one scenario runs with: explicit flags win, then --quick, then the defaults.
    func settings(for scenario: ScenarioName) -> ScenarioSettings {
        let defaultRows: Int
        switch scenario {
        case .migrateUnderLoad: defaultRows = quick ? 20_000 : 200_000
        case .crash: defaultRows = quick ? 10_000 : 50_000
        case .faults: defaultRows = quick ? 5_000 : 20_000
        case .sync: defaultRows = 0
        }
        let defaultDuration = scenario == .sync ? (quick ? 4.0 : 20.0) : (quick ? 2.0 : 10.0)
        return ScenarioSettings(
            rows: rows ?? defaultRows,
            writers: writers ?? (quick ? 4 : 8),
            tasks: tasks ?? 2,
            duration: duration ?? defaultDuration,
            kills: kills ?? (quick ? 20 : 50),
            maxFaults: maxFaults ?? (quick ? 24 : 40),
            seed: seed,
            brokenWriter: brokenWriter, usesPool: usesPool, online: online, devices: devices ?? (quick ? 6 : 8),
            postgresURL: postgresURL, syncBreak: syncBreak)
    }
}
