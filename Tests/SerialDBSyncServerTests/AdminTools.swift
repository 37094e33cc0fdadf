import Foundation
import PostgresHarness
import SerialDBSyncWire
import SerialDBTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A plain `GET` over real HTTP, as Prometheus, a load balancer or a browser would send it.
struct PlainAnswer: Sendable {
    let status: Int
    let contentType: String?
    let body: String

    /// GETs `path` (`/metrics`) from the server at `base`; the wait is bounded.
    static func get(_ path: String, from base: URL, method: String = "GET") async throws -> PlainAnswer {
        var request = URLRequest(url: URL(string: path, relativeTo: base)!)
        request.httpMethod = method
        request.timeoutInterval = 60
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as? HTTPURLResponse
        return PlainAnswer(
            status: http?.statusCode ?? 0, contentType: http?.value(forHTTPHeaderField: "Content-Type"),
            body: String(decoding: data, as: UTF8.self))
    }
}

/// A tool the test needs from the machine (Python's Prometheus parser, chromium): missing, the
/// test is skipped with the reason outside CI, and fails in CI, which installs them
/// (`.ci/install-packages`).
enum MachineTool {
    static func require(_ found: Bool, _ reason: String) throws {
        guard !found else { return }
        if ScratchPostgres.isCI { throw ToolFailure(message: "\(reason) (CI installs it: bash .ci/install-packages)") }
        try Test.cancel("skipped: \(reason)")
    }

    /// The first of `names` on the PATH.
    static func find(_ names: [String]) -> URL? {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        for name in names {
            for directory in directories {
                let url = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
                if FileManager.default.isExecutableFile(atPath: url.path) { return url }
            }
        }
        return nil
    }

    /// A tool is missing in CI, or failed.
    struct ToolFailure: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }
}

/// A Prometheus text exposition as the reference parser reads it: Python's `prometheus_client`
/// (`text_string_to_metric_families`), run as a child process on the text the server sent.
struct ParsedMetrics: Sendable {
    /// A sample: its full name (`serialdb_sync_requests_total`), labels and value.
    struct Sample: Sendable {
        let name: String
        let labels: [String: String]
        let value: Double
    }

    /// Each family's type, by the family name the parser gives (`_total` dropped from counters).
    let types: [String: String]
    let samples: [Sample]

    private static let script = """
        import json, sys
        try:
            from prometheus_client.parser import text_string_to_metric_families
        except ImportError as error:
            print("missing: " + str(error))
            sys.exit(3)
        text = open(sys.argv[1], encoding="utf-8").read()
        out = {"types": {}, "samples": []}
        for family in text_string_to_metric_families(text):
            out["types"][family.name] = family.type
            for sample in family.samples:
                out["samples"].append({"name": sample.name, "labels": sample.labels, "value": repr(sample.value)})
        print(json.dumps(out))
        """

    /// Parses `text`; a text the parser refuses throws with its message.
    static func parse(_ text: String) async throws -> ParsedMetrics {
        // Debian's interpreter first: the one `.ci/install-packages` installed the parser for
        // (a python3 of pyenv or a venv earlier on the PATH may lack it).
        let debian = URL(fileURLWithPath: "/usr/bin/python3")
        let python = FileManager.default.isExecutableFile(atPath: debian.path) ? debian : MachineTool.find(["python3"])
        try MachineTool.require(python != nil, "python3 is not installed")
        let directory = try TemporaryDirectory()
        let path = directory.path("metrics.txt")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let child = try ChildProcess(executableURL: python!, arguments: ["-c", script, path])
        let status = try await child.exitStatus(timeout: .seconds(60))
        try MachineTool.require(status != 3, "Python's prometheus_client is not installed (\(child.output))")
        guard status == 0 else {
            throw MachineTool.ToolFailure(message: "the Prometheus parser refused the text: \(child.errors)")
        }
        let json = try JSONValue.parse(Data(child.output.utf8))
        var types: [String: String] = [:]
        for (name, type) in json["types"]?.objectValue ?? [:] { types[name] = type.stringValue }
        let samples = (json["samples"]?.arrayValue ?? []).map { sample in
            Sample(
                name: sample["name"]?.stringValue ?? "",
                labels: (sample["labels"]?.objectValue ?? [:]).compactMapValues(\.stringValue),
                value: Double(sample["value"]?.stringValue ?? "") ?? .nan)
        }
        return ParsedMetrics(types: types, samples: samples)
    }

    /// The value of the one sample named `name` with exactly `labels`, `nil` when there is none.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    /// The samples named `name`.
    func samples(_ name: String) -> [Sample] {
        samples.filter { $0.name == name }
    }
}

/// Debian's headless chromium, driving a real browser engine over real HTTP.
enum HeadlessChromium {
    /// The chromium on the PATH; skips the test outside CI (fails in CI) when there is none.
    static func executable() throws -> URL {
        let found = MachineTool.find(["chromium", "chromium-browser"])
        try MachineTool.require(found != nil, "chromium is not installed (Debian package chromium)")
        return found!
    }

    /// Loads `url` and returns the DOM the browser built, serialised.
    static func dumpDOM(_ url: URL) async throws -> String {
        try await run(["--dump-dom", url.absoluteString]).output
    }

    /// Loads `url` in a `width`×`height` window and saves a PNG of it at `path`.
    static func screenshot(_ url: URL, to path: String, width: Int = 1100, height: Int = 900) async throws {
        _ = try await run([
            "--screenshot=\(path)", "--window-size=\(width),\(height)", "--hide-scrollbars", url.absoluteString,
        ])
    }

    private static func run(_ arguments: [String]) async throws -> ChildProcess {
        let profile = try TemporaryDirectory()
        let child = try ChildProcess(
            executableURL: try executable(),
            arguments: [
                "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=\(profile.path("p"))",
            ] + arguments)
        let status = try await child.exitStatus(timeout: .seconds(120))
        guard status == 0 else {
            throw MachineTool.ToolFailure(message: "chromium exited with \(status): \(child.errors.suffix(2000))")
        }
        return child
    }
}
