import Foundation
import HarnessSupport

/// The sync server child as the parent runs it: started, killed with SIGKILL at random moments
/// and started again on the same store (on a new port: devices follow ``url``).
final class SyncServerProcess: Sendable {
    private struct Running {
        var process: Process?
        var url: URL?
        var starts = 0
    }

    private let executable: URL
    private let arguments: [String]
    private let directory: ScratchDirectory
    private let state = Locked(Running())

    init(executable: URL, arguments: [String], directory: ScratchDirectory) {
        self.executable = executable
        self.arguments = arguments
        self.directory = directory
    }

    /// Where the server listens now; `nil` while it is down.
    var url: URL? { state.withLock { $0.url } }

    /// Starts the server and waits for its `listening on` line.
    ///
    /// - Throws: `StressError` when it does not start within a minute (its standard error is
    ///   in the message).
    func start() throws {
        let number = state.withLock { state in
            state.starts += 1
            return state.starts
        }
        let errorLog = directory.path("server-\(number).stderr")
        _ = FileManager.default.createFile(atPath: errorLog, contents: nil)
        let process = Process()
        let output = Pipe()
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: errorLog)
        try process.run()
        try? output.fileHandleForWriting.close()
        let firstLine = Locked<String?>(nil)
        let arrived = DispatchSemaphore(value: 0)
        let reader = output.fileHandleForReading
        Thread {
            var text = Data()
            while !text.contains(10) {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                text.append(chunk)
            }
            firstLine.withLock { $0 = String(decoding: text, as: UTF8.self) }
            arrived.signal()
        }.start()
        let answered = arrived.wait(timeout: .now() + 60) == .success
        let line = firstLine.withLock { $0 }?.split(separator: "\n").first.map(String.init) ?? ""
        guard answered, line.hasPrefix("listening on "), let url = URL(string: String(line.dropFirst(13))) else {
            if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            let errors = (try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? ""
            throw StressError("the sync server did not start: \(line) \(errors.prefix(500))")
        }
        state.withLock { state in
            state.process = process
            state.url = url
        }
    }

    /// SIGKILL, like a crash: no request in flight is finished, nothing is flushed. Waits for
    /// the process to end. Harmless when the server is down.
    func kill() {
        let process = state.withLock { state in
            defer {
                state.process = nil
                state.url = nil
            }
            return state.process
        }
        guard let process else { return }
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
