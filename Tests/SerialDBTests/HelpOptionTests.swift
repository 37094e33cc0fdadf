import Foundation
import SerialDBTestSupport
import Testing

/// Every executable reads its command line the same way (the ToolArguments target): `-h` and
/// `--help` print the usage on standard output and exit 0 wherever they are; a mistake exits 2
/// with one message on standard error that names it and points to `--help`; `--flag=value`
/// is `--flag value`.
@Suite struct HelpOptionTests {
    static let tools = ["serialdb", "serialdb-sync-server", "stress", "bench", "serialdb-test-child"]

    @Test(arguments: tools)
    func helpPrintsTheUsageAndSucceedsWhereverItIs(tool: String) async throws {
        for arguments in [["--help"], ["-h"], ["--no-such-flag", "-h"], ["x", "--help", "--rows=many"]] {
            let run = try await ToolRun(tool, arguments, seconds: 30)
            #expect(run.status == 0, "\(tool) \(arguments): \(run.errors)")
            #expect(run.output.contains("usage: \(tool)"), "\(tool) \(arguments)")
            #expect(run.errors.isEmpty, "\(tool) \(arguments)")
        }
    }

    @Test(arguments: tools)
    func anUnknownOptionIsNamedWithAPointerToHelpAndExitsTwo(tool: String) async throws {
        let run = try await ToolRun(tool, ["--no-such-flag"], seconds: 30)
        #expect(run.status == 2, "\(tool): \(run.errors)")
        #expect(run.errors == "\(tool): unknown option `--no-such-flag`\nRun `\(tool) --help` for the usage.\n")
        #expect(run.output.isEmpty, "\(tool)")
    }

    /// A value given with `=` is read like one in the next argument: the error quotes it.
    @Test(arguments: [
        ("serialdb-sync-server", ["--config=c.json", "--db=s.sqlite", "--port=99999"], "--port needs a port number"),
        ("stress", ["--rows=many"], "--rows needs a whole number of at least 0, not `many`"),
        ("bench", ["--rounds=0"], "--rounds needs a whole number of at least 1, not `0`"),
        ("stress", ["--quick=yes"], "--quick takes no value, not `yes`"),
        // Each converter that feeds an optional setting refuses what it cannot read.
        ("stress", ["--duration=-1"], "--duration needs a positive number of seconds, not `-1`"),
        ("stress", ["--break", "x"], "--break needs one of"),
        ("stress", ["--broken-writer=x"], "--broken-writer needs one of"),
        ("stress", ["--seed", "-4"], "--seed needs a non-negative whole number, not `-4`"),
        ("serialdb-sync-server", ["purge-tombstones", "--through=-1"], "--through needs a version"),
        ("bench", ["--json"], "--json needs a value"),
        ("serialdb-sync-server", ["--config", "--db", "s.sqlite"], "--config needs a value"),
        ("serialdb-test-child", ["migrate", "x"], "needs a command, a path and one more argument"),
        ("serialdb-test-child", ["migrate", "x", "soon"], "migrate needs a delay in seconds, not `soon`"),
    ])
    func aBadValueIsNamed(tool: String, arguments: [String], message: String) async throws {
        let run = try await ToolRun(tool, arguments, seconds: 30)
        #expect(run.status == 2, "\(tool) \(arguments): \(run.errors)")
        #expect(run.errors.hasPrefix("\(tool): \(message)"), "\(tool) \(arguments): \(run.errors)")
        #expect(run.errors.hasSuffix("Run `\(tool) --help` for the usage.\n"), "\(tool) \(arguments)")
    }

    @Test func serialdbTakesEitherSpellingOfAValue() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("tool.sqlite")
        _ = try await ToolRun("serialdb", ["migrate", path, "--schema=/dev/null"], seconds: 30)
        let schema = directory.path("schema.sql")
        try "CREATE TABLE t(id INTEGER PRIMARY KEY);".write(toFile: schema, atomically: true, encoding: .utf8)
        for arguments in [["plan", path, "--schema=\(schema)"], ["--schema", schema, "plan", path]] {
            let run = try await ToolRun("serialdb", arguments, seconds: 30)
            #expect(run.status == 0, "\(arguments): \(run.errors)")
            #expect(run.output.contains("CREATE TABLE t"), "\(arguments)")
        }
    }
}
