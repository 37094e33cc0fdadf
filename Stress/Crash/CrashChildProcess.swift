import Foundation

/// A running crash child: the stress executable itself re-run with the hidden subcommand, its
/// standard output read by a thread into a ``ChildTranscript``.
final class CrashChildProcess {
    let transcript: ChildTranscript
    let startedAt: Double
    private let process = Process()

    init(executable: URL, arguments: [String], errorLog: String, clock: RunClock) throws {
        transcript = ChildTranscript(clock: clock)
        let output = Pipe()
        _ = FileManager.default.createFile(atPath: errorLog, contents: nil)
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: errorLog)
        startedAt = clock.now
        try process.run()
        // Our copy of the write end must go, or the reader would never see the end of the output.
        try? output.fileHandleForWriting.close()
        let reader = output.fileHandleForReading
        Thread { [transcript] in
            var pending = Data()
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                guard let lastNewline = pending.lastIndex(of: 10) else { continue }
                let complete = pending[pending.startIndex..<lastNewline]
                for line in String(decoding: complete, as: UTF8.self).split(separator: "\n") {
                    transcript.consume(line)
                }
                pending = Data(pending[(lastNewline + 1)...])
            }
            // A last line without newline was cut by the kill: it was not fully printed, so it
            // does not count.
            transcript.finish()
        }.start()
    }

    var isRunning: Bool { process.isRunning }

    /// SIGKILL: no handler, no flush, no atexit, like a crash or the OOM killer.
    func kill() {
        // A child that already ended may have been reaped: its pid could belong to another
        // process by now.
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
    }

    /// Waits for the child to end and for its last output; true when SIGKILL ended it.
    func waitForEnd() -> (killed: Bool, status: Int32) {
        process.waitUntilExit()
        _ = transcript.waitUntilEnded(timeout: 30)
        let killed = process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
        return (killed, process.terminationStatus)
    }

    /// The stress executable, to run children of.
    static func executable() throws -> URL {
        if let url = Bundle.main.executableURL, FileManager.default.isExecutableFile(atPath: url.path) { return url }
        let url = URL(
            fileURLWithPath: CommandLine.arguments[0],
            relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw StressError("cannot find the stress executable to run crash children (\(url.path))")
        }
        return url
    }
}
