import Foundation
import SerialDBTestSupport
import Testing

/// The one child-process helper of the test suites, on `/bin/sh` children that misbehave on
/// purpose.
@Suite struct ChildProcessTests {
    private static let shell = URL(fileURLWithPath: "/bin/sh")

    private func shell(_ script: String) throws -> ChildProcess {
        try ChildProcess(executableURL: Self.shell, arguments: ["-c", script])
    }

    /// A child that fills its standard error pipe (64 KiB) many times over before it prints
    /// anything on standard output: reading one pipe to its end before the other would block
    /// both processes.
    @Test func aChildChattyOnStandardErrorNeverBlocks() throws {
        let run = try ToolRun(
            executable: Self.shell,
            ["-c", "head -c 1000000 /dev/zero | tr '\\0' e >&2; head -c 300000 /dev/zero | tr '\\0' o; echo"],
            seconds: 60)
        #expect(run.status == 0)
        #expect(run.errors.utf8.count == 1_000_000)
        #expect(run.errors.allSatisfy { $0 == "e" })
        #expect(run.output.utf8.count == 300_001)
    }

    @Test func aLineWithAPrefixIsWaitedForAndTheURLRead() async throws {
        let child = try shell(
            "echo starting; echo oops >&2; sleep 0.2; echo 'listening on http://127.0.0.1:4321'; exec sleep 60")
        #expect(try await child.listeningURL(timeout: .seconds(60)) == URL(string: "http://127.0.0.1:4321"))
        #expect(try await child.firstLine() == "starting")
        #expect(child.isRunning)
        #expect(try await child.stop(SIGTERM, timeout: .seconds(60)) == SIGTERM)
        #expect(!child.isRunning)
        #expect(child.errors == "oops\n")
    }

    @Test func aChildThatExitsWithoutTheLineIsReportedWithWhatItPrinted() async throws {
        let child = try shell("echo nope; echo broken >&2; exit 3")
        let error = await #expect(throws: ChildProcessError.self) {
            try await child.line(withPrefix: "listening on ", timeout: .seconds(60))
        }
        #expect(error?.message.contains("status 3") == true, "\(error.map(\.message) ?? "")")
        #expect(error?.message.contains("nope") == true)
        #expect(error?.message.contains("broken") == true)
        #expect(try await child.exitStatus(timeout: .seconds(60)) == 3)
    }

    @Test func everyWaitIsBoundedAndKillsAChildThatOverstays() async throws {
        let blocking = try shell("exec sleep 60")
        #expect(throws: ChildProcessError.self) { try blocking.waitForExit(seconds: 0.2) }
        #expect(!blocking.waitForLine("never", seconds: 0.1))
        let suspending = try shell("exec sleep 60")
        let error = await #expect(throws: ChildProcessError.self) {
            try await suspending.line(withPrefix: "never", timeout: .milliseconds(200))
        }
        #expect(error?.message.contains("was killed") == true)
        // Killed: both end at once instead of after a minute.
        #expect(try blocking.waitForExit(seconds: 30) == SIGKILL)
        #expect(try await suspending.exitStatus(timeout: .seconds(30)) == SIGKILL)
    }

    @Test func linesSentToStandardInputReachTheChild() throws {
        let child = try shell("read line; echo \"got $line\"")
        child.send("héllo")
        #expect(child.waitForLine("got héllo", seconds: 30))
        #expect(try child.waitForExit(seconds: 30) == 0)
    }
}
