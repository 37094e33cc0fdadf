import Foundation

/// The outcome of one scenario: its invariants, its figures for people and for the JSON report,
/// and (migrate-under-load) the latency chart.
struct ScenarioReport: Sendable, Encodable {
    let scenario: ScenarioName
    var invariants: [Invariant] = []
    var figures: [String] = []
    var metrics = ScenarioMetrics()
    var chart: LatencyChart?

    /// Passed: it checked something and every check held.
    var ok: Bool { !invariants.isEmpty && invariants.allSatisfy(\.passed) }

    init(scenario: ScenarioName) {
        self.scenario = scenario
    }

    mutating func check(_ name: String, _ passed: Bool, _ detail: String = "") {
        invariants.append(Invariant(name, passed, detail))
    }

    /// The invariants every scenario shares, from the checker's findings.
    mutating func checkWrites(_ verification: Verification, errors: Int, what: String = "") {
        let lost = verification.lost.count
        check(
            "every acknowledged write is in the database\(what)", lost == 0,
            "\(verification.found) of \(verification.acknowledged) found, \(lost) lost")
        check("no row is stored twice", verification.duplicated.isEmpty, "\(verification.duplicated.count) duplicated")
        check(
            "no unacknowledged write is in the database", verification.unexpected.isEmpty,
            "\(verification.unexpected.count) unexpected")
        check(
            "every row holds the values of its last acknowledged write", verification.wrongValues.isEmpty,
            "\(verification.wrongValues.count) rows wrong")
        check(
            "every seed row survived the rebuild", verification.seedRowsMissing == 0,
            "\(verification.seedRowsMissing) missing")
        check("no write failed unexpectedly", errors == 0, "\(errors) errors")
    }

    private enum CodingKeys: String, CodingKey {
        case scenario, ok, invariants
    }

    /// The metrics flattened beside the verdict, so that `ok`, `lost`... are top-level keys.
    func encode(to encoder: any Encoder) throws {
        try metrics.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(scenario.rawValue, forKey: .scenario)
        try container.encode(ok, forKey: .ok)
        try container.encode(invariants, forKey: .invariants)
    }
}

/// One property a scenario promises, checked after it ran: the summary prints it as PASS or FAIL
/// and the JSON report lists it.
struct Invariant: Sendable, Codable {
    let name: String
    let passed: Bool
    let detail: String

    init(_ name: String, _ passed: Bool, _ detail: String = "") {
        self.name = name
        self.passed = passed
        self.detail = detail
    }
}

/// The whole JSON report: the seed to rerun with and every scenario's record.
struct RunRecord: Encodable {
    let seed: UInt64
    let quick: Bool
    let arguments: [String]
    let ok: Bool
    let scenarios: [ScenarioReport]

    /// Writes the report as JSON to `path`.
    func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        try encoder.encode(self).write(to: URL(fileURLWithPath: path))
    }
}
