import Foundation

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
