import HarnessSupport

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
    var devices: Int?
    var postgresURL: String?
    var syncBreak: SyncBreak?
    var showsHelp = false

    /// Parses the arguments after the program name.
    ///
    /// - Throws: ``UsageError`` naming the bad argument.
    static func parse(_ arguments: [String]) throws -> StressOptions {
        var options = StressOptions()
        var remaining = arguments[...]
        var scenarioGiven = false
        while let flag = remaining.popFirst() {
            func value() throws -> String {
                guard let value = remaining.popFirst() else { throw UsageError("\(flag) needs a value") }
                return value
            }
            func count(minimum: Int) throws -> Int {
                let text = try value()
                guard let number = Int(text), number >= minimum else {
                    throw UsageError("\(flag) needs a whole number of at least \(minimum), not \"\(text)\"")
                }
                return number
            }
            switch flag {
            case "--rows": options.rows = try count(minimum: 0)
            case "--writers": options.writers = try count(minimum: 1)
            case "--tasks": options.tasks = try count(minimum: 0)
            case "--kills": options.kills = try count(minimum: 1)
            case "--max-faults": options.maxFaults = try count(minimum: 1)
            case "--devices": options.devices = try count(minimum: 3)
            case "--postgres": options.postgresURL = try value()
            case "--break":
                let text = try value()
                guard let mode = SyncBreak(rawValue: text) else {
                    let modes = SyncBreak.allCases.map(\.rawValue).joined(separator: ", ")
                    throw UsageError("--break needs one of \(modes), not \"\(text)\"")
                }
                options.syncBreak = mode
            case "--duration":
                let text = try value()
                guard let seconds = Double(text), seconds > 0, seconds.isFinite else {
                    throw UsageError("--duration needs a positive number of seconds, not \"\(text)\"")
                }
                options.duration = seconds
            case "--seed":
                let text = try value()
                guard let seed = UInt64(text) else {
                    throw UsageError("--seed needs a non-negative whole number, not \"\(text)\"")
                }
                options.seed = seed
                options.seedWasGiven = true
            case "--quick": options.quick = true
            case "--pool": options.usesPool = true
            case "--json": options.jsonPath = try value()
            case "--svg": options.svgPath = try value()
            case "--broken-writer":
                let text = try value()
                guard let mode = BrokenWriterMode(rawValue: text) else {
                    let modes = BrokenWriterMode.allCases.map(\.rawValue).joined(separator: ", ")
                    throw UsageError("--broken-writer needs one of \(modes), not \"\(text)\"")
                }
                options.brokenWriter = mode
            case "-h", "--help": options.showsHelp = true
            default:
                guard !flag.hasPrefix("-") else { throw UsageError("unknown option \(flag)") }
                guard !scenarioGiven else {
                    throw UsageError("unexpected argument \"\(flag)\": one scenario at a time")
                }
                scenarioGiven = true
                if flag == "all" {
                    options.scenarios = ScenarioName.allCases
                } else if let scenario = ScenarioName(rawValue: flag) {
                    options.scenarios = [scenario]
                } else {
                    let names = (ScenarioName.allCases.map(\.rawValue) + ["all"]).joined(separator: ", ")
                    throw UsageError("unknown scenario \"\(flag)\" (scenarios: \(names))")
                }
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
            brokenWriter: brokenWriter, usesPool: usesPool, devices: devices ?? (quick ? 6 : 8),
            postgresURL: postgresURL, syncBreak: syncBreak)
    }
}
