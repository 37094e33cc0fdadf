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
    @Test func aChildChattyOnStandardErrorNeverBlocks() async throws {
        let run = try await ToolRun(
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

    /// Foundation's `Process` read past the end of its `/proc/self/fd` listing when this many
    /// descriptors were open (and the test process died of it); here the child closes them
    /// itself. The descriptors are opened without close-on-exec, so only that closing keeps
    /// them out of the child.
    @Test func aChildStartedWhileThousandsOfDescriptorsAreOpenInheritsNoneOfThem() async throws {
        let opened = (0..<2_000).map { _ in open("/dev/null", O_RDONLY) }
        defer { for descriptor in opened where descriptor >= 0 { close(descriptor) } }
        #expect(opened.allSatisfy { $0 >= 0 })
        for _ in 0..<20 {
            // `ls` lists its own descriptors: the three standard ones and the directory it reads.
            let run = try await ToolRun(executable: Self.shell, ["-c", "exec ls /proc/self/fd"], seconds: 60)
            #expect(run.status == 0, "\(run.errors)")
            let listed = Set(run.output.split(separator: "\n").compactMap { Int32($0) })
            #expect(listed.isDisjoint(with: opened), "inherited: \(listed.intersection(opened).sorted().prefix(10))")
            #expect(listed.isSuperset(of: [0, 1, 2]) && listed.count <= 4, "\(listed.sorted())")
        }
    }

    /// Dispatch's threads block signals; a child started from a thread that blocks SIGTERM
    /// still ends on SIGTERM, because it starts with an empty signal mask.
    @Test func aChildStartedFromAThreadThatBlocksSIGTERMStillEndsOnIt() throws {
        let started = Locked<Result<ChildProcess, any Error>?>(nil)
        let thread = Thread {
            var blocked = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, SIGTERM)
            pthread_sigmask(SIG_BLOCK, &blocked, nil)
            started.withLock {
                $0 = Result { try ChildProcess(executableURL: Self.shell, arguments: ["-c", "exec sleep 60"]) }
            }
        }
        thread.start()
        let deadline = Date().addingTimeInterval(60)
        while started.withLock({ $0 }) == nil && Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        let child = try #require(try started.withLock { $0 }?.get())
        child.signal(SIGTERM)
        #expect(try child.waitForExit(seconds: 30) == SIGTERM)
    }

    @Test func linesSentToStandardInputReachTheChild() throws {
        let child = try shell("read line; echo \"got $line\"")
        child.send("héllo")
        #expect(child.waitForLine("got héllo", seconds: 30))
        #expect(try child.waitForExit(seconds: 30) == 0)
    }
}
