import Foundation
import SerialDBTestSupport
import Testing

/// `-h` and `--help` print the usage on standard output and exit 0, for every tool.
@Suite struct HelpOptionTests {
    @Test(arguments: [
        ("serialdb", "usage: serialdb"), ("stress", "usage: stress"), ("bench", "usage: bench"),
    ])
    func helpPrintsTheUsageAndSucceeds(tool: String, usage: String) throws {
        for flag in ["--help", "-h"] {
            let run = try ToolRun(tool, [flag], seconds: 30)
            #expect(run.status == 0, "\(tool) \(flag): \(run.errors)")
            #expect(run.output.contains(usage), "\(tool) \(flag)")
            #expect(run.errors.isEmpty, "\(tool) \(flag)")
        }
    }

    @Test func serialdbHelpAfterACommandStillPrintsTheUsage() throws {
        let run = try ToolRun("serialdb", ["plan", "--help"], seconds: 30)
        #expect(run.status == 0)
        #expect(run.output.contains("usage: serialdb"))
    }
}
